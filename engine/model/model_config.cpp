// Config loading: every field is read through one checked accessor so errors name file and field.
#include "engine/model/model_config.h"

#include <algorithm>
#include <filesystem>

#include "engine/attention/registry.h"
#include "engine/attention/tempcache/tempcache_settings.h"
#include "engine/core/bounded_read.h"
#include "engine/core/error.h"
#include "engine/core/json_object_reader.h"
#include "engine/core/json_text.h"

namespace wc::model {
namespace {

constexpr int kMaxSide = 1 << 14;

FrameSize read_frame_size(ObjectReader& parent, const std::string& key) {
  ObjectReader reader(parent.get(key), parent.file(), parent.field_path(key));
  FrameSize size;
  size.height = reader.integer("height", 1, kMaxSide);
  size.width = reader.integer("width", 1, kMaxSide);
  reader.reject_unknown();
  return size;
}

// Where the file a config names at `field` is (Note [Config files]); `confined_to` is the
// checkpoint's folder for a checkpoint's config, else "".
std::string config_file_path(ObjectReader& reader, const std::string& field,
                             const std::string& name, const std::string& confined_to) {
  namespace fs = std::filesystem;
  const fs::path path(name);
  if (confined_to.empty()) {
    if (path.is_relative() && fs::is_regular_file(reader.file())) {
      return (fs::path(reader.file()).parent_path() / path).string();
    }
    return name;
  }
  const auto refuse = [&](const std::string& why) {
    reader.fail(reader.field_path(field),
                "a checkpoint's config may name only files inside its "
                "folder " +
                    confined_to + ": '" + name + "' " + why);
  };
  if (name.empty() || path.is_absolute() || path.has_root_name()) refuse("is not a relative name");
  const fs::path normal = path.lexically_normal();
  if (!normal.empty() && *normal.begin() == "..") refuse("leaves it");
  std::error_code error;
  const fs::path folder = fs::weakly_canonical(confined_to, error);
  const fs::path target = fs::weakly_canonical(fs::path(confined_to) / normal, error);
  if (error) refuse("cannot be resolved: " + error.message());
  const fs::path inside = target.lexically_relative(folder);
  if (inside.empty() || *inside.begin() == "..") refuse("leads outside it (a link)");
  return target.string();
}

// Note [Tile tokens]: the rest of "tokens" for a tile book `text` read from `path`: the book
// must fit the model (its tile side the patch, its frame the model's, its ids the vocab) and the
// sink's quarter is given ("first_quarter": [row, column]).
TokenConfig read_tile_tokens(ObjectReader& reader, const ModelConfig& config,
                             const std::string& path, const std::string& text, TokenConfig tokens) {
  TileBook book;
  try {
    book = parse_tile_book(text, path);
  } catch (const Error& error) {
    reader.fail(reader.field_path("codebook"), error.what());
  }
  if (book.tile != config.patch_h) {
    reader.fail(reader.field_path("codebook"), path + " holds " + std::to_string(book.tile) +
                                                   "-pixel tiles, the model's " + "patches are " +
                                                   std::to_string(config.patch_h));
  }
  if (book.frame_width != config.frame.width || book.frame_height != config.frame.height ||
      !config.resolutions.empty()) {
    reader.fail(reader.field_path("codebook"),
                path + " is for " + std::to_string(book.frame_height) + "x" +
                    std::to_string(book.frame_width) + " frames, the model's are " +
                    std::to_string(config.frame.height) + "x" + std::to_string(config.frame.width) +
                    " (and a tile model has no resolutions)");
  }
  if (book.vocab() != tokens.vocab) {
    reader.fail(reader.field_path("vocab"), std::to_string(tokens.vocab) + " differs from the " +
                                                std::to_string(book.vocab()) + " tokens of " +
                                                path);
  }
  if (!config.tile_quarters.empty()) {
    reader.fail("tile_quarters", "a tile model's phase is a token (Note [Tile tokens])");
  }
  if (tokens.tile_passes || tokens.drawn_quarters) {
    reader.fail(reader.field_path(tokens.tile_passes ? "tile_passes" : "drawn_quarters"),
                "is for a patch model: a tile model draws whole tiles");
  }
  if (tokens.first_quarter.empty()) {
    reader.fail(reader.field_path("first_quarter"),
                "required for a tile model: the tile quarter [row, column] its sink frame shows "
                "at the top left");
  }
  tokens.tile_book = std::make_shared<const TileBook>(std::move(book));
  return tokens;
}

// Note [Patch tokens]: {"codebook": "codebook.txt", "vocab": 8192, "passes": 3,
// "temperature": 1.0, "top_p": 1.0, "sure": 0.9, "tile_passes": false, "drawn_quarters": false}; a
// token model is one RGB frame per block whose patches are the codebook's, with nothing of the
// pixel models' prediction.
TokenConfig read_tokens(ObjectReader& parent, const ModelConfig& config,
                        const std::string& confined_to) {
  const std::string key = "tokens";
  ObjectReader reader(parent.get(key), parent.file(), key);
  TokenConfig tokens;
  tokens.file = reader.string("codebook");
  tokens.vocab = reader.integer("vocab", 1, kMaxCodebookEntries);
  if (reader.has("passes")) tokens.passes = reader.integer("passes", 1, TokenConfig::kMaxPasses);
  if (reader.has("temperature")) {
    tokens.temperature =
        reader.number("temperature", TokenConfig::kMinTemperature, TokenConfig::kMaxTemperature);
  }
  if (reader.has("top_p")) tokens.top_p = reader.number("top_p", TokenConfig::kMinTopP, 1.0);
  if (reader.has("sure")) tokens.sure = reader.number("sure", TokenConfig::kMinSure, 1.0);
  if (reader.has("tile_passes")) tokens.tile_passes = reader.boolean("tile_passes");
  if (reader.has("drawn_quarters")) tokens.drawn_quarters = reader.boolean("drawn_quarters");
  if (reader.has("first_quarter")) tokens.first_quarter = reader.integers("first_quarter", 2, 0, 1);
  reader.reject_unknown();
  if (tokens.drawn_quarters && config.tile_quarters.empty()) {
    reader.fail(key + ".drawn_quarters", "needs \"tile_quarters\" (Note [Drawn quarters])");
  }
  if (tokens.tile_passes && config.tile_quarters.empty()) {
    reader.fail(key + ".tile_passes", "needs \"tile_quarters\" (Note [Tile passes])");
  }
  if (config.channels != 3) reader.fail(key, "needs RGB frames (channels 3)");
  if (config.frames_per_block != 1) reader.fail(key, "needs one frame per block");
  if (config.patch_h != config.patch_w) reader.fail(key, "needs square patches");
  if (config.sampler.context_noise != 0.0) {
    reader.fail("sampler.context_noise", "must be 0 for a token model: it commits its tokens");
  }
  const std::filesystem::path path(config_file_path(reader, "codebook", tokens.file, confined_to));
  std::string text;
  try {
    text = read_bounded_file(path.string(), std::max(kMaxCodebookBytes, kMaxTileBookBytes),
                             "codebook");
  } catch (const Error& error) {
    reader.fail(reader.field_path("codebook"), error.what());
  }
  if (is_tile_book_text(text)) return read_tile_tokens(reader, config, path.string(), text, tokens);
  if (!tokens.first_quarter.empty()) {
    reader.fail(reader.field_path("first_quarter"), "is for a tile model (Note [Tile tokens])");
  }
  Codebook book;
  try {
    book = parse_codebook(text, path.string());
  } catch (const Error& error) {
    reader.fail(reader.field_path("codebook"), error.what());
  }
  if (book.patch != config.patch_h) {
    reader.fail(reader.field_path("codebook"),
                path.string() + " holds " + std::to_string(book.patch) + "-pixel patches, the " +
                    "model's are " + std::to_string(config.patch_h));
  }
  if (book.size() != tokens.vocab) {
    reader.fail(reader.field_path("vocab"), std::to_string(tokens.vocab) + " differs from the " +
                                                std::to_string(book.size()) + " entries of " +
                                                path.string());
  }
  tokens.codebook = std::make_shared<const Codebook>(std::move(book));
  return tokens;
}

// Each entry of "policies" names a known policy and holds settings it accepts for this model's
// shape (checked by building it on the CPU, where its stores are still empty).
void check_policies(const ModelConfig& config, ObjectReader& reader) {
  if (!config.policies.is_object()) reader.fail("policies", "expected an object");
  attention::ModelShape shape;
  shape.num_layers = config.layers;
  shape.num_heads = config.heads;
  shape.head_dim = config.head_dim;
  shape.geometry = {config.frames_per_block, config.grid_h(config.frame),
                    config.grid_w(config.frame)};
  for (const auto& [name, settings] : config.policies.items()) {
    const std::string field = "policies." + name;
    if (!settings.is_object()) reader.fail(field, "expected an object of the policy's settings");
    try {
      attention::create_policy(name, shape, settings);
    } catch (const Error& error) {
      reader.fail(field, error.what());
    }
  }
}

}  // namespace

void ModelConfig::check_frame_size(const FrameSize& size) const {
  if (tokens.tiles() && (size.width != tokens.tile_book->frame_width ||
                         size.height != tokens.tile_book->frame_height)) {
    throw Error(file.empty() ? name : file,
                "frame size " + std::to_string(size.height) + "x" + std::to_string(size.width) +
                    " is not the " + std::to_string(tokens.tile_book->frame_height) + "x" +
                    std::to_string(tokens.tile_book->frame_width) + " of its tile book");
  }
  if (size.height <= 0 || size.width <= 0 || size.height % patch_h != 0 ||
      size.width % patch_w != 0) {
    throw Error(file.empty() ? name : file,
                "frame size " + std::to_string(size.height) + "x" + std::to_string(size.width) +
                    " is not a whole number of " + std::to_string(patch_h) + "x" +
                    std::to_string(patch_w) + " patches");
  }
}

FrameSize ModelConfig::resolve(const std::string& resolution) const {
  if (resolution.empty() || resolution == "default") return frame;
  const auto it = resolutions.find(resolution);
  if (it == resolutions.end()) {
    std::string known = "default";
    for (const auto& [name, unused] : resolutions) known += ", " + name;
    throw Error(file.empty() ? name : file,
                "unknown resolution '" + resolution + "' (known: " + known + ")");
  }
  return it->second;
}

nlohmann::json ModelConfig::policy_settings(const std::string& name,
                                            const nlohmann::json& given) const {
  nlohmann::json settings = policies.contains(name) ? policies.at(name) : nlohmann::json::object();
  if (given.is_object()) settings.update(given);
  // Note [TempCache bounded by default]: the model's dense window is TempCache's default budget.
  if (name == "tempcache" && settings.is_object() && !attention::tempcache_limit_given(settings) &&
      policies.contains("dense") && policies.at("dense").is_object()) {
    const nlohmann::json window = policies.at("dense").value("window", nlohmann::json());
    if (window.is_number_integer() && window.get<int64_t>() > 0) settings["budget_frames"] = window;
  }
  return settings;
}

namespace {

// parse_model_config and parse_checkpoint_config; `confined_to` as config_file_path takes it.
ModelConfig parse_config(const nlohmann::json& json, const std::string& file,
                         const std::string& confined_to) {
  ObjectReader reader(json, file, "");
  ModelConfig config;
  config.file = file;
  config.name = reader.string("name");
  if (reader.has("description")) config.description = reader.string("description");
  config.channels = reader.integer("channels", 1, 1024);
  config.frame = read_frame_size(reader, "frame");
  {
    ObjectReader resolutions(reader.get("resolutions"), file, "resolutions");
    for (const auto& [name, unused] : reader.get("resolutions").items()) {
      const std::vector<int> hw = resolutions.integers(name, 2, 1, kMaxSide);
      config.resolutions[name] = FrameSize{hw[0], hw[1]};
    }
    resolutions.reject_unknown();
  }
  config.video_frames_per_frame = reader.integer("video_frames_per_frame", 1, 64);
  if (!reader.get("autoencoder").is_null()) {
    // Pixel-space and random-latent models only for now: a learned autoencoder is later work.
    reader.fail("autoencoder", "only null (pixel space / no decoder) is supported");
  }
  const std::vector<int> patch = reader.integers("patch", 3, 1, 64);
  if (patch[0] != 1) reader.fail("patch[0]", "temporal patch size must be 1");
  config.patch_t = patch[0];
  config.patch_h = patch[1];
  config.patch_w = patch[2];
  config.frames_per_block = reader.integer("frames_per_block", 1, 64);
  config.hidden = reader.integer("hidden", 1, 65536);
  config.layers = reader.integer("layers", 1, 1024);
  config.heads = reader.integer("heads", 1, 1024);
  config.head_dim = reader.integer("head_dim", 6, 1024);
  config.mlp = reader.integer("mlp", 1, 1 << 20);
  config.num_actions = reader.integer("num_actions", 1, 4096);
  config.freq_dim = reader.integer("freq_dim", 2, 65536);
  config.norm_eps = reader.number("norm_eps", 0.0, 1.0);
  config.rope_theta = reader.number("rope_theta", 1.0, 1e12);
  if (reader.has("tile_quarters")) config.tile_quarters = reader.integers("tile_quarters", 2, 0, 1);
  if (reader.has("cross_attention") && !reader.get("cross_attention").is_null()) {
    ObjectReader cross(reader.get("cross_attention"), file, "cross_attention");
    config.cross_attention.tokens = cross.integer("tokens", 1, CrossAttentionConfig::kMaxTokens);
    config.cross_attention.width = cross.integer("width", 1, CrossAttentionConfig::kMaxWidth);
    cross.reject_unknown();
  }
  {
    ObjectReader sampler(reader.get("sampler"), file, "sampler");
    config.sampler.steps = sampler.integer("steps", 1, 64);
    config.sampler.shift = sampler.number("shift", 1e-3, 1e3);
    config.sampler.context_noise = sampler.number("context_noise", 0.0, 0.999);
    if (sampler.has("action_guidance")) {
      config.sampler.action_guidance = sampler.number("action_guidance", 0.0, 20.0);
    }
    if (sampler.has("action_guidance_steps")) {
      config.sampler.action_guidance_steps = sampler.integer("action_guidance_steps", 0, 64);
    }
    if (sampler.has("dropped_action")) {
      config.sampler.dropped_action = sampler.integer("dropped_action", 0, 4095);
    }
    sampler.reject_unknown();
  }
  if (reader.has("prediction")) {
    // Absent: the plain velocity, which every config before the skip meant.
    ObjectReader prediction(reader.get("prediction"), file, "prediction");
    const std::string reference = prediction.string("reference");
    if (reference != "previous_frame") {
      prediction.fail(prediction.field_path("reference"),
                      "must be \"previous_frame\", got \"" + reference + "\"");
    }
    config.prediction.previous_frame_skip = true;
    config.prediction.spread = prediction.number("spread", 1e-3, 10.0);
    prediction.reject_unknown();
  }
  if (reader.has("tokens")) {
    if (reader.has("prediction")) {
      reader.fail("prediction",
                  "does not apply to a token model (\"tokens\"): its frames are codebook "
                  "patches");
    }
    config.tokens = read_tokens(reader, config, confined_to);
  } else if (!config.tile_quarters.empty()) {
    reader.fail("tile_quarters",
                "is for a token model (\"tokens\"): a tile's quarters are its tokens");
  }
  if (reader.has("policies")) config.policies = reader.get("policies");
  if (reader.has("default_policy")) {
    config.default_policy = reader.string("default_policy");
    const std::vector<std::string> known = attention::policy_names();
    if (std::find(known.begin(), known.end(), config.default_policy) == known.end()) {
      std::string list;
      for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
      reader.fail("default_policy",
                  "unknown policy '" + config.default_policy + "' (known: " + list + ")");
    }
  }
  reader.reject_unknown();

  if (config.hidden != config.heads * config.head_dim) {
    reader.fail("hidden", "must equal heads * head_dim (" + std::to_string(config.heads) + " * " +
                              std::to_string(config.head_dim) + ")");
  }
  if (config.head_dim % 2 != 0) reader.fail("head_dim", "must be even (RoPE rotates pairs)");
  if (config.sampler.dropped_action >= config.num_actions) {
    reader.fail("sampler.dropped_action",
                "must be below num_actions (" + std::to_string(config.num_actions) + ")");
  }
  if (config.sampler.action_guidance != 1.0 && config.sampler.dropped_action < 0) {
    reader.fail("sampler.dropped_action", "is required when sampler.action_guidance is not 1");
  }
  if (config.freq_dim % 2 != 0) reader.fail("freq_dim", "must be even");
  if (config.frame.height % config.patch_h != 0 || config.frame.width % config.patch_w != 0) {
    reader.fail("frame", "must be a whole number of patches");
  }
  for (const auto& [name, size] : config.resolutions) {
    if (size.height % config.patch_h != 0 || size.width % config.patch_w != 0) {
      reader.fail("resolutions." + name, "must be a whole number of patches");
    }
  }
  check_policies(config, reader);
  return config;
}

}  // namespace

ModelConfig parse_model_config(const nlohmann::json& json, const std::string& file) {
  return parse_config(json, file, "");
}

ModelConfig parse_checkpoint_config(const nlohmann::json& json, const std::string& where,
                                    const std::string& checkpoint) {
  namespace fs = std::filesystem;
  std::string folder =
      fs::is_directory(checkpoint) ? checkpoint : fs::path(checkpoint).parent_path().string();
  if (folder.empty()) folder = ".";
  return parse_config(json, where, folder);
}

ModelConfig load_model_config(const std::string& path) {
  const std::string text = read_bounded_file(path, kMaxModelConfigBytes, "model config");
  return parse_model_config(parse_json(text, path), path);
}

nlohmann::json model_config_to_json(const ModelConfig& config) {
  nlohmann::json resolutions = nlohmann::json::object();
  for (const auto& [name, size] : config.resolutions) resolutions[name] = {size.height, size.width};
  nlohmann::json sampler = {{"steps", config.sampler.steps},
                            {"shift", config.sampler.shift},
                            {"context_noise", config.sampler.context_noise}};
  // Written only when set, so configs without guidance read back unchanged.
  if (config.sampler.action_guidance != 1.0) {
    sampler["action_guidance"] = config.sampler.action_guidance;
    sampler["action_guidance_steps"] = config.sampler.action_guidance_steps;
  }
  if (config.sampler.dropped_action >= 0) sampler["dropped_action"] = config.sampler.dropped_action;
  nlohmann::json out = {
      {"name", config.name},
      {"description", config.description},
      {"channels", config.channels},
      {"frame", {{"height", config.frame.height}, {"width", config.frame.width}}},
      {"resolutions", resolutions},
      {"video_frames_per_frame", config.video_frames_per_frame},
      {"autoencoder", nullptr},
      {"patch", {config.patch_t, config.patch_h, config.patch_w}},
      {"frames_per_block", config.frames_per_block},
      {"hidden", config.hidden},
      {"layers", config.layers},
      {"heads", config.heads},
      {"head_dim", config.head_dim},
      {"mlp", config.mlp},
      {"num_actions", config.num_actions},
      {"freq_dim", config.freq_dim},
      {"norm_eps", config.norm_eps},
      {"rope_theta", config.rope_theta},
      {"sampler", sampler},
  };
  if (!config.tile_quarters.empty()) out["tile_quarters"] = config.tile_quarters;
  if (config.cross_attention.active()) {
    out["cross_attention"] = {{"tokens", config.cross_attention.tokens},
                              {"width", config.cross_attention.width}};
  }
  if (config.prediction.previous_frame_skip) {
    out["prediction"] = {{"reference", "previous_frame"}, {"spread", config.prediction.spread}};
  }
  if (config.tokens.active()) {
    out["tokens"] = {{"codebook", config.tokens.file},
                     {"vocab", config.tokens.vocab},
                     {"passes", config.tokens.passes},
                     {"temperature", config.tokens.temperature},
                     {"top_p", config.tokens.top_p},
                     {"sure", config.tokens.sure},
                     {"tile_passes", config.tokens.tile_passes},
                     {"drawn_quarters", config.tokens.drawn_quarters}};
    if (config.tokens.tiles()) out["tokens"]["first_quarter"] = config.tokens.first_quarter;
  }
  if (!config.policies.empty()) out["policies"] = config.policies;
  if (config.default_policy != "dense") out["default_policy"] = config.default_policy;
  return out;
}

std::vector<TensorSpec> model_tensor_specs(const ModelConfig& c, Dtype dtype) {
  std::vector<TensorSpec> specs;
  const auto add = [&](std::string name, Shape shape) {
    specs.push_back(TensorSpec{std::move(name), std::move(shape), dtype});
  };
  const auto linear = [&](const std::string& name, int64_t out, int64_t in) {
    add(name + ".weight", {out, in});
    add(name + ".bias", {out});
  };
  const int64_t d = c.hidden;
  if (c.tokens.active()) {
    add("token_embed.weight", {int64_t{c.tokens.vocab} + 1, d});  // the last row: the mask
  } else {
    linear("patch_embed", d, c.patch_dim());
  }
  if (!c.tile_quarters.empty()) add("tile_quarters.weight", {4, d});  // row: quarter row·2 + column
  linear("time_embed.fc1", d, c.freq_dim);
  linear("time_embed.fc2", d, d);
  add("action_embed.weight", {c.num_actions, d});
  linear("time_proj", 6 * d, d);
  const bool cross = c.cross_attention.active();
  if (cross) {
    linear("text_embedding.fc1", d, c.cross_attention.width);
    linear("text_embedding.fc2", d, d);
  }
  for (int i = 0; i < c.layers; ++i) {
    const std::string block = "blocks." + std::to_string(i);
    add(block + ".modulation", {1, 6, d});
    for (const char* attention : {"attn", "cross"}) {
      if (std::string(attention) == "cross") {
        if (!cross) continue;
        add(block + ".norm3.weight", {d});
        add(block + ".norm3.bias", {d});
      }
      const std::string a = block + "." + attention;
      linear(a + ".q", d, d);
      linear(a + ".k", d, d);
      linear(a + ".v", d, d);
      linear(a + ".o", d, d);
      add(a + ".norm_q.weight", {d});
      add(a + ".norm_k.weight", {d});
    }
    linear(block + ".mlp.fc1", c.mlp, d);
    linear(block + ".mlp.fc2", d, c.mlp);
  }
  add("head.modulation", {1, 2, d});
  linear("head.proj", c.output_patch_dim(), d);
  return specs;
}

}  // namespace wc::model
