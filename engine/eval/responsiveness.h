// Action responsiveness (DESIGN.md §13): the share of steps where the scroll direction estimated
// from consecutive generated frames (phase correlation) matches the commanded direction.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/eval/eval_options.h"

namespace wc::eval {

// Note [Blocked moves]: walking into a wall or water turns the player but does not scroll the
// camera, so "scrolls the commanded way" would be the wrong answer there. The reference game
// with the same seed and actions tells whether the true camera moved: only steps where it did
// are scored ("share"). Blocked steps (true camera still) are reported apart as the share where
// the model did not scroll either, and so are idle steps (action none). As a rollout goes on the
// model's world may drift from the game's, so late blocked steps are judged against the game's
// walls: a caveat of "blocked_still_share", not of "share".
//
// The estimator runs on the same frame pairs of the true game as a check
// ("estimator_share_on_truth" should be 1): a low value means the metric itself is unreliable.
// Note [Responsiveness breakdown]: a miss is either the model staying still or scrolling another
// way ("still_share" of the scored steps is the first). The scored steps are also split by where
// they fall: the first step of a held key against the steps that continue it ("hold_first_share",
// "hold_later_share"), and the first quarter of the rollout against the rest ("early_share",
// "late_share"), which tells a model that does not know the rule from one whose own history
// (or a dreamed world drifted from the game's) leads it astray. A scroll read off a world turned
// to speckle or streaks is still a scroll, so the same two parts report the generated frames'
// detail against the true frames' ("early_detail_ratio", "late_detail_ratio": mean luma
// gradient, 1 for the game itself; below 1 is blur, above 1 speckle or streaks). It cannot tell
// lost landmarks from kept ones: a world whose trees fade to streaked grass can read as high as
// one that keeps them.
nlohmann::json eval_responsiveness(const EvalOptions& options);

}  // namespace wc::eval
