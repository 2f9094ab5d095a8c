// See attention_bench_options.h.
#include "ui/cli/attention_bench_options.h"

#include <sstream>
#include <stdexcept>

#include "engine/core/error.h"

namespace wc::cli {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

nlohmann::json parse_headcast_mix(const std::string& text) {
  nlohmann::json counts = nlohmann::json::array();
  for (const auto& part : split_commas(text)) {
    try {
      size_t used = 0;
      const int count = std::stoi(part, &used);
      if (used != part.size() || count < 0) throw std::invalid_argument(part);
      counts.push_back(count);
    } catch (const std::exception&) {
      throw Error("--mix", "expected four non-negative counts s,d,sp,g, got '" + text + "'");
    }
  }
  if (counts.size() != 4) {
    throw Error("--mix",
                "expected four counts s,d,sp,g (sink, dummy, spatial, global), got '" + text + "'");
  }
  return {{"mix", counts}};
}

BenchTarget resolve_bench_target(const std::string& device, const std::string& dtype) {
  const bool cuda = device.empty() ? at::hasCUDA() : device == "cuda";
  BenchTarget target;
  target.device = cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  const std::string chosen = dtype.empty() ? (cuda ? "bf16" : "f32") : dtype;
  target.dtype = chosen == "bf16" ? at::kBFloat16 : at::kFloat;
  return target;
}

}  // namespace wc::cli
