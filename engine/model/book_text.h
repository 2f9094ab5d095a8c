// The text of the tokenizer tables (codebook.h, tile_book.h): numbered lines, header fields,
// the colours line and rows of colour letters, so both files fail alike, naming the line.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace wc::model {

// A book's lines, numbered from 1 for its errors; a line's trailing '\r' is dropped.
class BookLines {
 public:
  BookLines(const std::string& text, std::string where) : in_(text), where_(std::move(where)) {}

  bool next(std::string& line);
  // The next line, or a wc::Error that the text ends where `what` was due.
  void expect(std::string& line, const std::string& what);
  // Only empty lines may follow; `what` says what any other line would be.
  void expect_end(const std::string& what);
  [[noreturn]] void fail(const std::string& what) const;

  // The words of `line` standing where `shape` has an upper-case word ("patch P colours C"); the
  // shape's other words must be there as they are.
  std::vector<std::string> fields(const std::string& line, const std::string& shape) const;
  // `word` as an integer in [low, high]; the error names `name` and adds `why` to the range.
  int integer(const std::string& word, const std::string& name, int64_t low, int64_t high,
              const std::string& why = "") const;

 private:
  std::istringstream in_;
  std::string where_;
  int number_ = 0;
};

using Rgb = std::array<uint8_t, 3>;

// `line` as "colours #rrggbb ..." with `count` colours.
std::vector<Rgb> parse_colours_line(const BookLines& lines, const std::string& line, int count);
// "colours #rrggbb ...\n".
void write_colours_line(std::ostream& out, const std::vector<Rgb>& colours);

// `line` as `size` letters of kCodebookLetters below `colours` (and '.', kTransparentColour, when
// `transparent`); `row` names it for a length error ("an entry").
std::vector<uint8_t> parse_letters(const BookLines& lines, const std::string& line, size_t size,
                                   int colours, const std::string& row, bool transparent);
// A row's letters, kTransparentColour as '.'.
std::string letters_text(const std::vector<uint8_t>& row);

}  // namespace wc::model
