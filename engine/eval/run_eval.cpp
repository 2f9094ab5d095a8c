// See run_eval.h.
#include "engine/eval/run_eval.h"

#include "engine/core/timing.h"
#include "engine/eval/eval_report.h"
#include "engine/eval/eval_session.h"
#include "engine/eval/idle_fidelity.h"
#include "engine/eval/memory_trip.h"
#include "engine/eval/policy_fidelity.h"
#include "engine/eval/psnr.h"
#include "engine/eval/responsiveness.h"
#include "engine/eval/speed.h"
#include "engine/eval/ssim.h"
#include "engine/eval/stability.h"
#include "engine/eval/world_content.h"

namespace wc::eval {
namespace {

const char* dtype_name(at::ScalarType dtype) {
  switch (dtype) {
    case at::kBFloat16:
      return "bf16";
    case at::kHalf:
      return "f16";
    case at::kFloat:
      return "f32";
    default:
      return "other";
  }
}

int64_t parameter_count(const model::ModelConfig& config) {
  int64_t count = 0;
  for (const TensorSpec& spec : model::model_tensor_specs(config, Dtype::kF32)) {
    int64_t n = 1;
    for (int64_t d : spec.shape) n *= d;
    count += n;
  }
  return count;
}

}  // namespace

nlohmann::json run_eval(const EvalOptions& options) {
  validate(options);
  // Every policy's Session is built once up front, so a bad checkpoint or bad settings fail
  // before minutes of work rather than after.
  std::vector<std::string> names{options.policy, "dense"};
  names.insert(names.end(), options.policies.begin(), options.policies.end());
  for (const std::string& name : names) make_eval_source(options, name, options.seeds.front());
  Stopwatch clock;
  nlohmann::json report = {
      {"format", "worldcast-eval"},
      {"version", 1},
      {"source", options.source_name},
      {"config", options.config.name},
      {"config_file", options.config.file},
      {"parameters", parameter_count(options.config)},
      {"weights",
       options.weights.empty() ? nlohmann::json(nullptr) : nlohmann::json(options.weights)},
      {"device", options.device.str()},
      {"dtype",
       dtype_name(options.dtype.value_or(options.device.is_cuda() ? at::kBFloat16 : at::kFloat))},
      {"cuda_graphs", options.device.is_cuda() && options.cuda_graphs},
      {"frame", {{"width", options.config.frame.width}, {"height", options.config.frame.height}}},
      {"frames_per_block", options.config.frames_per_block},
      {"sampler_steps", options.config.sampler.steps},
      {"seeds", options.seeds},
      {"seed_frames", options.seed_frames},
      {"policy", options.policy},
      {"window_frames", eval_window_frames(options)},
      {"psnr_cap_db", kPsnrCapDb},
      {"ssim", {{"plane", "luma (BT.601)"}, {"window", kSsimWindow}, {"sigma", kSsimSigma}}}};
  nlohmann::json metrics = nlohmann::json::array();
  for (Metric metric : options.metrics) {
    metrics.push_back(metric_name(metric));
    Stopwatch section;
    nlohmann::json result;
    switch (metric) {
      case Metric::kResponsiveness:
        result = eval_responsiveness(options);
        break;
      case Metric::kIdle:
        result = eval_idle_fidelity(options);
        break;
      case Metric::kMemory:
        result = eval_memory(options);
        break;
      case Metric::kStability:
        result = eval_stability(options);
        break;
      case Metric::kPolicies:
        result = eval_policies(options);
        break;
      case Metric::kSpeed:
        result = eval_speed(options);
        break;
      case Metric::kWorld:
        result = eval_world(options);
        break;
    }
    result["seconds"] = section.elapsed_ms() / 1000.0;
    report[metric_name(metric)] = result;
  }
  report["metrics"] = metrics;
  report["checks"] = eval_checks(report);
  report["seconds"] = clock.elapsed_ms() / 1000.0;
  return report;
}

}  // namespace wc::eval
