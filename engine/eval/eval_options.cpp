// See eval_options.h.
#include "engine/eval/eval_options.h"

#include <sstream>

#include "engine/core/error.h"

namespace wc::eval {
namespace {

constexpr Metric kAll[] = {Metric::kResponsiveness, Metric::kIdle,     Metric::kMemory,
                           Metric::kStability,      Metric::kPolicies, Metric::kSpeed,
                           Metric::kWorld};

void require(bool ok, const std::string& option, const std::string& what) {
  if (!ok) throw Error("eval", option + ": " + what);
}

}  // namespace

const char* metric_name(Metric metric) {
  switch (metric) {
    case Metric::kResponsiveness:
      return "responsiveness";
    case Metric::kIdle:
      return "idle";
    case Metric::kMemory:
      return "memory";
    case Metric::kStability:
      return "stability";
    case Metric::kPolicies:
      return "policies";
    case Metric::kSpeed:
      return "speed";
    case Metric::kWorld:
      return "world";
  }
  return "?";
}

std::vector<Metric> all_metrics() {
  return {std::begin(kAll), std::end(kAll)};
}

std::vector<Metric> parse_metrics(const std::string& list) {
  if (list == "all") return all_metrics();
  std::vector<Metric> metrics;
  std::stringstream stream(list);
  std::string name;
  while (std::getline(stream, name, ',')) {
    if (name.empty()) continue;
    bool found = false;
    for (Metric metric : kAll) {
      if (name == metric_name(metric)) {
        found = true;
        bool seen = false;
        for (Metric m : metrics) seen = seen || m == metric;
        if (!seen) metrics.push_back(metric);
      }
    }
    std::string known;
    for (Metric metric : kAll)
      known += std::string(known.empty() ? "" : ", ") + metric_name(metric);
    require(found, "--metrics", "unknown metric '" + name + "' (known: all, " + known + ")");
  }
  require(!metrics.empty(), "--metrics", "names no metric");
  return metrics;
}

void validate(const EvalOptions& options) {
  require(!options.seeds.empty(), "--seeds", "at least one seed is needed");
  require(options.seed_frames >= 1 && options.seed_frames % options.config.frames_per_block == 0,
          "--seed-frames",
          "must be a positive multiple of the block size (" +
              std::to_string(options.config.frames_per_block) +
              "): the metrics compare against the game the model is seeded from");
  require(options.seed_frames <= kMaxSeedFrames, "--seed-frames",
          "must be at most " + std::to_string(kMaxSeedFrames) + ", got " +
              std::to_string(options.seed_frames));
  require(options.window >= -1, "--window", "must be -1 (default), 0 (unbounded) or frames");
  require(options.responsiveness_frames >= 1, "--responsiveness-frames", "must be at least 1");
  require(options.idle_frames >= 1, "--idle-frames", "must be at least 1");
  require(options.memory_steps >= 0 && options.memory_steps % options.config.frames_per_block == 0,
          "--memory-steps",
          "must be 0 (auto) or a positive multiple of the block size (" +
              std::to_string(options.config.frames_per_block) + ")");
  require(options.stability_frames >= 0, "--stability-frames", "must be at least 0");
  require(options.stability_probe_frames >= 2, "--stability-probe", "must be at least 2");
  require(options.policy_frames >= 2, "--policy-frames", "must be at least 2");
  require(options.policy_skip >= -1, "--policy-skip", "must be -1 (auto) or at least 0");
  require(options.speed_frames >= 1, "--speed-frames", "must be at least 1");
  require(options.speed_warmup >= -1, "--speed-warmup", "must be -1 (auto) or at least 0");
  require(options.world_frames >= 1, "--world-frames", "must be at least 1");
  require(options.world_trip_steps >= 1 &&
              options.world_trip_steps % options.config.frames_per_block == 0,
          "--world-trip-steps",
          "must be a positive multiple of the block size (" +
              std::to_string(options.config.frames_per_block) + ")");
  require(options.max_shift >= 1, "--max-shift", "must be at least 1 pixel");
}

}  // namespace wc::eval
