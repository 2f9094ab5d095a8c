// The patch book of Note [Patch snap] (engine/model/patch_snap.h): the square patches of the
// training frames, as indices into the model's palette, and where on screen each may stand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wc::model {

// A text file, so that a bad one is named by line (`worldcast patches --write` makes it):
//
//   worldcast patch book 1
//   size 8 frame 128x128 colours 26 patches 4096
//   <size*size palette letters, row by row> *
//   <size*size palette letters> 7.7 7.8
//   ...
//
// A letter is a palette index in kPatchLetters. "*" lets a patch stand in any cell of the frame's
// grid; a list of "row.column" cells binds it to those cells (the screen-fixed sprite and HUD: a
// patch seen only where the survey found screen-fixed pixels). Patches are distinct.
inline constexpr char kPatchLetters[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-+";
inline constexpr int kMaxPatchColours = 64;
inline constexpr int kMaxPatchSide = 32;
inline constexpr int64_t kMaxPatchBookBytes = int64_t{160} << 20;  // Note [Bounded reads]

// How far Note [Patch snap] (patch_snap.h) may move a patch: the most pixels a snap may change
// in a world cell and in a screen-fixed one (a cell some patch is bound to), and how many pixels
// of change a world cell and a screen-fixed cell hold back (0: none).
struct PatchSnapLimits {
  int max_changed = 2;
  int fixed_max_changed = 64;
  int hold = 1;
  int fixed_hold = 1;
};

struct PatchBook {
  int size = 8;         // a patch's side in pixels; the grid starts at the frame's top-left corner
  int frame_width = 0;  // the frames the survey saw (cells are of their grid)
  int frame_height = 0;
  int colours = 0;  // the palette's size when surveyed: every index is below it
  std::vector<std::vector<uint8_t>> patches;  // size * size palette indices each, row-major
  std::vector<std::vector<int>> cells;        // per patch, row * grid_w + column; empty: anywhere

  int grid_w() const { return frame_width / size; }
  int grid_h() const { return frame_height / size; }
};

// Throws wc::Error naming the path, the line and what is wrong (a missing or truncated file, a
// letter outside the palette, a cell outside the grid, a repeated patch, a count that does not
// match the header).
PatchBook read_patch_book(const std::string& path);

// Writes `book` atomically (a failure leaves the file as it was). Throws wc::Error naming the path
// for a book that read_patch_book would refuse.
void write_patch_book(const std::string& path, const PatchBook& book);

// The book as text, and back (`where` names the text in errors); the file functions use these.
std::string patch_book_text(const PatchBook& book);
PatchBook parse_patch_book(const std::string& text, const std::string& where);

}  // namespace wc::model
