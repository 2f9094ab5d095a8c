// `worldcast eval` as library code: runs the selected metrics and returns one JSON report with
// the run's facts, one object per metric and the checks against the project's targets.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/eval/eval_options.h"

namespace wc::eval {

// Throws wc::Error for invalid options, a bad checkpoint or unknown policy settings (naming the
// file or key), before any metric runs.
nlohmann::json run_eval(const EvalOptions& options);

}  // namespace wc::eval
