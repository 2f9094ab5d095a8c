// See codebook.h.
#include "engine/model/codebook.h"

#include <cstring>
#include <set>
#include <sstream>

#include "engine/core/atomic_file.h"
#include "engine/core/bounded_read.h"
#include "engine/core/error.h"

namespace wc::model {
namespace {

constexpr char kMagic[] = "worldcast codebook 1";

int letter_index(char letter) {
  const char* at = std::strchr(kCodebookLetters, letter);
  return letter != '\0' && at ? static_cast<int>(at - kCodebookLetters) : -1;
}

class Lines {
 public:
  Lines(const std::string& text, std::string where) : in_(text), where_(std::move(where)) {}
  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    ++number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }
  void expect(std::string& line, const std::string& what) {
    if (!next(line)) throw Error(where_, "truncated: " + what + " missing at the end");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_, "line " + std::to_string(number_) + ": " + what);
  }

 private:
  std::istringstream in_;
  std::string where_;
  int number_ = 0;
};

bool parse_colour(const std::string& text, std::array<uint8_t, 3>& colour) {
  if (text.size() != 7 || text[0] != '#') return false;
  for (int c = 0; c < 3; ++c) {
    int value = 0;
    for (int i = 0; i < 2; ++i) {
      const char d = text[static_cast<size_t>(1 + 2 * c + i)];
      const int v = d >= '0' && d <= '9'   ? d - '0'
                    : d >= 'a' && d <= 'f' ? d - 'a' + 10
                    : d >= 'A' && d <= 'F' ? d - 'A' + 10
                                           : -1;
      if (v < 0) return false;
      value = value * 16 + v;
    }
    colour[static_cast<size_t>(c)] = static_cast<uint8_t>(value);
  }
  return true;
}

// Reads a whole regular file of at most kMaxCodebookBytes without blocking on a FIFO or device.
}  // namespace

std::vector<uint8_t> Codebook::rgb(int index) const {
  const std::vector<uint8_t>& entry = entries.at(static_cast<size_t>(index));
  std::vector<uint8_t> out;
  out.reserve(entry.size() * 3);
  for (uint8_t c : entry) {
    const std::array<uint8_t, 3>& colour = colours.at(c);
    out.insert(out.end(), colour.begin(), colour.end());
  }
  return out;
}

Codebook parse_codebook(const std::string& text, const std::string& where) {
  Lines lines(text, where);
  std::string line;
  lines.expect(line, "the first line");
  if (line != kMagic) lines.fail(std::string("expected \"") + kMagic + "\"");
  lines.expect(line, "the header");
  Codebook book;
  int colours = 0;
  int64_t count = 0;
  {
    std::istringstream in(line);
    std::string patch_key, colours_key, entries_key, rest;
    in >> patch_key >> book.patch >> colours_key >> colours >> entries_key >> count;
    if (!in || patch_key != "patch" || colours_key != "colours" || entries_key != "entries" ||
        (in >> rest)) {
      lines.fail("expected \"patch P colours C entries K\", got \"" + line + "\"");
    }
  }
  if (book.patch < 1 || book.patch > kMaxCodebookPatch) {
    lines.fail("patch must be in [1, " + std::to_string(kMaxCodebookPatch) + "], got " +
               std::to_string(book.patch));
  }
  if (colours < 1 || colours > kMaxCodebookColours) {
    lines.fail("colours must be in [1, " + std::to_string(kMaxCodebookColours) + "], got " +
               std::to_string(colours));
  }
  if (count < 1 || count > kMaxCodebookEntries) {
    lines.fail("entries must be in [1, " + std::to_string(kMaxCodebookEntries) + "], got " +
               std::to_string(count));
  }
  lines.expect(line, "the colours line");
  {
    std::istringstream in(line);
    std::string key, word;
    in >> key;
    if (key != "colours") lines.fail("expected \"colours #rrggbb ...\"");
    while (in >> word) {
      std::array<uint8_t, 3> colour{};
      if (!parse_colour(word, colour))
        lines.fail("expected a colour #rrggbb, got \"" + word + "\"");
      book.colours.push_back(colour);
    }
    if (static_cast<int>(book.colours.size()) != colours) {
      lines.fail("the header says " + std::to_string(colours) + " colours, the line has " +
                 std::to_string(book.colours.size()));
    }
  }
  const size_t letters = static_cast<size_t>(book.patch) * static_cast<size_t>(book.patch);
  std::set<std::string> seen;
  book.entries.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    lines.expect(line, "entry " + std::to_string(i) + " of " + std::to_string(count));
    if (line.size() != letters) {
      lines.fail("an entry is " + std::to_string(letters) + " letters, got " +
                 std::to_string(line.size()));
    }
    std::vector<uint8_t> entry(letters);
    for (size_t j = 0; j < letters; ++j) {
      const int c = letter_index(line[j]);
      if (c < 0 || c >= colours) {
        lines.fail(std::string("letter '") + line[j] + "' is not one of the " +
                   std::to_string(colours) + " colours");
      }
      entry[j] = static_cast<uint8_t>(c);
    }
    if (!seen.insert(line).second) lines.fail("entry repeated");
    book.entries.push_back(std::move(entry));
  }
  while (lines.next(line)) {
    if (!line.empty()) lines.fail("more entries than the header's " + std::to_string(count));
  }
  return book;
}

std::string codebook_text(const Codebook& book) {
  std::ostringstream out;
  out << kMagic << "\npatch " << book.patch << " colours " << book.colours.size() << " entries "
      << book.entries.size() << "\ncolours";
  for (const auto& c : book.colours) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "#%02x%02x%02x", c[0], c[1], c[2]);
    out << ' ' << hex;
  }
  out << '\n';
  for (const auto& entry : book.entries) {
    std::string line(entry.size(), '?');
    for (size_t j = 0; j < entry.size(); ++j) {
      line[j] = entry[j] < kMaxCodebookColours ? kCodebookLetters[entry[j]] : '?';
    }
    out << line << '\n';
  }
  return out.str();
}

Codebook read_codebook(const std::string& path) {
  return parse_codebook(read_bounded_file(path, kMaxCodebookBytes, "codebook"), path);
}

void write_codebook(const std::string& path, const Codebook& book) {
  const std::string text = codebook_text(book);
  parse_codebook(text, path);  // refuses what could not be read back
  write_file_atomically(path, text);
}

}  // namespace wc::model
