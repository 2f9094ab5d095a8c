// Safetensors reader/writer: round trips, layout guarantees, and rejection of hostile files.
#include "engine/core/safetensors.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "engine/core/error.h"
#include "tests/core/safetensors_test_util.h"

namespace wc {
namespace {

namespace fs = std::filesystem;
using testing::make_tensor;
using testing::make_values;
using testing::parse_error;
using testing::raw_file;

constexpr Dtype kAllDtypes[] = {Dtype::kF64, Dtype::kF32, Dtype::kF16, Dtype::kBF16, Dtype::kI64,
                                Dtype::kI32, Dtype::kI16, Dtype::kI8,  Dtype::kU8,   Dtype::kBool};

TEST(SafetensorsDtype, NamesAndSizesRoundTrip) {
  for (const Dtype dtype : kAllDtypes) {
    EXPECT_EQ(dtype_from_name(dtype_name(dtype)), dtype);
  }
  EXPECT_EQ(dtype_size(Dtype::kBF16), 2u);
  EXPECT_EQ(dtype_size(Dtype::kI64), 8u);
  EXPECT_FALSE(dtype_from_name("F8_E4M3"));
  EXPECT_FALSE(dtype_from_name("f32"));
}

TEST(SafetensorsRoundTrip, EveryDtypeThroughMemoryAndDisk) {
  std::vector<testing::OwnedTensor> tensors;
  int seed = 0;
  for (const Dtype dtype : kAllDtypes) {
    tensors.push_back(make_tensor("t." + std::string(dtype_name(dtype)), dtype, {2, 3}, seed++));
  }
  const Metadata metadata = {{"format", "pt"}, {"note", "round trip"}};
  const std::vector<uint8_t> bytes = serialize_safetensors(testing::views_of(tensors), metadata);
  const SafetensorsContents parsed = parse_safetensors(bytes.data(), bytes.size(), "mem");
  EXPECT_EQ(parsed.metadata, metadata);
  ASSERT_EQ(parsed.tensors.size(), tensors.size());

  const fs::path path = testing::fresh_directory() / "all.safetensors";
  write_safetensors(path.string(), testing::views_of(tensors), metadata);
  const SafetensorsFile file = SafetensorsFile::open(path.string());
  EXPECT_TRUE(file.memory_mapped());
  EXPECT_EQ(file.metadata(), metadata);
  EXPECT_EQ(file.file_size(), bytes.size());
  for (const auto& expected : tensors) {
    const TensorView& got = file.at(expected.view.name);
    EXPECT_EQ(got.dtype, expected.view.dtype);
    EXPECT_EQ(got.shape, expected.view.shape);
    EXPECT_EQ(got.file, path.string());
    ASSERT_EQ(got.byte_size, expected.bytes.size());
    EXPECT_EQ(std::memcmp(got.data, expected.bytes.data(), got.byte_size), 0) << got.name;
  }
}

TEST(SafetensorsRoundTrip, ScalarsAndEmptyTensors) {
  std::vector<testing::OwnedTensor> tensors;
  tensors.push_back(make_tensor("scalar", Dtype::kF32, {}));
  tensors.push_back(make_tensor("empty", Dtype::kF16, {0, 3}));
  tensors.push_back(make_tensor("after", Dtype::kI8, {5}));
  const auto bytes = serialize_safetensors(testing::views_of(tensors));
  const SafetensorsFile file = SafetensorsFile::from_bytes(bytes, "mem");
  EXPECT_EQ(file.at("scalar").numel(), 1);
  EXPECT_EQ(file.at("scalar").byte_size, 4u);
  EXPECT_EQ(file.at("empty").byte_size, 0u);
  EXPECT_EQ(file.at("empty").shape, (Shape{0, 3}));
  EXPECT_EQ(file.at("after").byte_size, 5u);
}

TEST(SafetensorsRoundTrip, OutputIsDeterministicAndAligned) {
  std::vector<testing::OwnedTensor> tensors;
  tensors.push_back(make_tensor("b.odd", Dtype::kI8, {3}));
  tensors.push_back(make_tensor("a.half", Dtype::kF16, {5}));
  tensors.push_back(make_tensor("c.double", Dtype::kF64, {3}));
  tensors.push_back(make_tensor("d.float", Dtype::kF32, {7}));
  std::vector<TensorView> forward = testing::views_of(tensors);
  std::vector<TensorView> backward(forward.rbegin(), forward.rend());
  const auto first = serialize_safetensors(forward, {{"k", "v"}});
  EXPECT_EQ(first, serialize_safetensors(backward, {{"k", "v"}}));

  const SafetensorsContents parsed = parse_safetensors(first.data(), first.size(), "mem");
  EXPECT_EQ((8 + parsed.header_size) % 8, 0u);
  for (const TensorView& tensor : parsed.tensors) {
    const auto offset = static_cast<size_t>(tensor.data - first.data());
    EXPECT_EQ(offset % dtype_size(tensor.dtype), 0u) << tensor.name;
  }
  const std::string header(first.begin() + 8, first.begin() + 8 + parsed.header_size);
  EXPECT_LT(header.find("\"a.half\""), header.find("\"b.odd\""));  // keys sorted
}

TEST(SafetensorsRoundTrip, UnalignedDataIsReadable) {
  // A writer without header padding (MLX does this) leaves data at odd addresses.
  auto bytes = raw_file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
  const float values[2] = {1.5f, -2.0f};
  std::memcpy(bytes.data() + bytes.size() - 8, values, 8);
  const SafetensorsFile file = SafetensorsFile::from_bytes(bytes, "mem");
  float got[2];
  std::memcpy(got, file.at("x").data, 8);
  EXPECT_EQ(got[1], -2.0f);
  EXPECT_FALSE(find_non_finite(file.at("x")));
}

TEST(SafetensorsWriter, RejectsBadInputAndKeepsTheOldFile) {
  const fs::path path = testing::fresh_directory() / "w.safetensors";
  auto good = make_tensor("w", Dtype::kF32, {2});
  write_safetensors(path.string(), {good.view});
  const auto size_before = fs::file_size(path);

  auto wrong_size = good.view;
  wrong_size.shape = {3};
  EXPECT_THROW(write_safetensors(path.string(), {wrong_size}), Error);
  EXPECT_THROW(write_safetensors(path.string(), {good.view, good.view}), Error);  // duplicate
  auto reserved = good.view;
  reserved.name = "__metadata__";
  EXPECT_THROW(write_safetensors(path.string(), {reserved}), Error);
  EXPECT_EQ(fs::file_size(path), size_before);
  for (const auto& entry : fs::directory_iterator(path.parent_path())) {
    EXPECT_EQ(entry.path().filename(), "w.safetensors") << "temporary file left behind";
  }
  EXPECT_THROW(
      write_safetensors((path.parent_path() / "missing" / "x.safetensors").string(), {good.view}),
      Error);
}

TEST(SafetensorsFileOpen, RejectsMissingEmptyAndNonRegularFiles) {
  const fs::path dir = testing::fresh_directory();
  EXPECT_THROW(SafetensorsFile::open((dir / "nope.safetensors").string()), Error);
  std::ofstream((dir / "empty.safetensors").string()).close();
  try {
    SafetensorsFile::open((dir / "empty.safetensors").string());
    FAIL() << "empty file accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("empty.safetensors: empty file"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(SafetensorsFile::open(dir.string()), Error);
  const fs::path fifo = dir / "pipe.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(SafetensorsFile::open(fifo.string()), Error);  // and does not block
}

// Every way a header can be wrong: the message must name the file and the tensor or field.
struct BadHeader {
  const char* label;
  std::string header;
  size_t data_size;
  std::vector<std::string> expected;  // substrings of the error message
};

class SafetensorsHostile : public ::testing::TestWithParam<BadHeader> {};

TEST_P(SafetensorsHostile, IsRejectedWithFileAndField) {
  const BadHeader& bad = GetParam();
  const std::string message = parse_error(raw_file(bad.header, bad.data_size));
  ASSERT_FALSE(message.empty()) << "accepted: " << bad.header;
  EXPECT_EQ(message.rfind("bad.safetensors: ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& part : bad.expected) {
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

const std::string kGoodEntry = R"("dtype":"F32","shape":[2],"data_offsets":[0,8])";

INSTANTIATE_TEST_SUITE_P(
    Cases, SafetensorsHostile,
    ::testing::Values(
        BadHeader{"MalformedJson", R"({"w":)", 0, {"not valid JSON"}},
        BadHeader{"EmptyHeader", "", 0, {"not valid JSON"}},
        BadHeader{"NotAnObject", "[1,2]", 0, {"not a JSON object"}},
        BadHeader{"InvalidUtf8", "{\"w\xff\":1}", 0, {"not valid JSON"}},
        BadHeader{"EntryNotObject", R"({"w":3})", 0, {"tensor 'w'", "not an object"}},
        BadHeader{"MissingDtype",
                  R"({"w":{"shape":[2],"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "missing field 'dtype'"}},
        BadHeader{"MissingShape",
                  R"({"w":{"dtype":"F32","data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "missing field 'shape'"}},
        BadHeader{"MissingOffsets",
                  R"({"w":{"dtype":"F32","shape":[2]}})",
                  8,
                  {"tensor 'w'", "missing field 'data_offsets'"}},
        BadHeader{"DtypeNotString",
                  R"({"w":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "'dtype' is not a string"}},
        BadHeader{"UnknownDtype",
                  R"({"w":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})",
                  2,
                  {"tensor 'w'", "unsupported dtype 'F8_E4M3'"}},
        BadHeader{"ShapeNotArray",
                  R"({"w":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "'shape' is not an array"}},
        BadHeader{"ShapeNotInteger",
                  R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "non-integer"}},
        BadHeader{"ShapeNegative",
                  R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "negative dimension -2"}},
        BadHeader{"ShapeNumelOverflow",
                  R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "64 bits"}},
        BadHeader{"ShapeBytesOverflow",
                  R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "64 bits"}},
        BadHeader{"ShapeHugeDimension",
                  R"({"w":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "too large"}},
        BadHeader{"OffsetsWrongArity",
                  R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8]}})",
                  8,
                  {"tensor 'w'", "data_offsets"}},
        BadHeader{"OffsetsNegative",
                  R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})",
                  8,
                  {"tensor 'w'", "non-negative"}},
        BadHeader{"BeginAfterEnd",
                  R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})",
                  8,
                  {"tensor 'w'", "begin > end"}},
        BadHeader{"OffsetsPastEnd",
                  R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                  4,
                  {"tensor 'w'", "runs past the end of the data (4 bytes)"}},
        BadHeader{"SizeMismatch",
                  R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "holds 8 bytes", "needs 12"}},
        BadHeader{"Overlap",
                  R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                      "b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                  12,
                  {"tensor 'b'", "overlap", "tensor 'a'"}},
        BadHeader{"Hole",
                  R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},
                      "b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                  12,
                  {"tensor 'b'", "unused bytes [4, 8)"}},
        BadHeader{"TrailingGarbage",
                  R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                  9,
                  {"5 trailing bytes"}},
        BadHeader{"MetadataNotObject", R"({"__metadata__":"x"})", 0, {"'__metadata__'"}},
        BadHeader{"MetadataNotStrings",
                  R"({"__metadata__":{"epoch":3}})",
                  0,
                  {"'__metadata__'", "'epoch'", "not a string"}},
        BadHeader{"DuplicateTensor",
                  "{\"w\":{" + kGoodEntry + "},\"w\":{" + kGoodEntry + "}}",
                  8,
                  {"tensor 'w' appears twice"}},
        BadHeader{"DuplicateField",
                  R"({"w":{"dtype":"F32","dtype":"F16","shape":[2],"data_offsets":[0,8]}})",
                  8,
                  {"tensor 'w'", "'dtype' appears twice"}},
        BadHeader{"UnknownField",
                  "{\"w\":{" + kGoodEntry + ",\"extra\":1}}",
                  8,
                  {"tensor 'w'", "unknown field 'extra'"}},
        BadHeader{"EmptyName", "{\"\":{" + kGoodEntry + "}}", 8, {"empty name"}},
        BadHeader{
            "ControlCharactersInName", "{\"a\\nb\":{\"dtype\":\"X\"}}", 0, {"tensor 'a\\x0ab'"}},
        BadHeader{
            "DeepNesting", std::string(5000, '[') + std::string(5000, ']'), 0, {"nested deeper"}}),
    [](const ::testing::TestParamInfo<BadHeader>& info) { return std::string(info.param.label); });

TEST(SafetensorsHostileLength, EmptyShortAndOversizedHeaders) {
  EXPECT_NE(parse_error({}).find("bad.safetensors: empty file"), std::string::npos);
  EXPECT_NE(parse_error({1, 0, 0}).find("truncated: 3 bytes"), std::string::npos);
  EXPECT_NE(parse_error(raw_file("{}", 0, 1000)).find("header length 1000 runs past the end"),
            std::string::npos);
  EXPECT_NE(parse_error(raw_file("{}", 0, 1ull << 40)).find("100 MiB"), std::string::npos);
  EXPECT_NE(parse_error(raw_file("{}", 0, UINT64_MAX - 1)).find("100 MiB"), std::string::npos);
  EXPECT_EQ(parse_error(raw_file("{}")), "");     // no tensors at all is a valid file
  EXPECT_EQ(parse_error(raw_file("{}   ")), "");  // header padding
}

TEST(SafetensorsHostileLength, EveryTruncationIsRejected) {
  std::vector<testing::OwnedTensor> tensors;
  tensors.push_back(make_tensor("a", Dtype::kF32, {3}));
  tensors.push_back(make_tensor("b", Dtype::kBF16, {5}));
  const auto bytes = serialize_safetensors(testing::views_of(tensors), {{"k", "v"}});
  for (size_t size = 0; size < bytes.size(); ++size) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + size);
    EXPECT_FALSE(parse_error(prefix).empty()) << "accepted a truncation to " << size << " bytes";
  }
  // The last tensor in the file is the one whose data runs past the end.
  const std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 1);
  EXPECT_NE(parse_error(cut).find("runs past the end of the data"), std::string::npos);
}

TEST(SafetensorsFinite, FindsFirstNanOrInfinityInEachFloatType) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto f32 = make_values<float>("f32", Dtype::kF32, {1.f, 2.f, 3.f, 4.f, 5.f, nan, inf});
  f32.view.file = "w.safetensors";
  EXPECT_EQ(find_non_finite(f32.view), 5);
  try {
    check_finite(f32.view);
    FAIL();
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "w.safetensors: tensor 'f32': NaN at index 5 (element [5])");
  }
  auto f16 = make_values<uint16_t>("f16", Dtype::kF16, {0x3c00, 0xfc00});  // 1, -inf
  EXPECT_EQ(find_non_finite(f16.view), 1);
  EXPECT_THROW(check_finite(f16.view), Error);
  auto bf16 = make_values<uint16_t>("bf16", Dtype::kBF16, {0x3f80, 0x7f7f, 0x7fc0});  // 1, max, nan
  EXPECT_EQ(find_non_finite(bf16.view), 2);
  auto f64 =
      make_values<double>("f64", Dtype::kF64, {1.0, -std::numeric_limits<double>::infinity()});
  EXPECT_EQ(find_non_finite(f64.view), 1);
  auto ints =
      make_values<int32_t>("i32", Dtype::kI32, {-1, 0x7f800000});  // bits of +inf: not a float
  EXPECT_FALSE(find_non_finite(ints.view));
  auto fine = make_values<float>("fine", Dtype::kF32, {0.f, -0.f, 3.4e38f, 1e-45f});
  EXPECT_NO_THROW(check_finite(fine.view));
}

TEST(SafetensorsFinite, ReportsMultiDimensionalPositionAndInfinity) {
  auto tensor = make_values<float>("grid", Dtype::kF32,
                                   {0, 0, 0, 0, 0, std::numeric_limits<float>::infinity()});
  tensor.view.shape = {2, 3};
  tensor.view.file = "x";
  try {
    check_finite(tensor.view);
    FAIL();
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "x: tensor 'grid': infinity at index 5 (element [1, 2])");
  }
}

}  // namespace
}  // namespace wc
