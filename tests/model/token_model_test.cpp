// The token model's pieces (Note [Patch tokens]): the codebook file, the tokenizer against a
// brute-force nearest-patch loop, the config's "tokens" section and the DiT's token path, whose
// masked training sequence must equal play's cached forward.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "engine/core/error.h"
#include "engine/model/codebook.h"
#include "engine/model/dit.h"
#include "engine/model/model_config.h"
#include "engine/model/play_settings.h"
#include "engine/model/tokenizer.h"
#include "engine/model/weights.h"
#include "tests/model/model_test_util.h"

namespace wc::model {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A random codebook of `entries` distinct patches of side `patch` over `colours` random colours.
Codebook random_codebook(uint32_t seed, int entries, int patch = 4, int colours = 6) {
  std::mt19937 random(seed);
  Codebook book;
  book.patch = patch;
  while (static_cast<int>(book.colours.size()) < colours) {
    const std::array<uint8_t, 3> c{static_cast<uint8_t>(random()), static_cast<uint8_t>(random()),
                                   static_cast<uint8_t>(random())};
    if (std::find(book.colours.begin(), book.colours.end(), c) == book.colours.end())
      book.colours.push_back(c);
  }
  while (book.size() < entries) {
    std::vector<uint8_t> e(static_cast<size_t>(patch * patch));
    for (uint8_t& v : e) v = static_cast<uint8_t>(random() % colours);
    if (std::find(book.entries.begin(), book.entries.end(), e) == book.entries.end())
      book.entries.push_back(e);
  }
  return book;
}

std::string parse_error(const std::string& text) {
  try {
    parse_codebook(text, "book.txt");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("wc_token_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(Codebook, ReadsBackAsItselfThroughTextAndFile) {
  const Codebook book = random_codebook(std::random_device{}(), 40);
  const Codebook text = parse_codebook(codebook_text(book), "text");
  EXPECT_EQ(text.patch, book.patch);
  EXPECT_EQ(text.colours, book.colours);
  EXPECT_EQ(text.entries, book.entries);
  const fs::path dir = temp_dir("roundtrip");
  write_codebook((dir / "book.txt").string(), book);
  const Codebook file = read_codebook((dir / "book.txt").string());
  EXPECT_EQ(file.entries, book.entries);
  fs::remove_all(dir);
}

TEST(Codebook, RefusesMalformedTextNamingTheLine) {
  const std::string good = codebook_text(random_codebook(7, 3, 2, 3));
  EXPECT_THAT(parse_error("nonsense\n"), HasSubstr("line 1"));
  EXPECT_THAT(parse_error(good.substr(0, good.size() - 6)), HasSubstr("book.txt"));
  std::string repeated = good;
  const size_t last = repeated.rfind('\n', repeated.size() - 2);
  const std::string last_line = repeated.substr(last + 1);
  const size_t third = repeated.rfind('\n', last - 1);
  repeated.replace(third + 1, last - third, last_line);
  EXPECT_THAT(parse_error(repeated), HasSubstr("repeated"));
  std::string outside = good;
  outside[outside.size() - 2] = 'z';  // the 26th colour of a 3-colour book
  EXPECT_THAT(parse_error(outside), HasSubstr("not one of the 3 colours"));
  std::string header = good;
  header.replace(header.find("entries 3"), 9, "entries 4");
  EXPECT_THAT(parse_error(header), HasSubstr("truncated"));
  std::string extra = good + "abca\n";
  EXPECT_THAT(parse_error(extra), HasSubstr("more entries"));
  EXPECT_THAT(parse_error("worldcast codebook 1\npatch 0 colours 3 entries 3\n"),
              HasSubstr("patch must be in"));
}

TEST(Codebook, RefusesFilesThatAreNotRegularOrTooLarge) {
  const fs::path dir = temp_dir("files");
  try {
    read_codebook((dir / "missing.txt").string());
    ADD_FAILURE() << "a missing file was read";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing.txt"));
  }
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    read_codebook(fifo.string());  // must not block
    ADD_FAILURE() << "a FIFO was read";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("regular file"));
  }
  try {
    read_codebook(dir.string());
    ADD_FAILURE() << "a folder was read";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("regular file"));
  }
  fs::remove_all(dir);
}

// Frames [B, F, 3, H, W] in [-1, 1] whose patches are the given entries.
at::Tensor frames_of(const Codebook& book, const at::Tensor& tokens) {
  const int64_t b = tokens.size(0), f = tokens.size(1), h = tokens.size(2), w = tokens.size(3);
  const int p = book.patch;
  at::Tensor out = at::empty({b, f, 3, h * p, w * p}, at::kFloat);
  auto o = out.accessor<float, 5>();
  auto t = tokens.accessor<int64_t, 4>();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < f; ++j)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const std::vector<uint8_t> rgb = book.rgb(static_cast<int>(t[i][j][y][x]));
          for (int py = 0; py < p; ++py)
            for (int px = 0; px < p; ++px)
              for (int c = 0; c < 3; ++c)
                o[i][j][c][y * p + py][x * p + px] =
                    rgb[static_cast<size_t>((py * p + px) * 3 + c)] / 127.5f - 1.0f;
        }
  return out;
}

TEST(Tokenizer, EncodesCodebookPatchesExactlyAndDecodesThemBack) {
  const Codebook book = random_codebook(std::random_device{}(), 50);
  const Tokenizer tokenizer(book, at::kCPU);
  const at::Tensor tokens = at::randint(0, book.size(), {2, 3, 5, 4}, at::kLong);
  const at::Tensor frames = frames_of(book, tokens);
  at::Tensor misses;
  EXPECT_TRUE(tokenizer.encode(frames, &misses).equal(tokens));
  EXPECT_EQ(misses.item<int64_t>(), 0);
  const at::Tensor decoded = tokenizer.decode(tokens, at::kFloat);
  EXPECT_TRUE(((decoded + 1) * 127.5).round().equal(((frames + 1) * 127.5).round()));
  // bf16 frames carry bytes exactly too: the encode of a decoded bf16 frame is the same tokens.
  EXPECT_TRUE(tokenizer.encode(tokenizer.decode(tokens, at::kBFloat16)).equal(tokens));
}

TEST(Tokenizer, EncodesOtherPatchesToTheNearestEntryAndCountsThemAsMisses) {
  const Codebook book = random_codebook(std::random_device{}(), 30);
  const Tokenizer tokenizer(book, at::kCPU);
  const at::Tensor bytes = at::randint(0, 256, {1, 2, 3, 8, 12}, at::kFloat);
  const at::Tensor frames = bytes / 127.5 - 1.0;
  at::Tensor misses;
  const at::Tensor tokens = tokenizer.encode(frames, &misses);
  // The reference: every patch against every entry, squared byte distance, first minimum.
  int64_t expected_misses = 0;
  const int p = book.patch;
  for (int f = 0; f < 2; ++f)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x) {
        int64_t best = -1, best_distance = 0;
        for (int e = 0; e < book.size(); ++e) {
          const std::vector<uint8_t> rgb = book.rgb(e);
          int64_t d = 0;
          for (int py = 0; py < p; ++py)
            for (int px = 0; px < p; ++px)
              for (int c = 0; c < 3; ++c) {
                const int64_t a =
                    static_cast<int64_t>(bytes[0][f][c][y * p + py][x * p + px].item<float>());
                const int64_t diff = a - rgb[static_cast<size_t>((py * p + px) * 3 + c)];
                d += diff * diff;
              }
          if (best < 0 || d < best_distance) {
            best = e;
            best_distance = d;
          }
        }
        EXPECT_EQ(tokens[0][f][y][x].item<int64_t>(), best);
        expected_misses += best_distance > 0;
      }
  EXPECT_EQ(misses.item<int64_t>(), expected_misses);
}

// A token config over `book` written into `dir`.
ModelConfig token_config(const fs::path& dir, const Codebook& book, nlohmann::json* out = nullptr) {
  write_codebook((dir / "book.txt").string(), book);
  ModelConfig c = testing::tiny_config();
  c.sampler.steps = 1;
  nlohmann::json json = model_config_to_json(c);
  json["tokens"] = {{"codebook", "book.txt"}, {"vocab", book.size()}, {"passes", 2}};
  if (out) *out = json;
  std::ofstream((dir / "config.json").string()) << json.dump(2);
  return load_model_config((dir / "config.json").string());
}

std::string config_error(const fs::path& dir, const nlohmann::json& json) {
  std::ofstream((dir / "bad.json").string()) << json.dump(2);
  try {
    load_model_config((dir / "bad.json").string());
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TokenConfig, ReadsTheCodebookAndRefusesOneThatDoesNotMatch) {
  const fs::path dir = temp_dir("config");
  nlohmann::json json;
  const Codebook book = random_codebook(3, 20);
  const ModelConfig c = token_config(dir, book, &json);
  ASSERT_TRUE(c.tokens.active());
  EXPECT_EQ(c.tokens.vocab, 20);
  EXPECT_EQ(c.tokens.passes, 2);
  EXPECT_EQ(c.output_patch_dim(), 20);
  EXPECT_EQ(c.tokens.codebook->entries, book.entries);
  // The config written back reads as the same.
  EXPECT_EQ(model_config_to_json(parse_model_config(model_config_to_json(c), c.file)),
            model_config_to_json(c));

  EXPECT_EQ(c.tokens.sure, 1.0);  // MaskGIT's schedule unless the config says
  nlohmann::json sure = json;
  sure["tokens"]["sure"] = 0.9;
  EXPECT_EQ(load_model_config((dir / "config.json").string()).tokens.sure, 1.0);
  std::ofstream((dir / "sure.json").string()) << sure.dump(2);
  const ModelConfig with_sure = load_model_config((dir / "sure.json").string());
  EXPECT_EQ(with_sure.tokens.sure, 0.9);
  EXPECT_EQ(model_config_to_json(with_sure)["tokens"]["sure"], 0.9);
  for (double bad : {0.0, 1.5}) {
    sure["tokens"]["sure"] = bad;
    EXPECT_THAT(config_error(dir, sure), HasSubstr("tokens.sure")) << bad;
  }

  nlohmann::json vocab = json;
  vocab["tokens"]["vocab"] = 21;
  EXPECT_THAT(config_error(dir, vocab), HasSubstr("field 'tokens.vocab'"));
  EXPECT_THAT(config_error(dir, vocab), HasSubstr("book.txt"));
  nlohmann::json patch = json;
  patch["patch"] = {1, 8, 8};
  patch["frame"] = {{"height", 16}, {"width", 16}};
  patch["resolutions"] = nlohmann::json::object();
  EXPECT_THAT(config_error(dir, patch), HasSubstr("4-pixel patches"));
  nlohmann::json missing = json;
  missing["tokens"]["codebook"] = "nowhere.txt";
  EXPECT_THAT(config_error(dir, missing), HasSubstr("nowhere.txt"));
  nlohmann::json pixel = json;
  pixel["prediction"] = {{"reference", "previous_frame"}, {"spread", 0.5}};
  EXPECT_THAT(config_error(dir, pixel), HasSubstr("field 'prediction'"));
  // A truncated codebook is named before any frame is drawn.
  std::string text = codebook_text(book);
  std::ofstream((dir / "book.txt").string()) << text.substr(0, text.size() / 2);
  EXPECT_THAT(config_error(dir, json), HasSubstr("book.txt: line"));
  fs::remove_all(dir);
}

TEST(TokenModel, SpecsAndOutputsAreTheCodebooksLogits) {
  const fs::path dir = temp_dir("model");
  const ModelConfig c = token_config(dir, random_codebook(5, 24));
  bool has_embed = false, has_patch = false;
  for (const TensorSpec& s : model_tensor_specs(c, Dtype::kF32)) {
    if (s.name == "token_embed.weight") {
      has_embed = true;
      EXPECT_EQ(s.shape, (Shape{25, c.hidden}));
    }
    has_patch |= s.name.rfind("patch_embed", 0) == 0;
    if (s.name == "head.proj.weight") {
      EXPECT_EQ(s.shape, (Shape{24, c.hidden}));
    }
  }
  EXPECT_TRUE(has_embed);
  EXPECT_FALSE(has_patch);
  CausalDiT model(c);
  init_random_weights(model, 3);
  FrameBatch batch{at::randint(0, 25, {2, 3, 4, 4}, at::kLong), at::rand({2, 3}),
                   at::randint(0, 5, {2, 3}, at::kLong), 0, at::Tensor()};
  const at::Tensor logits = model->forward_train(batch);
  EXPECT_EQ(logits.sizes(), (at::IntArrayRef{2, 3, 16, 24}));
  batch.head_first_frame = 2;
  EXPECT_TRUE(at::allclose(model->forward_train(batch), logits.slice(1, 2), 1e-5, 1e-5));
  // Saved and loaded with the token tensors.
  save_weights(model, (dir / "weights").string());
  CausalDiT loaded(c);
  load_weights(loaded, (dir / "weights").string());
  EXPECT_TRUE(loaded->forward_train(batch).equal(model->forward_train(batch)));
  // Weights of another vocabulary are refused by name before anything is copied.
  const fs::path other_dir = dir / "other";
  fs::create_directories(other_dir);
  CausalDiT other(token_config(other_dir, random_codebook(6, 30)));
  try {
    load_weights(other, (dir / "weights").string());
    ADD_FAILURE() << "weights of 24 tokens loaded into a model of 30";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("token_embed.weight"));
  }
  fs::remove_all(dir);
}

// Note [Tile quarters]: the place-to-quarter table against a loop, and the shift of a quarter.
TEST(TileQuarters, EachPlaceShowsItsQuarterAndAShiftMovesIt) {
  for (auto [h, w] : {std::pair<int, int>{4, 4}, {3, 5}, {5, 2}}) {
    const at::Tensor rows = tile_quarter_rows(h, w, at::kCPU);
    ASSERT_EQ(rows.sizes(), (at::IntArrayRef{4, h * w}));
    for (int q = 0; q < 4; ++q) {
      for (int r = 0; r < h; ++r) {
        for (int col = 0; col < w; ++col) {
          const int expected = ((r + q / 2) % 2) * 2 + (col + q % 2) % 2;
          EXPECT_EQ(rows[q][r * w + col].item<int64_t>(), expected) << q << ":" << r << "," << col;
        }
      }
    }
  }
  const at::Tensor all = at::arange(4, at::kLong);
  for (const auto& s : kStepShifts) {
    const at::Tensor moved = shifted_quarter(all, s[0], s[1]);
    for (int q = 0; q < 4; ++q) {
      const int row = ((q / 2 + s[0]) % 2 + 2) % 2, column = ((q % 2 + s[1]) % 2 + 2) % 2;
      EXPECT_EQ(moved[q].item<int64_t>(), row * 2 + column) << q << " by " << s[0] << "," << s[1];
    }
  }
}

// Note [Quarter tracking]: a view walked over a world of random tokens, standing still at times;
// the quarters followed from the first frame's are the camera's, frame by frame.
TEST(TileQuarters, FollowedQuartersAreTheCamerasOnAWalk) {
  std::mt19937 random(41);
  const int world = 64, h = 6, w = 7, frames = 40;
  const at::Tensor ground = at::randint(0, 1000, {world, world}, at::kLong);
  int y = 20, x = 23;
  std::vector<at::Tensor> views;
  std::vector<int64_t> truth;
  for (int f = 0; f < frames; ++f) {
    if (f > 0) {
      const auto& s = kStepShifts[random() % 5];
      y += s[0];
      x += s[1];
    }
    views.push_back(ground.slice(0, y, y + h).slice(1, x, x + w));
    truth.push_back((y % 2) * 2 + x % 2);
  }
  const at::Tensor tokens = at::stack(views).unsqueeze(0);  // [1, F, h, w]
  const at::Tensor first = at::full({1}, truth[0], at::kLong);
  const at::Tensor followed = follow_quarters(first, tokens.select(1, 0), tokens.slice(1, 1));
  ASSERT_EQ(followed.sizes(), (at::IntArrayRef{1, frames - 1}));
  for (int f = 1; f < frames; ++f) EXPECT_EQ(followed[0][f - 1].item<int64_t>(), truth[f]) << f;
}

TEST(TileQuarters, AreAVectorPerQuarterAddedToKnownFramesAndStartAtZero) {
  const fs::path dir = temp_dir("quarters");
  nlohmann::json json;
  const ModelConfig plain = token_config(dir, random_codebook(7, 24), &json);
  EXPECT_TRUE(plain.tile_quarters.empty());
  EXPECT_FALSE(model_config_to_json(plain).contains("tile_quarters"));
  json["tile_quarters"] = {1, 0};
  std::ofstream((dir / "quarters.json").string()) << json.dump(2);
  const ModelConfig c = load_model_config((dir / "quarters.json").string());
  ASSERT_EQ(c.tile_quarters, (std::vector<int>{1, 0}));
  EXPECT_EQ(model_config_to_json(c)["tile_quarters"], nlohmann::json({1, 0}));
  EXPECT_EQ(parse_model_config(model_config_to_json(c), c.file).tile_quarters, c.tile_quarters);
  for (const nlohmann::json& bad :
       {nlohmann::json({2, 0}), nlohmann::json({1}), nlohmann::json(1)}) {
    nlohmann::json broken = json;
    broken["tile_quarters"] = bad;
    EXPECT_THAT(config_error(dir, broken), HasSubstr("tile_quarters")) << bad;
  }
  nlohmann::json pixel = json;
  pixel.erase("tokens");
  EXPECT_THAT(config_error(dir, pixel), HasSubstr("field 'tile_quarters'"));
  // Note [Drawn quarters]: the drawn frame's quarters need the quarters.
  EXPECT_FALSE(c.tokens.drawn_quarters);
  nlohmann::json drawn = json;
  drawn["tokens"]["drawn_quarters"] = true;
  std::ofstream((dir / "drawn.json").string()) << drawn.dump(2);
  const ModelConfig with_drawn = load_model_config((dir / "drawn.json").string());
  EXPECT_TRUE(with_drawn.tokens.drawn_quarters);
  EXPECT_TRUE(parse_model_config(model_config_to_json(with_drawn), c.file).tokens.drawn_quarters);
  drawn.erase("tile_quarters");
  EXPECT_THAT(config_error(dir, drawn), HasSubstr("tokens.drawn_quarters"));
  // Note [Tile passes]: the grid of the drawn frame comes from the quarters too.
  EXPECT_FALSE(c.tokens.tile_passes);
  nlohmann::json tiled = json;
  tiled["tokens"]["tile_passes"] = true;
  std::ofstream((dir / "tiled.json").string()) << tiled.dump(2);
  const ModelConfig with_tiles = load_model_config((dir / "tiled.json").string());
  EXPECT_TRUE(with_tiles.tokens.tile_passes);
  EXPECT_TRUE(parse_model_config(model_config_to_json(with_tiles), c.file).tokens.tile_passes);
  tiled["tokens"]["tile_passes"] = 1;
  EXPECT_THAT(config_error(dir, tiled), HasSubstr("tokens.tile_passes"));
  tiled["tokens"]["tile_passes"] = true;
  tiled.erase("tile_quarters");
  EXPECT_THAT(config_error(dir, tiled), HasSubstr("tokens.tile_passes"));
  int found = 0;
  for (const TensorSpec& s : model_tensor_specs(c, Dtype::kF32)) {
    if (s.name != "tile_quarters.weight") continue;
    ++found;
    EXPECT_EQ(s.shape, (Shape{4, c.hidden}));
  }
  EXPECT_EQ(found, 1);
  for (const TensorSpec& s : model_tensor_specs(plain, Dtype::kF32)) {
    EXPECT_NE(s.name, "tile_quarters.weight");
  }

  // With the vectors at zero the model is the one without them, whatever the quarters.
  CausalDiT without(plain);
  init_random_weights(without, 11);
  CausalDiT with(c);
  {
    at::NoGradGuard no_grad;
    const auto source = without->named_parameters(true);
    for (auto& item : with->named_parameters(true)) {
      if (item.key() == "tile_quarters.weight") {
        item.value().zero_();
      } else {
        item.value().copy_(source[item.key()]);
      }
    }
  }
  FrameBatch batch{at::randint(0, 25, {2, 3, 4, 4}, at::kLong), at::rand({2, 3}),
                   at::randint(0, 5, {2, 3}, at::kLong), 0, at::Tensor()};
  const at::Tensor reference = without->forward_train(batch);
  batch.quarters = at::randint(-1, 4, {2, 3}, at::kLong);
  EXPECT_TRUE(with->forward_train(batch).equal(reference));

  // Learned vectors: a frame marked unknown (−1) gets none, as with no quarters given; a known
  // frame gets its places' rows, which is the embedding of every token moved by that row.
  {
    at::NoGradGuard no_grad;
    with->tile_quarters->weight.copy_(at::randn({4, c.hidden}));
  }
  batch.quarters = at::full({2, 3}, -1, at::kLong);
  EXPECT_TRUE(at::allclose(with->forward_train(batch), reference, 1e-5, 1e-5));
  batch.quarters = at::tensor({2, 0, 3, 1, -1, 0}, at::kLong).view({2, 3});
  const at::Tensor known = with->forward_train(batch);
  EXPECT_FALSE(at::allclose(known, reference, 1e-3, 1e-3));
  // One vector in all four rows, every frame known: the same as adding it, at the table's
  // scale, to every token's embedding.
  const at::Tensor v = at::randn({c.hidden});
  CausalDiT moved(plain);
  CausalDiT uniform(c);
  {
    at::NoGradGuard no_grad;
    const auto source = without->named_parameters(true);
    for (auto& item : moved->named_parameters(true)) item.value().copy_(source[item.key()]);
    moved->token_embed->weight.add_(v * kTileQuarterScale);
    for (auto& item : uniform->named_parameters(true)) {
      if (item.key() == "tile_quarters.weight") {
        item.value().copy_(v.expand({4, c.hidden}));
      } else {
        item.value().copy_(source[item.key()]);
      }
    }
  }
  FrameBatch all_known = batch;
  all_known.quarters = at::randint(0, 4, {2, 3}, at::kLong);
  EXPECT_TRUE(
      at::allclose(uniform->forward_train(all_known), moved->forward_train(all_known), 1e-5, 1e-5));
  // Distinct rows: which quarter a frame shows changes what the model predicts.
  FrameBatch other = batch;
  other.quarters = at::tensor({3, 0, 3, 1, -1, 0}, at::kLong).view({2, 3});
  EXPECT_FALSE(at::allclose(with->forward_train(other), known, 1e-3, 1e-3));

  // Saved and loaded with the table.
  save_weights(with, (dir / "weights").string());
  CausalDiT loaded(c);
  load_weights(loaded, (dir / "weights").string());
  EXPECT_TRUE(loaded->tile_quarters->weight.equal(with->tile_quarters->weight));
  EXPECT_TRUE(loaded->forward_train(batch).equal(known));
  fs::remove_all(dir);
}

// Note [Play settings]: each play setting is the config's "tokens" key of its name, its field
// reads back what was written without touching the others, and the panel's range is valid.
TEST(PlaySettings, EachIsItsConfigKeyAndSetsItsFieldAlone) {
  const ModelConfig c = testing::tiny_token_config();
  const nlohmann::json values = play_values(c.tokens);
  const nlohmann::json written = model_config_to_json(c).at("tokens");
  ASSERT_EQ(values.size(), play_settings().size());
  for (const PlaySetting& s : play_settings()) {
    SCOPED_TRACE(s.key);
    EXPECT_EQ(values.at(s.key), written.at(s.key));
    EXPECT_LE(s.min, s.slider_min);
    EXPECT_LT(s.slider_min, s.slider_max);
    EXPECT_LE(s.slider_max, s.max);
    EXPECT_NE(play_setting_problem(s, s.max + 1.0), "");
    EXPECT_NE(play_setting_problem(s, "1"), "");
    for (const double v : {s.slider_min, s.slider_max}) {
      const nlohmann::json value =
          s.integer ? nlohmann::json(static_cast<int64_t>(v)) : nlohmann::json(v);
      EXPECT_EQ(play_setting_problem(s, value), "");
      nlohmann::json expected = values;
      expected[s.key] = value;
      EXPECT_EQ(play_values(with_play_settings(c.tokens, {{s.key, value}}, "test")), expected);
    }
  }
  EXPECT_EQ(play_values(testing::tiny_config().tokens), nlohmann::json::object());
}

}  // namespace
}  // namespace wc::model
