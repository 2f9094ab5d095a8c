// See attention_bench.h. Procedure per policy: create it through the registry, commit random
// blocks until the window is full (and an online cast has happened), then time attend() for the
// next block: warm-up calls, then medians over iters, rotating among a few random input sets.
#include "bench/attention_bench.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <tuple>

#include "bench/attention_flops.h"
#include "bench/bench_timer.h"
#include "engine/attention/registry.h"
#include "engine/core/error.h"
#include "engine/core/timing.h"

namespace wc::attention {
namespace {

constexpr const char* kWhere = "bench attention";
// Inputs rotate among this many random sets so repeated calls do not run out of L2 (METHOD.md).
constexpr int kInputSets = 3;
// An online policy may classify up to this many blocks after the window first fills.
constexpr int kExtraBlocks = 4;

struct BlockInputs {
  at::Tensor q, k, v;
};

BlockInputs random_block(const ModelShape& shape) {
  const auto options = at::TensorOptions().dtype(shape.dtype).device(shape.device);
  const std::vector<int64_t> dims = {shape.batch, shape.num_heads,
                                     shape.geometry.tokens_per_block(), shape.head_dim};
  return {at::randn(dims, options), at::randn(dims, options), at::randn(dims, options)};
}

StepInfo make_step(int64_t block, bool clean, const BlockGeometry& geometry) {
  StepInfo step;
  step.block_index = block;
  step.denoise_step = clean ? 1 : 0;
  step.num_denoise_steps = 1;
  step.noise_level = clean ? 0.0 : 1.0;
  step.clean_pass = clean;
  step.geometry = geometry;
  return step;
}

// Settings the bench gives each policy: the shared window for windowed policies, HeadCast's cast.
nlohmann::json bench_settings(const std::string& name, const AttentionBenchOptions& options) {
  nlohmann::json settings = nlohmann::json::object();
  const int64_t window_frames = int64_t{options.window_blocks} * options.frames_per_block;
  if (name == "dense" || name == "headcast") settings["window"] = window_frames;
  if (name == "headcast") {
    settings["cast"] = options.headcast_cast;
    settings["cell_mode"] = options.cell_mode;
  }
  return settings;
}

bool classifies_online(const nlohmann::json& settings) {
  return settings.contains("cast") && settings["cast"].is_null();
}

CellGrid spatial_grid(const nlohmann::json& settings, const BlockGeometry& geometry) {
  if (!settings.contains("cell")) return CellGrid::whole(geometry);
  const std::string mode = settings.value("cell_mode", std::string("rounded"));
  return CellGrid::make(geometry, settings["cell"].get<int>(),
                        mode == "ragged"    ? CellMode::kRagged
                        : mode == "divisor" ? CellMode::kDivisor
                                            : CellMode::kRounded);
}

// "9x10 x40" or "10x10 x60 + 9x10 x24": each group's cell shape and count.
std::string describe_cells(const CellGrid& cells) {
  std::string out;
  for (const CellGroup& g : cells.groups()) {
    out += (out.empty() ? "" : " + ") + std::to_string(g.cell_h) + "x" + std::to_string(g.cell_w) +
           " x" + std::to_string(g.cells());
  }
  return out;
}

double timed_attend(AttentionPolicy& policy, BenchTimer& timer, const BlockInputs& in,
                    const StepInfo& step, CallTiming* timing = nullptr) {
  policy.set_path_timer(&timer);
  timer.start_call();
  policy.attend(0, in.q, in.k, in.v, step);
  timer.stop_call();
  policy.set_path_timer(nullptr);
  CallTiming result = timer.finish_call();
  if (timing) *timing = result;
  return result.total_ms;
}

// Commits blocks until the window is full and, for an online policy, until it has classified.
// With a timer, times every call before the cast and returns the one that classified: the last
// attend() before stats().classified turned true (HeadCast casts inside attend(), Dummy Forcing
// measures in the clean pass and casts at commit).
// Where a policy brackets its classification work as the "classify" path, the call holding it is
// the classifying step and `classify_path_ms` receives that path's time (the one-time overhead).
int64_t fill_window(AttentionPolicy& policy, const ModelShape& shape, int window_blocks,
                    bool online, BenchTimer* timer, std::optional<double>* classify_ms,
                    std::optional<double>* classify_path_ms = nullptr) {
  int64_t block = 0;
  double last_ms = 0.0;
  double classify_path_total = 0.0;
  auto just_classified = [&](bool before) { return !before && policy.stats().classified; };
  while (block < window_blocks ||
         (online && !policy.stats().classified && block < window_blocks + kExtraBlocks)) {
    const BlockInputs in = random_block(shape);
    for (bool clean : {false, true}) {
      const StepInfo step = make_step(block, clean, shape.geometry);
      const bool before = policy.stats().classified;
      if (online && timer && !before) {
        CallTiming timing;
        last_ms = timed_attend(policy, *timer, in, step, &timing);
        const auto path = timing.paths_ms.find("classify");
        if (path != timing.paths_ms.end() && path->second > 0.0) {
          classify_path_total += path->second;
          if (classify_ms) *classify_ms = last_ms;
        }
        if (just_classified(before) && classify_ms && classify_path_total == 0.0) {
          *classify_ms = last_ms;
        }
      } else {
        policy.attend(0, in.q, in.k, in.v, step);
      }
    }
    const bool before = policy.stats().classified;
    policy.commit(0, in.k, in.v, make_step(block, true, shape.geometry));
    if (online && timer && just_classified(before) && classify_ms && !*classify_ms) {
      *classify_ms = last_ms;
    }
    ++block;
  }
  if (classify_path_ms && classify_path_total > 0.0) *classify_path_ms = classify_path_total;
  return block;
}

std::string dtype_name(at::ScalarType dtype) {
  if (dtype == at::kBFloat16) return "bf16";
  if (dtype == at::kFloat) return "f32";
  if (dtype == at::kHalf) return "f16";
  return c10::toString(dtype);
}

std::string format_fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

std::string format_ms(double ms) {
  return format_fixed(ms, ms < 10 ? 3 : 2);
}

PolicyBenchResult bench_policy(const std::string& name, const AttentionBenchOptions& options,
                               const ModelShape& shape, BenchTimer& timer) {
  PolicyBenchResult result;
  result.name = name;
  auto policy = create_policy(name, shape, bench_settings(name, options));
  result.settings = policy->settings();
  const bool online = classifies_online(result.settings);
  if (online) {
    // Rehearse the whole warm-up and classification once so first-use costs stay out of the
    // classifying step's time, then do it again, timed.
    fill_window(*policy, shape, options.window_blocks, online, nullptr, nullptr);
    policy->reset();
  }
  std::optional<double> classify_path_ms;
  result.blocks_before_timing = fill_window(*policy, shape, options.window_blocks, online, &timer,
                                            &result.classify_step_ms, &classify_path_ms);

  std::vector<BlockInputs> inputs;
  for (int i = 0; i < kInputSets; ++i) inputs.push_back(random_block(shape));
  const StepInfo step = make_step(result.blocks_before_timing, false, shape.geometry);
  std::vector<double> totals;
  std::map<std::string, std::vector<double>> paths;
  for (int i = 0; i < options.warmup + options.iters; ++i) {
    CallTiming timing;
    timed_attend(*policy, timer, inputs[static_cast<size_t>(i % kInputSets)], step, &timing);
    if (i < options.warmup) continue;
    totals.push_back(timing.total_ms);
    for (const auto& [path, ms] : timing.paths_ms) paths[path].push_back(ms);
  }
  result.total_ms = median(totals);
  for (const auto& [path, samples] : paths) result.paths_ms[path] = median(samples);

  const PolicyStats stats = policy->stats();
  result.classified = stats.classified;
  result.cached_tokens = stats.total_tokens();
  result.cached_bytes = stats.total_bytes();
  for (int i = 0; i < kHeadTypeCount; ++i) {
    const int heads = stats.per_type[static_cast<size_t>(i)].heads;
    if (heads > 0) result.heads_per_type[head_type_name(static_cast<HeadType>(i))] = heads;
  }
  result.flops =
      policy_attention_flops(stats, shape, spatial_grid(result.settings, shape.geometry));
  result.tflops_per_s = result.flops / (result.total_ms * 1e-3) / 1e12;
  if (classify_path_ms) {
    result.classify_overhead_ms = classify_path_ms;
  } else if (result.classify_step_ms) {
    result.classify_overhead_ms = *result.classify_step_ms - result.total_ms;
  }
  return result;
}

void validate(const AttentionBenchOptions& options) {
  auto positive = [](int value, const char* what) {
    if (value < 1) throw Error(kWhere, std::string(what) + " must be at least 1");
  };
  positive(options.frames_per_block, "frames per block");
  positive(options.num_heads, "heads");
  positive(options.head_dim, "head_dim");
  positive(options.batch, "batch");
  positive(options.window_blocks, "window blocks");
  positive(options.iters, "--iters");
  if (options.warmup < 0) throw Error(kWhere, "--warmup must not be negative");
  if (options.policies.empty()) throw Error(kWhere, "--policy lists no policy");
  if (options.device.is_cuda() && !at::hasCUDA()) {
    throw Error(kWhere, "--device cuda: no CUDA device (or a CPU-only LibTorch)");
  }
}

}  // namespace

std::pair<int, int> parse_resolution(const std::string& resolution) {
  if (resolution == "480p") return {30, 52};
  if (resolution == "720p") return {45, 80};
  if (resolution == "1080p") return {68, 120};
  const auto x = resolution.find_first_of("xX");
  auto number = [&](const std::string& text) {
    if (text.empty() || text.size() > 5 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return 0;
    }
    return std::stoi(text);
  };
  if (x != std::string::npos) {
    const int w = number(resolution.substr(0, x));
    const int h = number(resolution.substr(x + 1));
    if (w >= 1 && h >= 1 && w <= 4096 && h <= 4096) return {h, w};
  }
  throw Error(kWhere, "--res must be 480p, 720p, 1080p or WxH in tokens (e.g. 52x30), got '" +
                          resolution + "'");
}

AttentionBenchReport run_attention_bench(const AttentionBenchOptions& options) {
  validate(options);
  AttentionBenchReport report;
  report.options = options;
  std::tie(report.grid_h, report.grid_w) = parse_resolution(options.resolution);
  report.device_name = options.device.str();

  ModelShape shape;
  shape.num_layers = 1;
  shape.num_heads = options.num_heads;
  shape.head_dim = options.head_dim;
  shape.batch = options.batch;
  shape.geometry = BlockGeometry{options.frames_per_block, report.grid_h, report.grid_w};
  shape.device = options.device;
  shape.dtype = options.dtype;

  std::vector<std::string> names = {"dense"};
  for (const auto& name : options.policies) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  at::manual_seed(options.seed);
  const auto timer = make_bench_timer(options.device);
  for (const auto& name : names)
    report.results.push_back(bench_policy(name, options, shape, *timer));

  const PolicyBenchResult& dense = report.results.front();
  for (auto& result : report.results) {
    result.speedup = dense.total_ms / result.total_ms;
    result.flop_ideal_speedup = dense.flops / result.flops;
    result.fraction_of_ideal = result.speedup / result.flop_ideal_speedup;
    if (result.classify_step_ms) {
      result.classify_vs_dense_ms = *result.classify_step_ms - dense.total_ms;
    }
  }
  return report;
}

nlohmann::json AttentionBenchReport::to_json() const {
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json entry = {{"name", r.name},
                            {"settings", r.settings},
                            {"classified", r.classified},
                            {"heads_per_type", r.heads_per_type},
                            {"cached_tokens", r.cached_tokens},
                            {"cached_bytes", r.cached_bytes},
                            {"blocks_before_timing", r.blocks_before_timing},
                            {"total_ms", r.total_ms},
                            {"paths_ms", r.paths_ms},
                            {"flops", r.flops},
                            {"tflops_per_s", r.tflops_per_s},
                            {"speedup", r.speedup},
                            {"flop_ideal_speedup", r.flop_ideal_speedup},
                            {"fraction_of_ideal", r.fraction_of_ideal}};
    auto optional = [](const std::optional<double>& value) {
      return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
    };
    entry["classify_step_ms"] = optional(r.classify_step_ms);
    entry["classify_overhead_ms"] = optional(r.classify_overhead_ms);
    entry["classify_vs_dense_ms"] = optional(r.classify_vs_dense_ms);
    policies.push_back(std::move(entry));
  }
  const int tokens_per_frame = grid_h * grid_w;
  return {{"benchmark", "attention"},
          {"device", device_name},
          {"dtype", dtype_name(options.dtype)},
          {"resolution", options.resolution},
          {"shape",
           {{"layers", 1},
            {"heads", options.num_heads},
            {"head_dim", options.head_dim},
            {"batch", options.batch},
            {"frames_per_block", options.frames_per_block},
            {"grid_h", grid_h},
            {"grid_w", grid_w},
            {"tokens_per_frame", tokens_per_frame},
            {"query_tokens", tokens_per_frame * options.frames_per_block},
            {"window_frames", options.window_blocks * options.frames_per_block}}},
          {"iters", options.iters},
          {"warmup", options.warmup},
          {"seed", options.seed},
          {"cell_mode", options.cell_mode},
          {"timing", options.device.is_cuda() ? "cuda events, median" : "steady clock, median"},
          {"dense_ms", results.empty() ? 0.0 : results.front().total_ms},
          {"policies", policies}};
}

std::string AttentionBenchReport::table() const {
  std::ostringstream out;
  out << "attention bench: " << options.resolution << " (" << grid_h << "x" << grid_w
      << " tokens/frame, " << options.frames_per_block << " frames/block), " << options.num_heads
      << " heads x " << options.head_dim << ", window "
      << options.window_blocks * options.frames_per_block << " frames + current, " << device_name
      << " " << dtype_name(options.dtype) << ", median of " << options.iters << " after "
      << options.warmup << " warm-up\n";
  auto row = [&out](const std::string& policy, const std::string& cast, const std::string& total,
                    const std::string& speedup, const std::string& ideal,
                    const std::string& fraction, const std::string& tflops,
                    const std::string& paths) {
    out << std::left << std::setw(10) << policy << " " << std::setw(28) << cast << std::right
        << std::setw(10) << total << std::setw(9) << speedup << std::setw(9) << ideal
        << std::setw(8) << fraction << std::setw(9) << tflops << "  " << paths << "\n";
  };
  row("policy", "cast", "total ms", "speedup", "ideal", "% ideal", "TFLOP/s", "paths (ms)");
  for (const auto& r : results) {
    std::string cast;
    for (const auto& [type, heads] : r.heads_per_type) {
      cast += (cast.empty() ? "" : " ") + type.substr(0, 4) + ":" + std::to_string(heads);
    }
    std::string paths;
    for (const auto& [path, ms] : r.paths_ms) {
      paths += (paths.empty() ? "" : " ") + path + "=" + format_ms(ms);
    }
    row(r.name, cast, format_ms(r.total_ms), format_fixed(r.speedup, 2) + "x",
        format_fixed(r.flop_ideal_speedup, 2) + "x", format_fixed(100.0 * r.fraction_of_ideal, 0),
        format_fixed(r.tflops_per_s, r.tflops_per_s < 1 ? 4 : 2), paths);
  }
  for (const auto& r : results) {
    if (!r.settings.is_object() || !r.settings.contains("cell")) continue;
    const BlockGeometry geometry{options.frames_per_block, grid_h, grid_w};
    out << r.name << " spatial cells: " << r.settings.value("cell_mode", std::string("rounded"))
        << ", edge " << r.settings["cell"].get<int>() << ": "
        << describe_cells(spatial_grid(r.settings, geometry)) << "\n";
  }
  for (const auto& r : results) {
    if (!r.classify_step_ms) continue;
    out << r.name << ": one-time classification " << format_ms(*r.classify_overhead_ms)
        << " ms; the classifying step took " << format_ms(*r.classify_step_ms)
        << " ms (a normal step " << format_ms(r.total_ms) << " ms, "
        << format_ms(*r.classify_vs_dense_ms) << " ms over a dense step)\n";
  }
  return out.str();
}

}  // namespace wc::attention
