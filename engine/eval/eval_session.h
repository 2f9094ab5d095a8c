// The Sessions an eval drives: one per policy (weights loaded once), reset per held-out seed, with
// the settings every policy gets, and the overlays metrics leave out.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/eval/eval_options.h"
#include "engine/eval/phase_correlation.h"
#include "engine/game/game.h"
#include "engine/rollout/session.h"

namespace wc::eval {

// The attention window in frames: options.window, or the attention library's default
// (7 blocks: the sink block + 6 rolling) when it is -1.
int64_t eval_window_frames(const EvalOptions& options);

// Note [Eval policy settings]: every windowed policy gets the same window, so the policies differ
// from dense only in how they use it: dense, headcast and combined {"window": W}, tempcache
// {"window": W} (its entries outlive W only through merges), dummy {} (it keeps at most one
// neighbouring block by construction). options.settings[name] is merged over this.
nlohmann::json eval_policy_settings(const EvalOptions& options, const std::string& policy);

std::unique_ptr<rollout::Session> make_eval_session(const EvalOptions& options,
                                                    const std::string& policy, uint64_t seed);
// options.make_source when set, else make_eval_session.
std::unique_ptr<FrameSource> make_eval_source(const EvalOptions& options, const std::string& policy,
                                              uint64_t seed);
// The Session behind a source, or null for other sources (the reference game).
rollout::Session* session_of(FrameSource& source);

// The source's current frame, uint8 [H, W, 4].
at::Tensor current_frame(const FrameSource& source);

// The responsiveness estimator's settings (search radius from `options`, the overlays of
// game::screen_overlays ignored)
// for frames of this size: every metric that asks "did the view scroll?" reads it the same way.
PhaseCorrelationOptions scroll_estimator(const EvalOptions& options, int width, int height);

// Player-like actions (options.actions) from `seed`, each held for whole AR blocks: a Session
// with F frames per block conditions a block on one action, so the game must get the same one
// for all F frames to stay the truth.
std::vector<game::Action> eval_actions(const EvalOptions& options, uint64_t seed, int count);

// options.progress(line) when set.
void report_progress(const EvalOptions& options, const std::string& line);

// The `window` key of a policy's settings, or nullopt when it has none.
std::optional<int64_t> window_of(const nlohmann::json& settings);

}  // namespace wc::eval
