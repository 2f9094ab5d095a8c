// Option parsing shared by `bench attention` and `bench rollout`: comma lists, HeadCast's --mix,
// and the device/dtype defaults (CUDA and bf16 when a GPU is present, CPU and float32 otherwise).
#pragma once

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace wc::cli {

std::vector<std::string> split_commas(const std::string& text);

// "s,d,sp,g" -> {"mix": [s, d, sp, g]}, HeadCast's forced-cast setting; wc::Error naming --mix
// unless it is exactly four non-negative integers.
nlohmann::json parse_headcast_mix(const std::string& text);

struct BenchTarget {
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;
};

// `device` is "cuda", "cpu" or empty (cuda when present); `dtype` is "bf16", "f32" or empty
// (bf16 on CUDA, f32 on the CPU).
BenchTarget resolve_bench_target(const std::string& device, const std::string& dtype);

}  // namespace wc::cli
