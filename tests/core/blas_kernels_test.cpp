// Note [OpenBLAS kernels]: the family read from the instruction set agrees with what the kernel
// reports of the CPU, and the one OpenBLAS runs is the one asked for.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "engine/core/cpu_features.h"

namespace wc {
namespace {

std::set<std::string> kernel_cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

TEST(BlasKernels, TheFamilyForTheCpuAgreesWithTheKernelsFlags) {
  const std::set<std::string> flags = kernel_cpu_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags to compare with";
  const auto has = [&](std::initializer_list<const char*> names) {
    for (const char* n : names) {
      if (!flags.count(n)) return false;
    }
    return true;
  };
  std::string expected;
  if (has({"avx2", "fma", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"})) {
    expected = "SkylakeX";
  } else if (has({"avx2", "fma"})) {
    expected = "Haswell";
  }
  EXPECT_EQ(blas_kernels_for_cpu(), expected);
}

TEST(BlasKernels, OpenBlasRunsTheFamilyAskedForAndAUsersChoiceStays) {
  (void)at::mm(at::ones({4, 4}), at::ones({4, 4}));  // the BLAS is loaded and in use
  const std::string used = blas_kernels_in_use();
  if (used.empty()) GTEST_SKIP() << "the BLAS LibTorch uses is not OpenBLAS";
  const char* asked = std::getenv("OPENBLAS_CORETYPE");
  if (asked != nullptr) {
    EXPECT_EQ(lower(used), lower(asked));
    EXPECT_EQ(blas_kernels_to_ask_for(), "");  // never overridden
  } else {
    const std::string ask = blas_kernels_to_ask_for();
    EXPECT_TRUE(ask.empty() || ask == blas_kernels_for_cpu()) << ask;
  }
}

}  // namespace
}  // namespace wc
