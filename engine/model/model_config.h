// The world model's architecture and sampler settings, loaded from JSON (assets/configs/*.json)
// with validation, and the tensor list a checkpoint of that architecture must hold.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/safetensors.h"
#include "engine/model/codebook.h"
#include "engine/model/tile_book.h"

namespace wc::model {

// A frame size in model space: pixels for a pixel-space model, latent cells otherwise.
struct FrameSize {
  int height = 0;
  int width = 0;
};

struct SamplerConfig {
  int steps = 2;               // denoising steps per block (1..4 are the intended range)
  double shift = 1.0;          // timestep shift: t' = s·t / (1 + (s − 1)·t); 1 = uniform
  double context_noise = 0.0;  // noise level of the committing clean pass (0 = truly clean)
  // Note [Action guidance]: the velocity of the first `action_guidance_steps` denoising steps
  // (0: every step) is v_dropped + w·(v_key − v_dropped), where v_dropped is the model's
  // velocity under `dropped_action` (the token action dropout trained). w = 1 is off.
  double action_guidance = 1.0;
  int action_guidance_steps = 0;
  int dropped_action = -1;  // required (in [0, num_actions)) when action_guidance != 1
};

// What the network's output means. Plain: the velocity ε − x0 itself. With the previous-frame
// skip (Note [Previous-frame skip] in prediction.h) the output corrects an estimate of x0 made
// from the noisy frame and the frame before the block, so standing still is the zero output.
struct PredictionConfig {
  bool previous_frame_skip = false;
  // The spread s of x0 around the previous frame that the estimate assumes (pixel units, [-1, 1]
  // frames): how far a typical frame departs from its predecessor.
  double spread = 0.5;
};

// A token model (Note [Patch tokens], engine/model/tokenizer.h): frames are codebook tokens, one
// per patch, and a frame is drawn by Note [Masked sampling] (engine/rollout/token_sampler.h).
// {"codebook": "codebook.txt", "vocab": 8192, "passes": 3, "temperature": 1.0, "top_p": 1.0,
// "sure": 0.9, "tile_passes": false, "drawn_quarters": false};
// the codebook is read when the config is (its file relative to the config's folder).
struct TokenConfig {
  std::string file;  // the codebook as the config names it
  int vocab = 0;     // the codebook's entries; 0: a pixel model
  int passes = 3;    // unmasking passes per frame
  double temperature = 1.0;
  double top_p = 1.0;  // 1: draw from the whole distribution
  double sure = 1.0;   // places this sure are shown in any pass; 1: none (MaskGIT's)
  // Note [Tile passes]: no two unsure quarters of one tile drawn in one pass but the last (needs
  // "tile_quarters").
  bool tile_passes = false;
  // Note [Drawn quarters]: passes after the first see the tile quarters their shown places
  // scrolled to (a model trained so; needs "tile_quarters").
  bool drawn_quarters = false;
  std::shared_ptr<const Codebook> codebook;
  // Note [Tile tokens]: a "codebook" that is a tile book makes a tile model: its tokens are whole
  // tiles and layers (null for a patch model), and the sink frame shows the tile quarter
  // `first_quarter` (row, column) at its top left, where the game starts its camera.
  std::shared_ptr<const TileBook> tile_book;
  std::vector<int> first_quarter;
  bool active() const { return vocab > 0; }
  bool tiles() const { return tile_book != nullptr; }
  static constexpr int kMaxPasses = 16;
  static constexpr double kMinSure = 1e-6;
  static constexpr double kMinTemperature = 1e-3, kMaxTemperature = 100.0;
  static constexpr double kMinTopP = 1e-6;
  // Passes, temperature, top_p and sure may change while playing (Note [Play settings]).
};

// Optional cross-attention to a prompt, as Wan 2.1 conditions on text: {"tokens": 512, "width":
// 4096}. Each block attends to the prompt after its self-attention (a LayerNorm with affine
// weights, RMS-normed q and k, no RoPE, no gate); the prompt's embeddings [L, width] enter
// through a two-layer GELU MLP to the model's width ("text_embedding"). Absent: no
// cross-attention and none of its weights.
struct CrossAttentionConfig {
  int tokens = 0;  // prompt tokens L; 0: no cross-attention
  int width = 0;   // the prompt embeddings' width
  bool active() const { return tokens > 0; }
  static constexpr int kMaxTokens = 65536;
  static constexpr int kMaxWidth = 65536;
};

// Note [Model policy settings]: a model may carry its own settings for named attention policies
// ("policies": {"headcast": {"theta_dummy": 0.98}}), measured for it and written in its model
// card. They sit under whatever the caller gives (the CLI's --policy-settings, eval's --settings,
// the plugin's JSON, the panel), so a user can still set any key; absent keys fall back to the
// policy's own defaults. Validated at load by building each policy for this model's shape.
// "default_policy" names the policy `worldcast play` and `worldcast eval` run when none is asked
// for (dense when absent): the one whose numbers the model card reports as the default.
// A model config is a few KB; larger is not one (Note [Bounded reads]).
inline constexpr int64_t kMaxModelConfigBytes = int64_t{4} << 20;

struct ModelConfig {
  std::string name;
  std::string description;
  std::string file;  // where it was loaded from ("" when built in code), for error messages

  int channels = 3;                              // input/output channels of a frame in model space
  FrameSize frame;                               // default frame size in model space
  std::map<std::string, FrameSize> resolutions;  // named alternatives ("480p" -> latent 60x104)
  int video_frames_per_frame = 1;  // video frames one model frame decodes to (Wan VAE: 4)
  int patch_t = 1;
  int patch_h = 8;
  int patch_w = 8;
  int frames_per_block = 1;
  int hidden = 256;
  int layers = 8;
  int heads = 4;
  int head_dim = 64;
  int mlp = 1024;
  int num_actions = 5;
  int freq_dim = 256;
  double norm_eps = 1e-6;
  double rope_theta = 10000.0;
  // Note [Tile quarters]: the quarter (row, column) of its tile that the sink frame's top-left
  // token shows; empty: the model has no quarter vectors ("tile_quarters.weight", [4, hidden]).
  std::vector<int> tile_quarters;
  SamplerConfig sampler;
  PredictionConfig prediction;
  TokenConfig tokens;
  CrossAttentionConfig cross_attention;
  nlohmann::json policies = nlohmann::json::object();  // name -> settings object
  std::string default_policy = "dense";                // Note [Model policy settings]

  // The settings of policy `name`: this model's settings for it with `given`'s keys over them.
  nlohmann::json policy_settings(const std::string& name, const nlohmann::json& given) const;

  int patch_dim() const { return channels * patch_t * patch_h * patch_w; }
  // What the output head puts out per token: a patch of the frame's channels, or a token model's
  // logits over its codebook.
  int output_patch_dim() const { return tokens.active() ? tokens.vocab : patch_dim(); }
  // A tile model's grid is its window of tiles and the overlay row (Note [Tile tokens]).
  int grid_h(const FrameSize& size) const {
    return size.height / patch_h + (tokens.tiles() ? 2 : 0);
  }
  int grid_w(const FrameSize& size) const {
    return size.width / patch_w + (tokens.tiles() ? 1 : 0);
  }
  // Throws wc::Error naming the file when `size` is not a whole number of patches, or for a tile
  // model not its book's frame.
  void check_frame_size(const FrameSize& size) const;
  // The frame size called `resolution` ("" = the default frame); throws naming the known ones.
  FrameSize resolve(const std::string& resolution) const;
};

// Note [Config files]: a config names files of its own ("tokens.codebook").
// A config file's relative names resolve beside it. A config kept in a checkpoint's metadata
// comes with the checkpoint, so it may name only files inside the checkpoint's folder: relative
// names that stay inside it once "." and ".." and symbolic links are resolved; anything else is
// refused naming the field, before a byte of it is read.

// Parses and validates a config. Unknown keys, missing fields, wrong types and inconsistent
// values throw wc::Error "<file>: field '<path>': <what>".
ModelConfig parse_model_config(const nlohmann::json& json, const std::string& file);
// The same for the config kept in the metadata of the checkpoint `checkpoint` (a folder, or a
// file whose folder is the checkpoint's), `where` naming it in errors: its file names stay
// inside the checkpoint's folder.
ModelConfig parse_checkpoint_config(const nlohmann::json& json, const std::string& where,
                                    const std::string& checkpoint);
ModelConfig load_model_config(const std::string& path);
nlohmann::json model_config_to_json(const ModelConfig& config);

// Every parameter of the DiT for `config`, in registration order, with the names the modules
// register (see dit.h) and the checkpoint holds: the spec a checkpoint is checked against.
std::vector<TensorSpec> model_tensor_specs(const ModelConfig& config, Dtype dtype);

}  // namespace wc::model
