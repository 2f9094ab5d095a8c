// See patch_book.h.
#include "engine/model/patch_book.h"

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/core/atomic_file.h"
#include "engine/core/bounded_read.h"
#include "engine/core/error.h"

namespace wc::model {
namespace {

constexpr char kMagic[] = "worldcast patch book 1";
constexpr int kMaxFrameSide = 1 << 14;

int letter_index(char letter) {
  const char* at = std::strchr(kPatchLetters, letter);
  return letter != '\0' && at ? static_cast<int>(at - kPatchLetters) : -1;
}

// Reads one line at a time and names it in every error.
class LineReader {
 public:
  LineReader(const std::string& text, std::string where) : in_(text), where_(std::move(where)) {}

  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    ++number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_, "line " + std::to_string(number_) + ": " + what);
  }
  void expect_more(std::string& line, const std::string& what) {
    if (!next(line)) throw Error(where_, "truncated: " + what + " missing at the end");
  }

 private:
  std::istringstream in_;
  std::string where_;
  int number_ = 0;
};

// "size 8 frame 128x128 colours 26 patches 4096"
void read_header(LineReader& reader, const std::string& line, PatchBook& book, int64_t& count) {
  std::istringstream in(line);
  std::string size_key, frame_key, frame, colours_key, patches_key, rest;
  in >> size_key >> book.size >> frame_key >> frame >> colours_key >> book.colours >> patches_key >>
      count;
  if (!in || size_key != "size" || frame_key != "frame" || colours_key != "colours" ||
      patches_key != "patches" || (in >> rest)) {
    reader.fail("expected \"size S frame WxH colours C patches K\", got \"" + line + "\"");
  }
  const size_t x = frame.find('x');
  try {
    if (x == std::string::npos) throw std::invalid_argument("no x");
    size_t used = 0;
    book.frame_width = std::stoi(frame.substr(0, x), &used);
    if (used != x) throw std::invalid_argument("width");
    book.frame_height = std::stoi(frame.substr(x + 1), &used);
    if (used != frame.size() - x - 1) throw std::invalid_argument("height");
  } catch (const std::exception&) {
    reader.fail("frame: expected WIDTHxHEIGHT, got \"" + frame + "\"");
  }
  if (book.size < 1 || book.size > kMaxPatchSide)
    reader.fail("size: must be 1 to " + std::to_string(kMaxPatchSide));
  if (book.frame_width < book.size || book.frame_width > kMaxFrameSide ||
      book.frame_height < book.size || book.frame_height > kMaxFrameSide) {
    reader.fail("frame: each side must be " + std::to_string(book.size) + " to " +
                std::to_string(kMaxFrameSide));
  }
  if (book.frame_width % book.size != 0 || book.frame_height % book.size != 0) {
    reader.fail("frame: each side must be a multiple of the size " + std::to_string(book.size));
  }
  if (book.colours < 1 || book.colours > kMaxPatchColours)
    reader.fail("colours: must be 1 to " + std::to_string(kMaxPatchColours));
  if (count < 1 || count > (int64_t{1} << 20)) reader.fail("patches: must be 1 to 1048576");
}

// "<letters> *" or "<letters> r.c r.c ..."
void read_patch(LineReader& reader, const std::string& line, PatchBook& book) {
  std::istringstream in(line);
  std::string letters, place;
  in >> letters;
  const size_t pixels = static_cast<size_t>(book.size) * book.size;
  if (letters.size() != pixels) {
    reader.fail("a patch has " + std::to_string(pixels) + " letters, this one " +
                std::to_string(letters.size()));
  }
  std::vector<uint8_t> patch(pixels);
  for (size_t i = 0; i < pixels; ++i) {
    const int index = letter_index(letters[i]);
    if (index < 0 || index >= book.colours) {
      reader.fail(std::string("letter '") + letters[i] + "' at pixel " + std::to_string(i) +
                  " is not one of the palette's " + std::to_string(book.colours) + " colours");
    }
    patch[i] = static_cast<uint8_t>(index);
  }
  std::vector<int> cells;
  bool anywhere = false;
  while (in >> place) {
    if (place == "*") {
      anywhere = true;
      continue;
    }
    int row = -1, column = -1;
    char dot = 0, extra = 0;
    std::istringstream cell(place);
    if (!(cell >> row >> dot >> column) || dot != '.' || (cell >> extra) || row < 0 || column < 0 ||
        row >= book.grid_h() || column >= book.grid_w()) {
      reader.fail("cell \"" + place + "\" is not \"row.column\" inside the " +
                  std::to_string(book.grid_h()) + "x" + std::to_string(book.grid_w()) + " grid");
    }
    cells.push_back(row * book.grid_w() + column);
  }
  if (anywhere == !cells.empty()) {
    reader.fail("a patch is followed by \"*\" (anywhere) or by its cells, not both nor neither");
  }
  book.patches.push_back(std::move(patch));
  book.cells.push_back(std::move(cells));
}

}  // namespace

PatchBook parse_patch_book(const std::string& text, const std::string& where) {
  LineReader reader(text, where);
  std::string line;
  reader.expect_more(line, "the first line \"" + std::string(kMagic) + "\"");
  if (line != kMagic) reader.fail("expected \"" + std::string(kMagic) + "\"");
  reader.expect_more(line, "the header line");
  PatchBook book;
  int64_t count = 0;
  read_header(reader, line, book, count);
  std::set<std::vector<uint8_t>> seen;
  for (int64_t i = 0; i < count; ++i) {
    reader.expect_more(line, "patch " + std::to_string(i + 1) + " of " + std::to_string(count));
    read_patch(reader, line, book);
    if (!seen.insert(book.patches.back()).second) reader.fail("this patch is already in the book");
  }
  while (reader.next(line)) {
    if (!line.empty()) reader.fail("more patches than the header's " + std::to_string(count));
  }
  return book;
}

std::string patch_book_text(const PatchBook& book) {
  std::ostringstream out;
  out << kMagic << "\n"
      << "size " << book.size << " frame " << book.frame_width << "x" << book.frame_height
      << " colours " << book.colours << " patches " << book.patches.size() << "\n";
  for (size_t i = 0; i < book.patches.size(); ++i) {
    for (uint8_t index : book.patches[i]) {
      out << (index < kMaxPatchColours ? kPatchLetters[index] : '?');
    }
    if (i >= book.cells.size() || book.cells[i].empty()) {
      out << " *";
    } else {
      for (int cell : book.cells[i]) {
        out << ' ' << cell / book.grid_w() << '.' << cell % book.grid_w();
      }
    }
    out << "\n";
  }
  return out.str();
}

PatchBook read_patch_book(const std::string& path) {
  return parse_patch_book(read_bounded_file(path, kMaxPatchBookBytes, "patch book"), path);
}

void write_patch_book(const std::string& path, const PatchBook& book) {
  const std::string text = patch_book_text(book);
  parse_patch_book(text, path);  // the book must read back as itself
  write_file_atomically(path, text);
}

}  // namespace wc::model
