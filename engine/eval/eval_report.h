// The eval report's reading aids: checks of the measured numbers against the project's targets
// (responsiveness >= 90%, idle >= 28 dB, return trip >= 24 dB, stability, headcast
// >= 26 dB and above dummy, speed; world content: against the game's terrain mix TV <= 0.10 and
// non-grass ratio 0.8..1.25, tile structure >= 95%, sprite poses >= 99%, its own walls held >= 80%
// with its free steps scrolling >= 90%, return-trip tokens >= 90%), and a plain-text table of the
// whole report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace wc::eval {

// [{"name", "value", "target", "pass"}, ...] for the metrics present in `report`; a missing
// value (null) does not pass. Speed targets depend on report["device"]: >= 60 FPS and p99 <=
// 16.7 ms on CUDA, >= 4 FPS on the CPU, for the report's main policy.
nlohmann::json eval_checks(const nlohmann::json& report);

// A readable summary: one block per metric present, then the checks.
std::string format_eval_report(const nlohmann::json& report);

}  // namespace wc::eval
