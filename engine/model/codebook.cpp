// See codebook.h.
#include "engine/model/codebook.h"

#include <set>
#include <sstream>

#include "engine/core/atomic_file.h"
#include "engine/core/bounded_read.h"
#include "engine/core/error.h"
#include "engine/model/book_text.h"

namespace wc::model {
namespace {

constexpr char kMagic[] = "worldcast codebook 1";

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
  BookLines lines(text, where);
  std::string line;
  lines.expect(line, "the first line");
  if (line != kMagic) lines.fail(std::string("expected \"") + kMagic + "\"");
  lines.expect(line, "the header");
  const std::vector<std::string> header = lines.fields(line, "patch P colours C entries K");
  Codebook book;
  book.patch = lines.integer(header[0], "patch", 1, kMaxCodebookPatch);
  const int colours = lines.integer(header[1], "colours", 1, kMaxCodebookColours);
  const int count = lines.integer(header[2], "entries", 1, kMaxCodebookEntries);
  lines.expect(line, "the colours line");
  book.colours = parse_colours_line(lines, line, colours);
  const size_t letters = static_cast<size_t>(book.patch) * static_cast<size_t>(book.patch);
  std::set<std::string> seen;
  book.entries.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    lines.expect(line, "entry " + std::to_string(i) + " of " + std::to_string(count));
    book.entries.push_back(parse_letters(lines, line, letters, colours, "an entry", false));
    if (!seen.insert(line).second) lines.fail("entry repeated");
  }
  lines.expect_end("more entries than the header's " + std::to_string(count));
  return book;
}

std::string codebook_text(const Codebook& book) {
  std::ostringstream out;
  out << kMagic << "\npatch " << book.patch << " colours " << book.colours.size() << " entries "
      << book.entries.size() << '\n';
  write_colours_line(out, book.colours);
  for (const auto& entry : book.entries) out << letters_text(entry) << '\n';
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
