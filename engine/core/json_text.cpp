// See json_text.h.
#include "engine/core/json_text.h"

#include <set>
#include <vector>

#include "engine/core/error.h"

namespace wc {
namespace {

// Where the parser is: one entry per open object or array, with the keys an object has had.
struct Level {
  bool object = false;
  std::set<std::string> keys;
  std::string key;    // the object's current key
  int64_t begun = 0;  // the array's elements begun (a scalar counts once it is read)
};

// The field being read: an array's element is the last begun one when the parser is inside it
// (a container), else the next.
std::string path_of(const std::vector<Level>& levels) {
  std::string path;
  for (size_t i = 0; i < levels.size(); ++i) {
    const Level& level = levels[i];
    if (level.object) {
      if (level.keys.empty()) break;
      path += (path.empty() ? "" : ".") + level.key;
    } else {
      path += "[" + std::to_string(i + 1 < levels.size() ? level.begun - 1 : level.begun) + "]";
    }
  }
  return path;
}

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<Level> levels;
  const auto element = [&] {
    if (!levels.empty() && !levels.back().object) ++levels.back().begun;
  };
  const auto callback = [&](int /*depth*/, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        element();
        levels.push_back(Level{event == Event::object_start, {}, {}, 0});
        break;
      case Event::object_end:
      case Event::array_end:
        if (!levels.empty()) levels.pop_back();
        break;
      case Event::key: {
        Level& level = levels.back();
        level.key = parsed.get<std::string>();
        if (!level.keys.insert(level.key).second) {
          throw Error(where, "field '" + path_of(levels) + "': given twice");
        }
        break;
      }
      case Event::value:
        // Containers report their value at their end, after the pop: count scalars only.
        if (!parsed.is_structured()) element();
        break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::exception& error) {
    const std::string path = path_of(levels);
    throw Error(where, (path.empty() ? std::string() : "field '" + path + "': ") +
                           "not valid JSON: " + error.what());
  }
}

}  // namespace wc
