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
  const fs::path dir = fs::temp_directory_path() /
                       ("wc_token_" + name + "_" + std::to_string(::getpid()));
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
  EXPECT_EQ(model_config_to_json(parse_model_config(model_config_to_json(c), c.file)), model_config_to_json(c));

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

}  // namespace
}  // namespace wc::model
