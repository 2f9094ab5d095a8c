// See model_bench.h. Timing brackets each block with a device synchronisation, so a block's
// time is all of its forwards and nothing of its neighbours.
#include "bench/model_bench.h"

#include <torch/autograd.h>
#include <torch/cuda.h>

#include "bench/bench_timer.h"
#include "engine/attention/registry.h"
#include "engine/core/timing.h"
#include "engine/model/dit.h"
#include "engine/model/prediction.h"
#include "engine/model/prompt.h"
#include "engine/model/weights.h"
#include "engine/rollout/cpu_allocator.h"
#include "engine/rollout/decode.h"
#include "engine/rollout/kernel_trace.h"
#include "engine/rollout/sampler.h"
#include "engine/rollout/session.h"

namespace wc::rollout {
namespace {

void sync(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

}  // namespace

std::vector<ModelBenchRow> run_model_bench(
    const ModelBenchOptions& options, const std::function<void(const ModelBenchRow&)>& on_row) {
  torch::NoGradGuard no_grad;
  if (options.device.is_cpu()) keep_cpu_tensor_memory();
  const model::ModelConfig& config = options.config;
  // Note [Memory budget]: every resolution and policy the bench will run must fit, checked
  // before the model is built.
  for (const std::string& resolution : options.resolutions) {
    const model::FrameSize size = config.resolve(resolution);
    config.check_frame_size(size);
    for (const ModelBenchPolicy& spec : options.policies) {
      require_session_memory(config, size, spec.name, spec.settings, options.device, options.dtype);
    }
  }
  model::CausalDiT dit(config);
  model::init_random_weights(dit, options.seed);
  dit->to(options.device, options.dtype);
  dit->eval();
  const bool cross = config.cross_attention.active();
  if (cross) {
    dit->set_prompt((options.prompt_file.empty() ? model::random_prompt(config, options.seed)
                                                 : model::read_prompt(options.prompt_file, config))
                        .to(options.device));
  } else if (!options.prompt_file.empty()) {
    (void)model::read_prompt(options.prompt_file, config);  // names the config's lack of it
  }

  std::vector<ModelBenchRow> rows;
  for (const std::string& resolution : options.resolutions) {
    const model::FrameSize size = config.resolve(resolution);
    config.check_frame_size(size);
    for (const ModelBenchPolicy& spec : options.policies) {
      attention::ModelShape shape;
      shape.num_layers = config.layers;
      shape.num_heads = config.heads;
      shape.head_dim = config.head_dim;
      shape.batch = 1;
      shape.geometry = {config.frames_per_block, config.grid_h(size), config.grid_w(size)};
      shape.device = options.device;
      shape.dtype = options.dtype;
      auto policy = attention::create_policy(spec.name, shape, spec.settings);
      std::unique_ptr<attention::CrossAttentionPolicy> cross_policy;
      if (cross) {
        cross_policy = attention::create_cross_policy(options.cross_policy.name, shape,
                                                      options.cross_policy.settings);
        dit->set_cross_policy(cross_policy.get());
      }
      BlockSampler sampler(*dit, *policy, size);
      at::manual_seed(options.seed);

      const int f = config.frames_per_block;
      const int plain_blocks = options.warmup_blocks + options.timed_blocks;
      const int split_blocks =
          options.split_blocks >= 0 ? options.split_blocks : options.timed_blocks;
      const bool trace = !options.trace_dir.empty();
      const std::unique_ptr<attention::BenchTimer> timer =
          attention::make_bench_timer(options.device);
      std::vector<double> block_ms, decode_ms, attention_ms, rest_ms, split_ms;
      std::map<std::string, std::vector<double>> path_ms;
      double classify_ms = 0.0;
      // The previous-frame skip's reference (Note [Previous-frame skip]): the last frame of the
      // block before, as in a session; the bench's first block takes its own noise.
      at::Tensor reference;
      for (int b = 0; b < plain_blocks + split_blocks + (trace ? 1 : 0); ++b) {
        // The attention/rest split runs after the timed blocks, apart; the traced block last.
        const bool traced = trace && b == plain_blocks + split_blocks;
        const bool split = b >= plain_blocks && !traced;
        // The warm-up runs timed too, for the classification it holds (its times are not kept).
        const bool warmup = b < options.warmup_blocks;
        const at::Tensor noise = at::randn({1, f, config.channels, size.height, size.width},
                                           at::TensorOptions().device(options.device))
                                     .to(options.dtype);
        const at::Tensor actions =
            at::randint(config.num_actions, {1, f}, at::TensorOptions().dtype(at::kLong))
                .to(options.device);
        sync(options.device);
        if (split || warmup) {
          policy->set_path_timer(timer.get());
          timer->start_call();
        }
        KernelTrace kernels;
        if (traced) kernels.start();
        Stopwatch model_time;
        if (config.prediction.previous_frame_skip && !reference.defined()) reference = noise;
        const at::Tensor x0 = sampler.denoise(noise, actions, b, int64_t{b} * f, reference);
        sampler.commit(x0, actions, b, int64_t{b} * f, at::randn_like(x0));
        if (reference.defined()) {
          reference = model::block_reference(x0, f);
        }
        sync(options.device);
        const double ms = model_time.elapsed_ms();
        if (traced) {
          kernels.stop_and_save(options.trace_dir + "/trace_" +
                                (resolution.empty() ? std::string("default") : resolution) + "_" +
                                spec.name + ".json");
          continue;
        }
        if (warmup) {
          timer->stop_call();
          policy->set_path_timer(nullptr);
          const attention::CallTiming timing = timer->finish_call();
          const auto classify = timing.paths_ms.find("classify");
          if (classify != timing.paths_ms.end()) classify_ms += classify->second;
        }
        if (split) {
          timer->stop_call();
          policy->set_path_timer(nullptr);
          const attention::CallTiming timing = timer->finish_call();
          double paths = 0.0;
          for (const auto& [path, ms_of_path] : timing.paths_ms) {
            paths += ms_of_path;
            path_ms[path].push_back(ms_of_path);
          }
          attention_ms.push_back(paths);
          split_ms.push_back(timing.total_ms);
          rest_ms.push_back(timing.total_ms - paths);
          continue;
        }
        double decode = 0.0;
        if (config.channels == 3) {
          Stopwatch decode_time;
          (void)decode_rgba(x0.squeeze(0));
          decode = decode_time.elapsed_ms();
        }
        if (b >= options.warmup_blocks) {
          block_ms.push_back(ms);
          decode_ms.push_back(decode);
        }
      }

      ModelBenchRow row;
      row.resolution = resolution.empty()
                           ? std::to_string(size.height) + "x" + std::to_string(size.width)
                           : resolution;
      row.policy = spec.name;
      row.settings = policy->settings();
      row.grid_h = shape.geometry.grid_h;
      row.grid_w = shape.geometry.grid_w;
      row.tokens_per_block = shape.geometry.tokens_per_block();
      row.forwards_per_block = config.sampler.steps + 1;
      row.block_ms_median = median(block_ms);
      row.block_ms_p10 = percentile(block_ms, 10.0);
      row.block_ms_p90 = percentile(block_ms, 90.0);
      row.decode_ms_median = median(decode_ms);
      row.attention_ms_median = median(attention_ms);
      row.rest_ms_median = median(rest_ms);
      for (const auto& [path, times] : path_ms) row.path_ms_median[path] = median(times);
      row.classify_ms = classify_ms;
      row.block_ms = block_ms;
      row.split_block_ms = split_ms;
      row.video_frames_per_block = static_cast<double>(f) * config.video_frames_per_frame;
      row.fps = row.block_ms_median > 0.0
                    ? row.video_frames_per_block / (row.block_ms_median / 1000.0)
                    : 0.0;
      const attention::PolicyStats stats = policy->stats();
      row.cache_tokens = stats.total_tokens();
      row.cache_bytes = stats.total_bytes();
      if (cross_policy) {
        row.cross_policy = cross_policy->name();
        row.prompt_kept = cross_policy->stats().kept_share();
        dit->set_cross_policy(nullptr);
      }
      rows.push_back(row);
      if (on_row) on_row(row);
    }
  }
  return rows;
}

nlohmann::json model_bench_json(const ModelBenchOptions& options,
                                const std::vector<ModelBenchRow>& rows) {
  nlohmann::json list = nlohmann::json::array();
  for (const ModelBenchRow& row : rows) {
    list.push_back({{"resolution", row.resolution},
                    {"policy", row.policy},
                    {"settings", row.settings},
                    {"grid", {row.grid_h, row.grid_w}},
                    {"tokens_per_block", row.tokens_per_block},
                    {"forwards_per_block", row.forwards_per_block},
                    {"block_ms_median", row.block_ms_median},
                    {"block_ms_p10", row.block_ms_p10},
                    {"block_ms_p90", row.block_ms_p90},
                    {"decode_ms_median", row.decode_ms_median},
                    {"video_frames_per_block", row.video_frames_per_block},
                    {"fps", row.fps},
                    {"cache_tokens", row.cache_tokens},
                    {"cache_bytes", row.cache_bytes},
                    {"attention_ms_median", row.attention_ms_median},
                    {"rest_ms_median", row.rest_ms_median},
                    {"path_ms_median", row.path_ms_median},
                    {"classify_ms", row.classify_ms},
                    {"block_ms", row.block_ms},
                    {"split_block_ms", row.split_block_ms},
                    {"cross_policy", row.cross_policy.empty() ? nlohmann::json()
                                                              : nlohmann::json(row.cross_policy)},
                    {"prompt_kept", row.cross_policy.empty() ? nlohmann::json()
                                                             : nlohmann::json(row.prompt_kept)}});
  }
  return {{"benchmark", "model"},
          {"config", options.config.name},
          {"device", options.device.str()},
          {"dtype", std::string(c10::toString(options.dtype))},
          {"warmup_blocks", options.warmup_blocks},
          {"timed_blocks", options.timed_blocks},
          {"seed", options.seed},
          {"fps_convention", "video frames per block / DiT time per block (decode excluded)"},
          {"rows", list}};
}

}  // namespace wc::rollout
