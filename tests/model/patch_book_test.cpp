// Note [Patch snap]'s book file: a book reads back as itself through text and file, and every
// malformed file is refused naming the file, the line and what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "engine/core/error.h"
#include "engine/model/patch_book.h"

namespace wc::model {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A random book of distinct 2x2 patches on a 6x4 frame (a 3x2 grid), some bound to cells.
PatchBook random_book(uint32_t seed, int patches) {
  std::mt19937 random(seed);
  PatchBook book;
  book.size = 2;
  book.frame_width = 6;
  book.frame_height = 4;
  book.colours = 64;
  while (static_cast<int>(book.patches.size()) < patches) {
    std::vector<uint8_t> patch(4);
    for (uint8_t& index : patch) index = static_cast<uint8_t>(random() % 64);
    if (std::find(book.patches.begin(), book.patches.end(), patch) != book.patches.end()) continue;
    book.patches.push_back(patch);
    std::vector<int> cells;
    if (random() % 3 == 0)
      cells = {static_cast<int>(random() % 3), 3 + static_cast<int>(random() % 3)};
    book.cells.push_back(cells);
  }
  return book;
}

std::string error_of(const std::string& text) {
  try {
    parse_patch_book(text, "book.txt");
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(PatchBook, ReadsBackAsItselfThroughTextAndFile) {
  const PatchBook book = random_book(std::random_device{}(), 50);  // fresh random inputs
  const PatchBook parsed = parse_patch_book(patch_book_text(book), "text");
  EXPECT_EQ(parsed.patches, book.patches);
  EXPECT_EQ(parsed.cells, book.cells);
  EXPECT_EQ(parsed.size, 2);
  EXPECT_EQ(parsed.grid_w(), 3);
  EXPECT_EQ(parsed.grid_h(), 2);
  const fs::path path = fs::path(testing::TempDir()) / "patch_book_round_trip.txt";
  write_patch_book(path.string(), book);
  const PatchBook read = read_patch_book(path.string());
  EXPECT_EQ(read.patches, book.patches);
  EXPECT_EQ(read.cells, book.cells);
  EXPECT_EQ(read.colours, 64);
  fs::remove(path);
}

TEST(PatchBook, RefusesMalformedFilesNamingTheLine) {
  const std::string head = "worldcast patch book 1\nsize 2 frame 6x4 colours 5 patches 2\n";
  EXPECT_THAT(error_of(""), HasSubstr("book.txt: truncated"));
  EXPECT_THAT(error_of("worldcast patch book 2\n"), HasSubstr("line 1: expected"));
  EXPECT_THAT(error_of("worldcast patch book 1\nsize 2 frame 6by4 colours 5 patches 2\n"),
              HasSubstr("line 2: frame"));
  EXPECT_THAT(error_of("worldcast patch book 1\nsize 4 frame 6x4 colours 5 patches 2\n"),
              HasSubstr("multiple of the size"));
  EXPECT_THAT(error_of(head + "abcd *\n"), HasSubstr("truncated: patch 2 of 2"));
  EXPECT_THAT(error_of(head + "abcd *\nabcf *\n"), HasSubstr("line 4: letter 'f' at pixel 3"));
  EXPECT_THAT(error_of(head + "abcd *\nab *\n"), HasSubstr("line 4: a patch has 4 letters"));
  EXPECT_THAT(error_of(head + "abcd *\nabcd *\n"), HasSubstr("line 4: this patch is already"));
  EXPECT_THAT(error_of(head + "abcd *\nabce 2.0\n"), HasSubstr("line 4: cell \"2.0\""));
  EXPECT_THAT(error_of(head + "abcd *\nabce 1.x\n"), HasSubstr("line 4: cell \"1.x\""));
  EXPECT_THAT(error_of(head + "abcd *\nabce\n"), HasSubstr("line 4: a patch is followed by"));
  EXPECT_THAT(error_of(head + "abcd *\nabce * 1.1\n"), HasSubstr("line 4: a patch is followed"));
  EXPECT_THAT(error_of(head + "abcd *\nabce 1.2\neeee *\n"),
              HasSubstr("line 5: more patches than the header's 2"));
  EXPECT_EQ(error_of(head + "abcd *\nabce 1.2 0.0\n\n"), "no error");
}

TEST(PatchBook, NamesAMissingFileAndLeavesNoHalfWrittenOne) {
  const fs::path path = fs::path(testing::TempDir()) / "no_such_patch_book.txt";
  EXPECT_THROW(
      {
        try {
          read_patch_book(path.string());
        } catch (const Error& error) {
          EXPECT_THAT(error.what(), HasSubstr(path.string()));
          throw;
        }
      },
      Error);
  // A book that would not read back is refused before the file is touched.
  PatchBook bad = random_book(7, 3);
  bad.patches[1] = bad.patches[0];
  EXPECT_THROW(write_patch_book(path.string(), bad), Error);
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace wc::model
