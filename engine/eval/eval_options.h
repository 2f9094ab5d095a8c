// What `worldcast eval` measures and how much: the model, the device, the held-out seeds and the
// counts of every metric (DESIGN.md §13), so a CPU test can run a tiny version of the full eval.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/eval/player_actions.h"
#include "engine/model/model_config.h"
#include "engine/rollout/frame_source.h"

namespace wc::eval {

enum class Metric : uint8_t {
  kResponsiveness,
  kIdle,
  kMemory,
  kStability,
  kPolicies,
  kSpeed,
  kWorld
};

const char* metric_name(Metric metric);  // "responsiveness", "idle", "memory", ..., "world"
std::vector<Metric> all_metrics();
// "all" or a comma list of the names above; throws wc::Error naming an unknown one.
std::vector<Metric> parse_metrics(const std::string& list);

// The most real frames a model is seeded with: far more than any window holds, and few enough
// that seeding never dominates a run.
inline constexpr int kMaxSeedFrames = 1024;

struct EvalOptions {
  model::ModelConfig config;
  std::string weights;        // a checkpoint (folder or file); "" = random weights
  uint64_t weights_seed = 0;  // of the random weights
  at::Device device = at::kCPU;
  std::optional<at::ScalarType> dtype;  // default: the Session's (f32 on CPU, bf16 on CUDA)
  bool cuda_graphs = true;              // SessionOptions::cuda_graphs

  std::vector<uint64_t> seeds;   // held-out world seeds (the Session seed is the world seed)
  int seed_frames = 1;           // real game frames the Session is seeded with, in
                                 // [1, kMaxSeedFrames]
  std::string policy = "dense";  // policy of the responsiveness, idle, memory, stability runs
  // Policies compared with dense (fidelity) and timed next to it (speed).
  std::vector<std::string> policies{"headcast", "dummy", "tempcache", "combined"};
  // Per policy name, merged (JSON merge patch) over the defaults of eval_policy_settings.
  std::map<std::string, nlohmann::json> settings;
  int64_t window = -1;  // attention window in frames (sink block included); -1 = the default

  std::vector<Metric> metrics = all_metrics();
  int responsiveness_frames = 256;  // per seed
  int idle_frames = 64;             // per seed
  int memory_steps = 0;             // frames walked each way; 0 = the longest trip the window holds
  int stability_frames = 10000;     // one long rollout, on the first seed
  int stability_probe_frames = 16;  // idle frames probed at its start and at its end
  int policy_frames = 128;          // per seed and policy
  int policy_skip = -1;             // frames left out of the comparison; -1 = window + one block
  int speed_frames = 200;           // timed frames per policy
  int speed_warmup = -1;            // untimed frames first; -1 = window + two blocks
  int world_frames = 600;           // per seed: the world-content walk (world_content.h)
  int world_trip_steps = 16;        // frames out and back of the world metric's return trip
  int max_shift = 8;                // phase-correlation search radius in pixels
  PlayerActionOptions actions;

  // What is evaluated, per policy name and first seed: empty = a world-model Session (the normal
  // case); make_game_as_model (game_as_model.h) gives the reference game, the ceiling of every
  // metric. Sources must be seeded like a Session (see ReferenceRun).
  std::function<std::unique_ptr<FrameSource>(const std::string& policy, uint64_t seed)> make_source;
  std::string source_name = "model";

  // Progress lines ("idle: seed 1000001 ..."); may be empty.
  std::function<void(const std::string&)> progress;
  // Frames worth looking at, by name ("stability_end_03", "stability_rollout_01000"): the
  // stability probes and the rollout at each tenth, generated and true. May be empty; the CLI's
  // --frames-dir writes them as PNG.
  std::function<void(const std::string& name, const at::Tensor& frame)> keep_frame;
};

// Throws wc::Error ("eval: <option>: ...") for counts out of range or an empty seed list.
void validate(const EvalOptions& options);

}  // namespace wc::eval
