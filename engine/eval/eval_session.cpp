// See eval_session.h.
#include "engine/eval/eval_session.h"

#include "engine/attention/headcast/cast_settings.h"
#include "engine/eval/frame_tensor.h"
#include "engine/eval/player_actions.h"

namespace wc::eval {

int64_t eval_window_frames(const EvalOptions& options) {
  if (options.window >= 0) return options.window;
  // Note [Model policy settings]: a model that names its window (its dense one) is measured at it.
  const nlohmann::json& own = options.config.policies;
  if (own.contains("dense") && own["dense"].contains("window") &&
      own["dense"]["window"].is_number_integer()) {
    return own["dense"]["window"].get<int64_t>();
  }
  attention::ModelShape shape;
  shape.geometry.frames = options.config.frames_per_block;
  return attention::default_cast_settings(shape).window;
}

nlohmann::json eval_policy_settings(const EvalOptions& options, const std::string& policy) {
  nlohmann::json settings = nlohmann::json::object();
  if (policy == "dense" || policy == "headcast" || policy == "combined" || policy == "tempcache" ||
      policy == "annsa" || policy == "fast-ar") {
    settings["window"] = eval_window_frames(options);
  }
  const auto found = options.settings.find(policy);
  if (found != options.settings.end()) settings.merge_patch(found->second);
  return settings;
}

std::unique_ptr<rollout::Session> make_eval_session(const EvalOptions& options,
                                                    const std::string& policy, uint64_t seed) {
  rollout::SessionOptions session;
  session.seed_frames = options.seed_frames;
  session.dtype = options.dtype;
  session.weights_seed = options.weights_seed;
  session.cuda_graphs = options.cuda_graphs;
  return rollout::Session::create(options.config, options.weights, policy,
                                  eval_policy_settings(options, policy), seed, options.device,
                                  session);
}

std::unique_ptr<FrameSource> make_eval_source(const EvalOptions& options, const std::string& policy,
                                              uint64_t seed) {
  if (options.make_source) return options.make_source(policy, seed);
  return make_eval_session(options, policy, seed);
}

rollout::Session* session_of(FrameSource& source) {
  return dynamic_cast<rollout::Session*>(&source);
}

at::Tensor current_frame(const FrameSource& source) {
  return copy_rgba(source.rgba(), source.width(), source.height());
}

PhaseCorrelationOptions scroll_estimator(const EvalOptions& options, int width, int height) {
  PhaseCorrelationOptions correlation;
  correlation.max_shift = options.max_shift;
  correlation.ignore = game::screen_overlays(width, height);
  return correlation;
}

std::vector<game::Action> eval_actions(const EvalOptions& options, uint64_t seed, int count) {
  std::vector<game::Action> actions = player_actions(seed, count, options.actions);
  const size_t f = static_cast<size_t>(options.config.frames_per_block);
  for (size_t i = 0; i < actions.size(); ++i) actions[i] = actions[i - i % f];
  return actions;
}

void report_progress(const EvalOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

std::optional<int64_t> window_of(const nlohmann::json& settings) {
  if (!settings.is_object() || !settings.contains("window") ||
      !settings["window"].is_number_integer()) {
    return std::nullopt;
  }
  return settings["window"].get<int64_t>();
}

}  // namespace wc::eval
