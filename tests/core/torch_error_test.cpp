// Note [LibTorch errors]: a LibTorch failure reads as one printable line naming what failed.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <string>

#include "engine/core/torch_error.h"

namespace wc {
namespace {

std::string line_of_failure() {
  try {
    (void)at::mm(at::ones({2, 3}), at::ones({4, 5}));  // inner sizes differ
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what()).find('\n'), std::string::npos)
        << "LibTorch's own message was expected to run over several lines";
    return torch_error_line(error);
  }
  ADD_FAILURE() << "the view did not fail";
  return "";
}

TEST(TorchErrorLine, IsTheFailedCheckInOneLine) {
  const std::string line = line_of_failure();
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_NE(line.find("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"), std::string::npos)
      << line;
  EXPECT_EQ(line.find("Exception raised from"), std::string::npos) << line;
  EXPECT_EQ(line.find("frame #"), std::string::npos) << line;
}

TEST(TorchErrorLine, MakesControlCharactersPrintable) {
  try {
    TORCH_CHECK(false, "\n  bad \x1b[31mname\x07 here\nsecond line");
  } catch (const c10::Error& error) {
    const std::string line = torch_error_line(error);
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    EXPECT_EQ(line.find('\x07'), std::string::npos) << line;
    EXPECT_NE(line.find("bad"), std::string::npos) << line;
    EXPECT_EQ(line.find("second line"), std::string::npos) << line;
    return;
  }
  ADD_FAILURE() << "TORCH_CHECK did not throw";
}

}  // namespace
}  // namespace wc
