// Note [Bounded reads]: a regular file comes back whole; a missing file, a FIFO (without
// blocking), a folder, a device and a file over the limit are refused with the path and kind.
#include "engine/core/bounded_read.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "engine/core/error.h"

namespace wc {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::string& path, int64_t limit) {
  try {
    read_bounded_file(path, limit, "test input");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(BoundedRead, ReadsRegularFilesWholeAndRefusesTheRestByName) {
  const fs::path dir =
      fs::temp_directory_path() / ("wc_bounded_read_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string bytes(5000, '\0');
  std::mt19937 random(std::random_device{}());
  for (char& c : bytes) c = static_cast<char>(random());
  std::ofstream((dir / "file.bin").string(), std::ios::binary) << bytes;
  EXPECT_EQ(read_bounded_file((dir / "file.bin").string(), 5000, "test input"), bytes);
  std::ofstream((dir / "empty").string());
  EXPECT_EQ(read_bounded_file((dir / "empty").string(), 0, "test input"), "");

  const std::string over = error_of((dir / "file.bin").string(), 4999);
  EXPECT_NE(over.find("file.bin"), std::string::npos) << over;
  EXPECT_NE(over.find("5000 bytes, more than the 4999 allowed"), std::string::npos) << over;
  const std::string missing = error_of((dir / "missing").string(), 100);
  EXPECT_NE(missing.find("missing: cannot open the test input"), std::string::npos) << missing;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  for (const std::string& path :
       {(dir / "fifo").string(), dir.string(), std::string("/dev/zero")}) {
    const std::string e = error_of(path, 1 << 20);  // a FIFO must not block
    EXPECT_NE(e.find(path + ": the test input must be a regular file"), std::string::npos) << e;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace wc
