// Helpers shared by the safetensors source files; not part of the public interface.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace wc {

// `text` made safe for a one-line error message: control characters and bytes that are not valid
// UTF-8 escaped as \xNN, at most 200 bytes kept, because names and JSON errors come from
// untrusted files.
std::string sanitized(std::string_view text);
// sanitized(text) between single quotes: 'name'.
std::string quoted_name(std::string_view text);

// Parses untrusted JSON, rejecting what nlohmann::json accepts silently: a key repeated in one
// object (the last copy would win and hide the first) and nesting deeper than `max_depth`
// (containers; the top-level value is depth 0). Errors name `file` and call the text `document`
// ("header is not valid JSON"); a repeated top-level key reads "<top_level_noun> 'key' appears
// twice".
nlohmann::json parse_json_strictly(const char* text, size_t size, const std::string& file,
                                   const char* document, int max_depth, const char* top_level_noun);

}  // namespace wc
