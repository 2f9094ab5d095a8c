// Parsing and writing the action-script text format documented in action_script.h.
#include "engine/game/action_script.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include "engine/core/utf8.h"  // header-only: wc_game links nothing of wc_core

namespace wc::game {
namespace {

constexpr int64_t kMaxRepeat = 1000000;
// A whole script is held in memory as one byte per action; this bounds what a hostile or
// mistaken file (many lines of "right 1000000") can make us allocate.
constexpr int64_t kMaxScriptActions = 10000000;
constexpr std::uintmax_t kMaxScriptBytes = 64u << 20;

[[noreturn]] void fail(const std::string& source, size_t line, const std::string& reason) {
  throw ActionScriptError(source + ":" + std::to_string(line) + ": " + reason);
}

void check_bytes(std::string_view line, const std::string& source, size_t line_number) {
  for (size_t i = 0; i < line.size();) {
    if (line[i] == '\0') fail(source, line_number, "NUL byte in text");
    const size_t length = utf8_at(line, i).length;
    if (length == 0) fail(source, line_number, "invalid UTF-8");
    i += length;
  }
}

// A token as an error message shows it: quoted, control characters written as \xNN (a script's
// escape sequences never reach the terminal raw), at most kShownTokenBytes bytes of it.
constexpr size_t kShownTokenBytes = 40;

std::string quoted(std::string_view token) {
  std::string out = "'";
  const size_t shown = std::min(token.size(), kShownTokenBytes);
  for (size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c < 0x20 || c == 0x7F) {
      static const char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (shown < token.size()) out += " (" + std::to_string(token.size()) + " bytes)";
  return out;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::vector<std::string_view> split_tokens(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > start) tokens.push_back(text.substr(start, i - start));
  }
  return tokens;
}

int64_t parse_count(std::string_view token, const std::string& source, size_t line_number) {
  const std::string shown = quoted(token);
  int64_t value = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') {
      fail(source, line_number,
           "bad repeat count " + shown + " (expected a whole number 1.." +
               std::to_string(kMaxRepeat) + ")");
    }
    // Saturate instead of overflowing: anything past the limit is rejected the same way.
    if (value <= kMaxRepeat) value = value * 10 + (c - '0');
  }
  if (value == 0) fail(source, line_number, "repeat count must be at least 1, got " + shown);
  if (value > kMaxRepeat) {
    fail(source, line_number,
         "repeat count " + shown + " is larger than " + std::to_string(kMaxRepeat));
  }
  return value;
}

}  // namespace

std::vector<Action> parse_action_script(const std::string& text, const std::string& source_name) {
  std::vector<Action> actions;
  std::string_view rest(text);
  // A byte-order mark is legal UTF-8 that some editors write; it is not an action.
  if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);
  size_t line_number = 0;
  while (!rest.empty()) {
    ++line_number;
    const size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);

    check_bytes(line, source_name, line_number);
    line = line.substr(0, line.find('#'));
    const std::vector<std::string_view> tokens = split_tokens(line);
    if (tokens.empty()) continue;
    if (tokens.size() > 2) {
      fail(source_name, line_number,
           "unexpected " + quoted(tokens[2]) + " (expected: ACTION [COUNT])");
    }
    const std::optional<Action> action = parse_action(tokens[0]);
    if (!action) {
      fail(source_name, line_number,
           "unknown action " + quoted(tokens[0]) + " (expected none, up, down, left, right)");
    }
    const int64_t count = tokens.size() == 2 ? parse_count(tokens[1], source_name, line_number) : 1;
    if (static_cast<int64_t>(actions.size()) + count > kMaxScriptActions) {
      fail(source_name, line_number,
           "script is longer than " + std::to_string(kMaxScriptActions) + " actions");
    }
    actions.insert(actions.end(), static_cast<size_t>(count), *action);
  }
  return actions;
}

std::vector<Action> load_action_script(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ActionScriptError(path + ": no such file (or not a regular file)");
  }
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > kMaxScriptBytes) {
    throw ActionScriptError(path + ": file is larger than " + std::to_string(kMaxScriptBytes) +
                            " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ActionScriptError(path + ": cannot open file for reading");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ActionScriptError(path + ": read error");
  return parse_action_script(text, path);
}

std::string format_action_script(const std::vector<Action>& actions) {
  std::string text = "# worldcast action script: one action per frame (ACTION [COUNT])\n";
  for (size_t i = 0; i < actions.size();) {
    size_t run = 1;
    while (i + run < actions.size() && actions[i + run] == actions[i] &&
           run < static_cast<size_t>(kMaxRepeat)) {
      ++run;
    }
    text += action_name(actions[i]);
    if (run > 1) text += " " + std::to_string(run);
    text += '\n';
    i += run;
  }
  return text;
}

}  // namespace wc::game
