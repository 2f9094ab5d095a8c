// Checkpoints: sharded writes and their index, opening files and folders, index validation, and
// checking a checkpoint against a model's tensor specs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/safetensors.h"
#include "tests/core/safetensors_test_util.h"

namespace wc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::make_tensor;
using testing::OwnedTensor;

// Ten F32 tensors of 1000 elements (4000 bytes each).
std::vector<OwnedTensor> ten_tensors() {
  std::vector<OwnedTensor> tensors;
  for (int i = 0; i < 10; ++i) {
    tensors.push_back(make_tensor("layer" + std::to_string(i) + ".w", Dtype::kF32, {10, 100}, i));
  }
  return tensors;
}

json read_json(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

void write_json(const fs::path& path, const json& value) {
  std::ofstream(path) << value.dump();
}

std::string open_error(const fs::path& path) {
  try {
    Checkpoint::open(path.string());
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(SafetensorsCheckpoint, ShardedRoundTrip) {
  const fs::path dir = testing::fresh_directory();
  const auto tensors = ten_tensors();
  const auto names = write_sharded_checkpoint(dir.string(), testing::views_of(tensors),
                                              {{"format", "pt"}}, {10000, "model"});
  ASSERT_EQ(names.size(), 5u);  // two 4000-byte tensors fit under 10000 bytes
  EXPECT_EQ(names[0], "model-00001-of-00005.safetensors");
  EXPECT_EQ(names[4], "model-00005-of-00005.safetensors");

  const json index = read_json(dir / "model.safetensors.index.json");
  EXPECT_EQ(index["metadata"]["total_size"], 40000);
  EXPECT_EQ(index["metadata"]["format"], "pt");
  EXPECT_EQ(index["weight_map"]["layer0.w"], "model-00001-of-00005.safetensors");
  EXPECT_EQ(index["weight_map"]["layer9.w"], "model-00005-of-00005.safetensors");

  for (const fs::path& path : {dir, dir / "model.safetensors.index.json"}) {
    const Checkpoint checkpoint = Checkpoint::open(path.string());
    EXPECT_EQ(checkpoint.files().size(), 5u);
    EXPECT_EQ(checkpoint.tensors().size(), 10u);
    EXPECT_EQ(checkpoint.total_bytes(), 40000u);
    EXPECT_EQ(checkpoint.metadata().at("total_size"), "40000");
    for (const OwnedTensor& expected : tensors) {
      const TensorView& got = checkpoint.at(expected.view.name);
      EXPECT_EQ(got.shape, expected.view.shape);
      EXPECT_EQ(std::memcmp(got.data, expected.bytes.data(), got.byte_size), 0);
    }
    EXPECT_EQ(checkpoint.find("absent"), nullptr);
    EXPECT_THROW(checkpoint.at("absent"), Error);
  }
  // A single shard also opens as a checkpoint of its own.
  EXPECT_EQ(Checkpoint::open((dir / names[2]).string()).tensors().size(), 2u);
}

TEST(SafetensorsCheckpoint, LargeTensorGetsItsOwnShardAndStaleShardsGo) {
  const fs::path dir = testing::fresh_directory();
  std::vector<OwnedTensor> tensors;
  tensors.push_back(make_tensor("a", Dtype::kU8, {10}));
  tensors.push_back(make_tensor("b", Dtype::kU8, {100}));
  tensors.push_back(make_tensor("c", Dtype::kU8, {10}));
  EXPECT_EQ(write_sharded_checkpoint(dir.string(), testing::views_of(tensors), {}, {50}).size(),
            3u);
  // Rewriting in one shard removes the three-shard files, which would otherwise linger.
  EXPECT_EQ(write_sharded_checkpoint(dir.string(), testing::views_of(tensors)).size(), 1u);
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename().string().find("of-00003"), std::string::npos);
  }
  EXPECT_EQ(files, 2u);  // one shard + the index
  EXPECT_EQ(Checkpoint::open(dir.string()).tensors().size(), 3u);
}

TEST(SafetensorsCheckpoint, FolderWithoutIndex) {
  const fs::path dir = testing::fresh_directory();
  EXPECT_NE(open_error(dir).find("no .safetensors file"), std::string::npos);
  auto tensor = make_tensor("w", Dtype::kF16, {4});
  write_safetensors((dir / "weights.safetensors").string(), {tensor.view}, {{"k", "v"}});
  const Checkpoint checkpoint = Checkpoint::open(dir.string());
  EXPECT_EQ(checkpoint.tensors().size(), 1u);
  EXPECT_EQ(checkpoint.metadata().at("k"), "v");
  EXPECT_TRUE(checkpoint.index_path().empty());
  write_safetensors((dir / "other.safetensors").string(), {tensor.view});
  EXPECT_NE(open_error(dir).find("2 .safetensors files but no index"), std::string::npos);
  EXPECT_NE(open_error(dir / "missing").find("no such file"), std::string::npos);
}

// A three-shard checkpoint whose index each test then damages.
class SafetensorsIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::fresh_directory();
    tensors_ = ten_tensors();
    shards_ = write_sharded_checkpoint(dir_.string(), testing::views_of(tensors_), {}, {12000});
    ASSERT_EQ(shards_.size(), 4u);
    index_path_ = dir_ / "model.safetensors.index.json";
    index_ = read_json(index_path_);
  }
  std::string error_after_edit() {
    write_json(index_path_, index_);
    return open_error(dir_);
  }

  fs::path dir_;
  fs::path index_path_;
  std::vector<OwnedTensor> tensors_;
  std::vector<std::string> shards_;
  json index_;
};

TEST_F(SafetensorsIndex, MissingShard) {
  fs::remove(dir_ / shards_[1]);
  const std::string message = open_error(dir_);
  EXPECT_NE(message.find("model.safetensors.index.json: shard '" + shards_[1] + "'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("is missing"), std::string::npos) << message;
}

TEST_F(SafetensorsIndex, ListedTensorAbsentFromShard) {
  index_["weight_map"]["ghost.w"] = shards_[0];
  const std::string message = error_after_edit();
  EXPECT_NE(message.find("tensor 'ghost.w' is listed in '" + shards_[0] + "' but absent"),
            std::string::npos)
      << message;
}

TEST_F(SafetensorsIndex, StoredTensorNotListed) {
  index_["weight_map"].erase("layer3.w");
  const std::string message = error_after_edit();
  EXPECT_NE(message.find("tensor 'layer3.w' is stored in"), std::string::npos) << message;
  EXPECT_NE(message.find("not listed"), std::string::npos) << message;
}

TEST_F(SafetensorsIndex, TensorListedInTheWrongShard) {
  index_["weight_map"]["layer0.w"] = shards_[3];
  EXPECT_NE(error_after_edit().find("tensor 'layer0.w' is listed in"), std::string::npos);
}

TEST_F(SafetensorsIndex, SameTensorInTwoShards) {
  // Rewrite the last shard so it also holds layer0.w, which the first shard holds.
  write_safetensors((dir_ / shards_[3]).string(), {tensors_[0].view, tensors_[9].view});
  const std::string message = error_after_edit();
  EXPECT_NE(message.find("tensor 'layer0.w' is stored in both"), std::string::npos) << message;
}

TEST_F(SafetensorsIndex, ShardOutsideTheFolder) {
  index_["weight_map"]["layer0.w"] = "../elsewhere.safetensors";
  EXPECT_NE(error_after_edit().find("tensor 'layer0.w': shard is not a file name"),
            std::string::npos);
}

TEST_F(SafetensorsIndex, MalformedIndexes) {
  index_["extra"] = 1;
  EXPECT_NE(error_after_edit().find("unknown key 'extra'"), std::string::npos);
  index_.erase("extra");
  index_["metadata"]["total_size"] = -5;
  EXPECT_NE(error_after_edit().find("total_size"), std::string::npos);
  index_["metadata"]["total_size"] = 40000;
  index_["weight_map"] = json::array();
  EXPECT_NE(error_after_edit().find("'weight_map'"), std::string::npos);
  std::ofstream(index_path_) << R"({"weight_map": {"a": "x", "a": "y"}})";
  EXPECT_NE(open_error(dir_).find("'a' appears twice"), std::string::npos);
  std::ofstream(index_path_) << "{not json";
  EXPECT_NE(open_error(dir_).find("model.safetensors.index.json: index is not valid JSON"),
            std::string::npos);
}

TEST_F(SafetensorsIndex, DamagedShardNamesItself) {
  const fs::path shard = dir_ / shards_[2];
  fs::resize_file(shard, fs::file_size(shard) - 3);
  const std::string message = open_error(dir_);
  EXPECT_NE(message.find(shard.string() + ": tensor '"), std::string::npos) << message;
}

TEST(SafetensorsSpec, ReportsMissingExtraShapeAndDtype) {
  const fs::path dir = testing::fresh_directory();
  std::vector<OwnedTensor> tensors;
  tensors.push_back(make_tensor("embed", Dtype::kF32, {4, 8}));
  tensors.push_back(make_tensor("norm", Dtype::kF16, {8}));
  tensors.push_back(make_tensor("head", Dtype::kBF16, {8, 2}));
  tensors.push_back(make_tensor("stray", Dtype::kF32, {1}));
  const std::string path = (dir / "m.safetensors").string();
  write_safetensors(path, testing::views_of(tensors));
  const Checkpoint checkpoint = Checkpoint::open(path);

  const std::vector<TensorSpec> good = {{"embed", {4, 8}, Dtype::kF32},
                                        {"norm", {8}, Dtype::kF16},
                                        {"head", {8, 2}, Dtype::kBF16},
                                        {"stray", {1}, Dtype::kF32}};
  EXPECT_TRUE(find_spec_mismatches(checkpoint, good).empty());
  EXPECT_NO_THROW(check_spec(checkpoint, good));

  const std::vector<TensorSpec> expected = {{"embed", {4, 8}, Dtype::kF32},
                                            {"norm", {8}, Dtype::kF32},
                                            {"head", {2, 8}, Dtype::kBF16},
                                            {"blocks.0.qkv", {8, 24}, Dtype::kBF16}};
  const auto problems = find_spec_mismatches(checkpoint, expected);
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_EQ(problems[0], path + ": tensor 'norm': dtype F16, expected F32");
  EXPECT_EQ(problems[1], path + ": tensor 'head': shape [8, 2], expected [2, 8]");
  EXPECT_EQ(problems[2],
            path + ": tensor 'blocks.0.qkv': missing (the model expects BF16 [8, 24])");
  EXPECT_EQ(problems[3], path + ": tensor 'stray': unknown to the model (not in its spec)");
  try {
    check_spec(checkpoint, expected);
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), problems[0] + " (and 3 more problems)");
  }
}

TEST(SafetensorsFinite, ChecksEveryTensorOfACheckpoint) {
  const fs::path dir = testing::fresh_directory();
  auto good = testing::make_values<float>("a", Dtype::kF32, {1.f, 2.f});
  auto bad = testing::make_values<uint16_t>("b", Dtype::kBF16, {0x3f80, 0x3f80, 0x7f80});
  write_sharded_checkpoint(dir.string(), {good.view, bad.view}, {}, {8});
  const Checkpoint checkpoint = Checkpoint::open(dir.string());
  try {
    check_finite(checkpoint);
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), (dir / "model-00002-of-00002.safetensors").string() +
                                             ": tensor 'b': infinity at index 2 (element [2])");
  }
}

}  // namespace
}  // namespace wc
