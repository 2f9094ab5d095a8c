// See cpu_features.h.
#include "engine/core/cpu_features.h"

#include <dlfcn.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>

namespace wc {
namespace {

#if defined(__x86_64__)
uint64_t xcr0() {
  uint32_t low = 0, high = 0;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (uint64_t{high} << 32) | low;
}
#endif

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::string blas_kernels_for_cpu() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7 || !__get_cpuid(1, &a, &b, &c, &d)) return "";
  const bool fma = (c >> 12) & 1u, osxsave = (c >> 27) & 1u, avx = (c >> 28) & 1u;
  if (!osxsave || !avx) return "";
  const uint64_t state = xcr0();
  const bool ymm = (state & 0x6u) == 0x6u;    // SSE and AVX state
  const bool zmm = (state & 0xE6u) == 0xE6u;  // and the opmask and both halves of the ZMM state
  __cpuid_count(7, 0, a, b, c, d);
  const bool avx2 = (b >> 5) & 1u;
  const bool avx512 = ((b >> 16) & 1u) && ((b >> 17) & 1u) && ((b >> 28) & 1u) &&
                      ((b >> 30) & 1u) && ((b >> 31) & 1u);  // F, DQ, CD, BW, VL
  if (zmm && avx512 && fma && avx2) return "SkylakeX";
  if (ymm && avx2 && fma) return "Haswell";
#endif
  return "";
}

std::string blas_kernels_in_use() {
  using CoreName = char* (*)();
  const auto name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (name == nullptr) return "";
  const char* core = name();
  return core == nullptr ? "" : core;
}

std::string blas_kernels_to_ask_for() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return "";
  const std::string wanted = blas_kernels_for_cpu();
  const std::string used = lower(blas_kernels_in_use());
  if (wanted.empty() || used.empty()) return "";
  // OpenBLAS's kernels for x86 CPUs before AVX2: what a CPU it cannot name falls back to.
  static const std::array<const char*, 12> kGeneric = {
      "prescott", "core2",      "penryn",    "dunnington", "nehalem", "sandybridge",
      "katmai",   "coppermine", "northwood", "banias",     "atom",    "unknown"};
  for (const char* generic : kGeneric) {
    if (used == generic) return wanted;
  }
  return "";
}

}  // namespace wc
