#include "engine/core/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/error.h"

namespace wc {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(AtomicFile, WritesAndReplacesWholeFiles) {
  const fs::path dir = fs::temp_directory_path() / "wc_atomic_file_test";
  fs::create_directories(dir);
  const fs::path target = dir / "state.bin";
  write_file_atomically(target.string(), std::string("first version"));
  EXPECT_EQ(read_all(target), "first version");
  write_file_atomically(target.string(), std::string("second"));
  EXPECT_EQ(read_all(target), "second");
  // No temporary files are left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1);
  fs::remove_all(dir);
}

TEST(AtomicFile, FailureNamesThePathAndKeepsNothing) {
  const std::string target = "/nonexistent-folder-wc/state.bin";
  try {
    write_file_atomically(target, std::string("x"));
    FAIL() << "expected wc::Error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(target), std::string::npos);
  }
}

}  // namespace
}  // namespace wc
