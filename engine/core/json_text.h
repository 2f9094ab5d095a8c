// Parsing JSON text from a file, a checkpoint or the command line. See Note [Checked JSON].
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace wc {

// Note [Checked JSON]
// nlohmann's parser throws more than parse_error: a number beyond double's range ("hidden":
// 1e400) is an out_of_range that escaped every catch written for parse errors and reached the
// user as an internal error; and an object that names a key twice silently keeps the last one.
// parse_json is the one way in: any failure becomes a wc::Error naming `where` and, when it is
// inside an object, the field path ("field 'sampler.steps': number out of range"), and a key
// given twice is refused by its path.
nlohmann::json parse_json(const std::string& text, const std::string& where);

}  // namespace wc
