// See book_text.h.
#include "engine/model/book_text.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "engine/core/error.h"
#include "engine/model/codebook.h"
#include "engine/model/tile_book.h"

namespace wc::model {
namespace {

int letter_index(char letter) {
  const char* at = std::strchr(kCodebookLetters, letter);
  return letter != '\0' && at ? static_cast<int>(at - kCodebookLetters) : -1;
}

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

bool is_placeholder(const std::string& word) {
  return std::isupper(static_cast<unsigned char>(word[0])) != 0;
}

int hex_digit(char d) {
  return d >= '0' && d <= '9'   ? d - '0'
         : d >= 'a' && d <= 'f' ? d - 'a' + 10
         : d >= 'A' && d <= 'F' ? d - 'A' + 10
                                : -1;
}

bool parse_colour(const std::string& text, Rgb& colour) {
  if (text.size() != 7 || text[0] != '#') return false;
  for (size_t c = 0; c < 3; ++c) {
    const int high = hex_digit(text[1 + 2 * c]), low = hex_digit(text[2 + 2 * c]);
    if (high < 0 || low < 0) return false;
    colour[c] = static_cast<uint8_t>(high * 16 + low);
  }
  return true;
}

}  // namespace

bool BookLines::next(std::string& line) {
  if (!std::getline(in_, line)) return false;
  ++number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

void BookLines::expect(std::string& line, const std::string& what) {
  if (!next(line)) throw Error(where_, "truncated: " + what + " missing at the end");
}

void BookLines::expect_end(const std::string& what) {
  std::string line;
  while (next(line)) {
    if (!line.empty()) fail(what);
  }
}

void BookLines::fail(const std::string& what) const {
  throw Error(where_, "line " + std::to_string(number_) + ": " + what);
}

std::vector<std::string> BookLines::fields(const std::string& line,
                                           const std::string& shape) const {
  const std::vector<std::string> words = words_of(line), expected = words_of(shape);
  std::vector<std::string> out;
  bool matches = words.size() == expected.size();
  for (size_t i = 0; matches && i < words.size(); ++i) {
    if (is_placeholder(expected[i])) {
      out.push_back(words[i]);
    } else {
      matches = words[i] == expected[i];
    }
  }
  if (!matches) fail("expected \"" + shape + "\", got \"" + line + "\"");
  return out;
}

int BookLines::integer(const std::string& word, const std::string& name, int64_t low, int64_t high,
                       const std::string& why) const {
  int64_t value = 0;
  const char* end = word.data() + word.size();
  const auto [at, error] = std::from_chars(word.data(), end, value);
  if (error != std::errc() || at != end) fail(name + " must be an integer, got \"" + word + "\"");
  if (value < low || value > high) {
    fail(name + " must be in [" + std::to_string(low) + ", " + std::to_string(high) + "]" + why +
         ", got " + word);
  }
  return static_cast<int>(value);
}

std::vector<Rgb> parse_colours_line(const BookLines& lines, const std::string& line, int count) {
  const std::vector<std::string> words = words_of(line);
  if (words.empty() || words[0] != "colours") lines.fail("expected \"colours #rrggbb ...\"");
  std::vector<Rgb> colours;
  for (size_t i = 1; i < words.size(); ++i) {
    Rgb colour{};
    if (!parse_colour(words[i], colour))
      lines.fail("expected a colour #rrggbb, got \"" + words[i] + "\"");
    colours.push_back(colour);
  }
  if (static_cast<int>(colours.size()) != count) {
    lines.fail("the header says " + std::to_string(count) + " colours, the line has " +
               std::to_string(colours.size()));
  }
  return colours;
}

void write_colours_line(std::ostream& out, const std::vector<Rgb>& colours) {
  out << "colours";
  for (const Rgb& c : colours) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "#%02x%02x%02x", c[0], c[1], c[2]);
    out << ' ' << hex;
  }
  out << '\n';
}

std::vector<uint8_t> parse_letters(const BookLines& lines, const std::string& line, size_t size,
                                   int colours, const std::string& row, bool transparent) {
  if (line.size() != size) {
    lines.fail(row + " is " + std::to_string(size) + " letters, got " +
               std::to_string(line.size()));
  }
  std::vector<uint8_t> out(size);
  for (size_t j = 0; j < size; ++j) {
    if (transparent && line[j] == kTileTransparent) {
      out[j] = kTransparentColour;
      continue;
    }
    const int c = letter_index(line[j]);
    if (c < 0 || c >= colours) {
      lines.fail(std::string("letter '") + line[j] + "' is not one of the " +
                 std::to_string(colours) + " colours");
    }
    out[j] = static_cast<uint8_t>(c);
  }
  return out;
}

std::string letters_text(const std::vector<uint8_t>& row) {
  std::string line(row.size(), '?');
  for (size_t j = 0; j < row.size(); ++j) {
    if (row[j] == kTransparentColour) {
      line[j] = kTileTransparent;
    } else if (row[j] < kMaxCodebookColours) {
      line[j] = kCodebookLetters[row[j]];
    }
  }
  return line;
}

}  // namespace wc::model
