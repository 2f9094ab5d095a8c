// One policy's run on one seed as HeadCast's studies score it (Note [Threshold study], Note
// [Archetype study]).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/attention/head_type.h"
#include "engine/eval/eval_options.h"
#include "engine/game/game.h"

namespace wc::eval {

// The frames after the first `skip` of a run, their times, what a player sees in them, and the
// policy's K/V and cast at the end.
struct StudyRun {
  std::vector<at::Tensor> frames;  // uint8 [H, W, 4]
  std::vector<double> ms;          // each scored frame's step time
  int64_t sprite = 0, hud = 0;     // scored frames whose sprite is a pose, whose HUD reads
  int64_t cache_bytes = 0;
  std::vector<std::vector<attention::HeadType>> cast;  // [layer][head]
  std::map<std::string, int> heads_by_type;
};

// `policy` playing `actions` from `seed` under `options`; wc::Error naming `where` for a model
// that is not a world-model session.
StudyRun play_study_run(const EvalOptions& options, const std::string& policy, uint64_t seed,
                        const std::vector<game::Action>& actions, int64_t skip,
                        const std::string& where);

// The scored frames' mean PSNR against `reference`'s, frame by frame (as many as both hold).
double mean_psnr_against(const StudyRun& run, const StudyRun& reference);

}  // namespace wc::eval
