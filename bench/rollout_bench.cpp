// See rollout_bench.h and Note [Rollout key process].
#include "bench/rollout_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <optional>
#include <sstream>

#include "bench/attention_bench.h"
#include "bench/bench_timer.h"
#include "engine/attention/registry.h"
#include "engine/attention/sdpa.h"
#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/core/timing.h"
#include "engine/rollout/block_graph.h"

#ifdef WORLDCAST_HAS_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace wc::attention {
namespace {

constexpr const char* kWhere = "bench rollout";
constexpr double kObservationNoise = 0.05;
constexpr double kDriftRho = 0.995;
constexpr int kScrollPeriod = 4;

void seed_default_generator(const at::Device& device, uint64_t seed) {
  auto gen = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_current_seed(seed);
}

// Note [Rollout key process]: one frame of keys at a time, on the device.
class KeyProcess {
 public:
  KeyProcess(int batch, int heads, int grid_h, int grid_w, int head_dim,
             const at::TensorOptions& options)
      : options_(options) {
    static_rows_ = grid_h / 4;
    drift_rows_ = grid_h / 4;
    scroll_rows_ = grid_h * 4 / 10;
    fresh_rows_ = grid_h - static_rows_ - drift_rows_ - scroll_rows_;
    base_ = {batch, heads, 0, grid_w, head_dim};
    static_ = randn(static_rows_);
    drift_ = randn(drift_rows_);
    scroll_ = randn(scroll_rows_);
  }

  at::Tensor next_frame() {
    if (frame_ > 0) {
      drift_ = drift_ * kDriftRho + randn(drift_rows_) * std::sqrt(1.0 - kDriftRho * kDriftRho);
      if (frame_ % kScrollPeriod == 0 && scroll_rows_ > 0) {
        std::vector<int64_t> column = sizes(scroll_rows_);
        column[3] = 1;
        scroll_ =
            at::cat({scroll_.narrow(3, 1, scroll_.size(3) - 1), at::randn(column, options_)}, 3);
      }
    }
    ++frame_;
    const at::Tensor clean = at::cat({static_, drift_, scroll_, randn(fresh_rows_)}, 2);
    return clean +
           randn(static_rows_ + drift_rows_ + scroll_rows_ + fresh_rows_) * kObservationNoise;
  }

 private:
  std::vector<int64_t> sizes(int rows) const {
    std::vector<int64_t> s = base_;
    s[2] = rows;
    return s;
  }
  at::Tensor randn(int rows) const { return at::randn(sizes(rows), options_); }

  at::TensorOptions options_;
  std::vector<int64_t> base_;
  int static_rows_ = 0, drift_rows_ = 0, scroll_rows_ = 0, fresh_rows_ = 0;
  at::Tensor static_, drift_, scroll_;
  int64_t frame_ = 0;
};

struct PolicyRun {
  std::string label, policy;
  nlohmann::json settings;
};

PolicyRun policy_run(const std::string& label, const RolloutBenchOptions& o, int64_t frame_tokens) {
  nlohmann::json temp = {{"tau", 0.9}, {"budget", o.budget_frames * frame_tokens}};
  for (const auto& [key, value] : o.tempcache.items()) temp[key] = value;
  if (label == "dense") return {label, "dense", {{"window", 0}}};
  if (label == "dense-window") return {label, "dense", {{"window", o.window}}};
  if (label == "headcast")
    return {label, "headcast", {{"window", o.window}, {"cast", o.headcast_cast}}};
  if (label == "tempcache") return {label, "tempcache", temp};
  // AnnSA over the dense window's history, and FAST-AR (TempCache + AnnSA) over TempCache's.
  if (label == "annsa" || label == "fast-ar") {
    nlohmann::json settings = label == "annsa" ? nlohmann::json{{"window", o.window}} : temp;
    for (const auto& [key, value] : o.ann.items()) settings[key] = value;
    return {label, label, settings};
  }
  if (label == "combined") {
    nlohmann::json settings = {{"window", 0}, {"cast", o.headcast_cast}};
    for (const auto& [key, value] : temp.items()) settings[key] = value;
    return {label, "combined", settings};
  }
  throw Error(kWhere,
              "unknown policy run '" + label +
                  "' (known: dense, dense-window, headcast, tempcache, annsa, fast-ar, combined)");
}

int64_t device_allocated(const at::Device& device, bool peak) {
#ifdef WORLDCAST_HAS_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    const auto& stat = stats.allocated_bytes[0];  // aggregate over pool types
    return peak ? stat.peak : stat.current;
  }
#endif
  (void)device;
  (void)peak;
  return 0;
}

void reset_device_peak(const at::Device& device) {
#ifdef WORLDCAST_HAS_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#endif
  (void)device;
}

// Least-squares slope of y on x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2) return 0.0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx > 0 ? sxy / sxx : 0.0;
}

std::vector<double> frame_times(const std::vector<double>& block_ms, int frames_per_block) {
  std::vector<double> frames;
  for (double ms : block_ms) frames.insert(frames.end(), frames_per_block, ms / frames_per_block);
  return frames;
}

void validate(const RolloutBenchOptions& o) {
  if (o.blocks < 1) throw Error(kWhere, "--blocks must be at least 1");
  if (o.every < 1) throw Error(kWhere, "--every must be at least 1");
  if (o.steps < 1 || o.num_layers < 1 || o.num_heads < 1 || o.head_dim < 1) {
    throw Error(kWhere, "steps, layers, heads and head_dim must be positive");
  }
  if (o.policies.empty()) throw Error(kWhere, "--policies is empty");
}

RolloutPolicyResult run_policy(const PolicyRun& run, const RolloutBenchOptions& o, int grid_h,
                               int grid_w) {
  ModelShape shape;
  shape.num_layers = o.num_layers;
  shape.num_heads = o.num_heads;
  shape.head_dim = o.head_dim;
  shape.batch = 1;
  shape.geometry = BlockGeometry{o.frames_per_block, grid_h, grid_w};
  shape.device = o.device;
  shape.dtype = o.dtype;
  RolloutPolicyResult result;
  result.label = run.label;
  result.policy = run.policy;
  auto policy = create_policy(run.policy, shape, run.settings);
  result.settings = policy->settings();
  auto timer = make_bench_timer(o.device);
  const auto options = at::TensorOptions().dtype(o.dtype).device(o.device);
  seed_default_generator(o.device, o.seed);
  KeyProcess keys(1, o.num_heads, grid_h, grid_w, o.head_dim, options);
  reset_device_peak(o.device);
  const int64_t tokens = shape.geometry.tokens_per_block();
  const bool is_dense = run.label == "dense";
  std::vector<at::Tensor> history_k, history_v;  // uncompressed, for output_error
  const auto step_at = [&](int64_t block, int s) {
    StepInfo step;
    step.block_index = block;
    step.num_denoise_steps = o.steps - 1;
    step.geometry = shape.geometry;
    step.denoise_step = s;
    step.clean_pass = s == o.steps - 1;
    step.noise_level = step.clean_pass ? 0.0 : 1.0 - static_cast<double>(s) / o.steps;
    return step;
  };
  // One block's attention calls, then (with `commit`) its commits; returns layer 0's clean-pass
  // output.
  const auto run_block = [&](int64_t block, const at::Tensor& q, const at::Tensor& k,
                             const at::Tensor& v, bool commit, bool device_only) {
    at::Tensor clean_out;
    for (int s = 0; s < o.steps; ++s) {
      const StepInfo step = step_at(block, s);
      for (int l = 0; l < o.num_layers; ++l) {
        at::Tensor out = policy->attend(l, q, k, v, step);
        if (l == 0 && step.clean_pass) clean_out = out;
      }
    }
    if (commit) {
      StepInfo clean = step_at(block, o.steps - 1);
      clean.commit_device_only = device_only;
      for (int l = 0; l < o.num_layers; ++l) policy->commit(l, k, v, clean);
    }
    return clean_out;
  };
  const bool graphs = o.cuda_graphs && rollout::BlockGraph::available(o.device);
  rollout::BlockGraph graph;
  std::optional<uint64_t> last_key;
  at::Tensor graph_q, graph_k, graph_v;  // the recording's static inputs
  for (int64_t block = 0; block < o.blocks; ++block) {
    std::vector<at::Tensor> frames;
    for (int f = 0; f < o.frames_per_block; ++f) frames.push_back(keys.next_frame());
    const at::Tensor k = at::cat(frames, 2).reshape({1, o.num_heads, tokens, o.head_dim});
    const at::Tensor q = at::randn({1, o.num_heads, tokens, o.head_dim}, options);
    const at::Tensor v = at::randn({1, o.num_heads, tokens, o.head_dim}, options);
    at::Tensor clean_out;
    try {
      // As the sampler does (Note [Block graph]): replay a recorded key; record a key that held
      // for two blocks in a row.
      const StepInfo clean = step_at(block, o.steps - 1);
      const std::optional<uint64_t> key =
          graphs ? policy->block_replay_key(clean) : std::optional<uint64_t>();
      const bool replay = key && ((graph.recorded() && graph.key() == *key) || last_key == key);
      last_key = key;
      if (replay) {
        const bool record = !graph.recorded() || graph.key() != *key;
        if (record) {
          graph_q = at::empty_like(q);
          graph_k = at::empty_like(k);
          graph_v = at::empty_like(v);
        }
        graph_q.copy_(q);
        graph_k.copy_(k);
        graph_v.copy_(v);
        policy->commit_host(clean);
        if (record) {
          graph.record(
              *key, [&] { return run_block(block, graph_q, graph_k, graph_v, false, false); },
              [&] { return run_block(block, graph_q, graph_k, graph_v, true, true).clone(); });
          ++result.graph_recordings;
        }
        timer->start_call();
        clean_out = graph.replay();
        timer->stop_call();
        ++result.graph_replayed_blocks;
      } else {
        timer->start_call();
        clean_out = run_block(block, q, k, v, true, false);
        timer->stop_call();
      }
      result.block_ms.push_back(timer->finish_call().total_ms);
      if (o.error_every > 0) clean_out = clean_out.clone();
    } catch (const std::exception& error) {
      if (!is_dense) throw;
      result.stopped_early = true;
      result.stop_reason = "failed at block " + std::to_string(block) + ": " + error.what();
      break;
    }
    if (o.error_every > 0) {
      history_k.push_back(k.clone());
      history_v.push_back(v.clone());
      if ((block + 1) % o.error_every == 0) {
        const at::Tensor truth =
            reference_attention(q, at::cat(history_k, 2), at::cat(history_v, 2)).to(at::kDouble);
        const double error =
            ((clean_out.to(at::kDouble) - truth).norm() / truth.norm()).item<double>();
        result.output_error.emplace_back(block, error);
      }
    }
    const bool last = block + 1 == o.blocks;
    if ((block + 1) % o.every == 0 || last || block == 0) {
      const PolicyStats stats = policy->stats();
      result.samples.push_back(RolloutSample{block, (block + 1) * o.frames_per_block,
                                             stats.total_bytes(), stats.total_tokens(),
                                             device_allocated(o.device, false)});
      // Progress on stderr, so a run cut short by a time limit still says how far it got.
      if ((block + 1) % (o.every * 10) == 0 || last) {
        log_info("bench rollout: ", run.label, " block ", block + 1, "/", o.blocks, ": ",
                 result.block_ms.back(), " ms, cache ", stats.total_bytes() >> 20, " MiB");
      }
      if (is_dense && o.dense_max_gib > 0 &&
          static_cast<double>(stats.total_bytes()) > o.dense_max_gib * (1 << 30)) {
        result.stopped_early = true;
        result.stop_reason = "cache exceeded --dense-max-gib after block " + std::to_string(block);
      }
    }
    if (is_dense && o.dense_max_blocks > 0 && block + 1 >= o.dense_max_blocks && !last) {
      result.stopped_early = true;
      result.stop_reason = "stopped at --dense-max-blocks " + std::to_string(o.dense_max_blocks);
    }
    if (is_dense && o.dense_max_block_ms > 0 && result.block_ms.back() > o.dense_max_block_ms) {
      result.stopped_early = true;
      result.stop_reason = "block " + std::to_string(block) + " took " +
                           std::to_string(result.block_ms.back()) + " ms > --dense-max-block-ms";
    }
    if (result.stopped_early) break;
  }
  result.peak_device_bytes = device_allocated(o.device, true);
  const PolicyStats stats = policy->stats();
  double entries = 0, groups = 0;
  for (const TypeStats& t : stats.per_type) {
    result.merges += t.merges;
    result.evictions += t.evictions;
    entries += static_cast<double>(t.cached_tokens);
    groups += t.mean_group_size * static_cast<double>(t.cached_tokens);
  }
  result.mean_group_size = entries > 0 ? groups / entries : 0.0;
  const std::vector<double> frame_ms = frame_times(result.block_ms, o.frames_per_block);
  const size_t n = frame_ms.size();
  result.flatness = frame_time_flatness(frame_ms);
  result.flatness_worst = frame_time_flatness_worst(frame_ms);
  if (n >= 200) result.ms_per_frame_first = median_of(frame_ms, 100, 200);
  if (n >= 100) result.ms_per_frame_last = median_of(frame_ms, n - 100, n);
  // The time slope skips the first 100 frames (as flatness does): the first blocks carry one-time
  // costs (kernel selection, allocator growth) that would tilt a least-squares fit.
  // Runs too short for that skip only the first block.
  const size_t total_frames = result.block_ms.size() * static_cast<size_t>(o.frames_per_block);
  const size_t first_frame = total_frames >= 200 ? 100 : 1;
  std::vector<double> x, y;
  for (size_t b = 0; b < result.block_ms.size(); ++b) {
    if (b * static_cast<size_t>(o.frames_per_block) < first_frame) continue;
    x.push_back(static_cast<double>(b * o.frames_per_block));
    y.push_back(result.block_ms[b] / o.frames_per_block);
  }
  result.slope_ms_per_1000_frames = 1000.0 * slope(x, y);
  x.clear();
  y.clear();
  for (const RolloutSample& s : result.samples) {
    x.push_back(static_cast<double>(s.frames));
    y.push_back(static_cast<double>(s.cache_bytes));
  }
  result.bytes_per_frame = slope(x, y);
  return result;
}

}  // namespace

RolloutBenchReport run_rollout_bench(const RolloutBenchOptions& options) {
  validate(options);
  RolloutBenchReport report;
  report.options = options;
  std::tie(report.grid_h, report.grid_w) = parse_resolution(options.resolution);
  report.device_name = options.device.str();
  for (const std::string& label : options.policies) {
    const PolicyRun run = policy_run(label, options, int64_t{report.grid_h} * report.grid_w);
    report.results.push_back(run_policy(run, options, report.grid_h, report.grid_w));
  }
  return report;
}

std::string RolloutBenchReport::table() const {
  std::ostringstream out;
  out << "bench rollout: " << options.resolution << " (" << grid_h << "x" << grid_w
      << " tokens/frame), " << options.num_heads << " heads x " << options.head_dim << ", "
      << options.num_layers << " layer(s), " << options.steps << " call(s)/block, "
      << options.frames_per_block << " frames/block, " << device_name << "\n";
  out << "policy        blocks  ms/frame[100,200)  ms/frame[n-100,n)  flatness  worst  ms/1000f  "
         "cache MiB  B/frame     peak MiB  merges      evictions   group\n";
  for (const RolloutPolicyResult& r : results) {
    const double cache =
        r.samples.empty() ? 0.0 : static_cast<double>(r.samples.back().cache_bytes);
    char line[512];
    std::snprintf(line, sizeof(line),
                  "%-13s %6zu  %17.3f  %17.3f  %8.3f  %5.2f  %8.3f  %9.1f  %10.0f  %8.1f  %10lld  "
                  "%10lld  %5.2f\n",
                  r.label.c_str(), r.block_ms.size(), r.ms_per_frame_first, r.ms_per_frame_last,
                  r.flatness, r.flatness_worst, r.slope_ms_per_1000_frames, cache / (1 << 20),
                  r.bytes_per_frame, static_cast<double>(r.peak_device_bytes) / (1 << 20),
                  static_cast<long long>(r.merges), static_cast<long long>(r.evictions),
                  r.mean_group_size);
    out << line;
    if (!r.output_error.empty()) {
      double sum = 0.0;
      for (const auto& [block, error] : r.output_error) sum += error;
      std::snprintf(line, sizeof(line),
                    "  %s: output error vs dense over the whole history: mean %.4f, last %.4f "
                    "(%zu samples)\n",
                    r.label.c_str(), sum / static_cast<double>(r.output_error.size()),
                    r.output_error.back().second, r.output_error.size());
      out << line;
    }
    if (r.stopped_early) out << "  (" << r.label << " stopped early: " << r.stop_reason << ")\n";
  }
  out << "flatness = median frame time over frames [n-100, n) / over [100, 200) at the last n, "
         "worst = its largest value over every n >= 300 (0: fewer than 300 frames); ms/1000f and "
         "B/frame are least-squares slopes\n";
  return out.str();
}

}  // namespace wc::attention
