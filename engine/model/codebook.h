// The token model's tokenizer table: the game's square patches as palette colours. Note [Patch
// tokens] (tokenizer.h) says why a table of patches is the whole tokenizer for this game.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace wc::model {

// A text file, so that a bad one is named by line (`worldcast codebook --write` makes it):
//
//   worldcast codebook 1
//   patch 8 colours 26 entries 8192
//   colours #62b24a #2e66cc ...
//   <patch*patch letters, row by row>      (one line per entry, entry 0 first)
//
// A letter is an index into the colours, from kCodebookLetters. Entries are distinct.
inline constexpr char kCodebookLetters[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-+";
inline constexpr int kMaxCodebookColours = 64;
inline constexpr int kMaxCodebookPatch = 32;
inline constexpr int kMaxCodebookEntries = 1 << 17;
// A codebook file larger than this is refused before it is read (the largest legal book is
// about 136 MB at 32x32 patches; the game's is under 1 MB).
inline constexpr int64_t kMaxCodebookBytes = int64_t{160} << 20;

struct Codebook {
  int patch = 8;                                // a patch's side in pixels
  std::vector<std::array<uint8_t, 3>> colours;  // RGB
  std::vector<std::vector<uint8_t>> entries;    // patch * patch colour indices, row-major
  int size() const { return static_cast<int>(entries.size()); }
  // Entry `index` as RGB bytes, row-major (patch * patch * 3).
  std::vector<uint8_t> rgb(int index) const;
};

// Throws wc::Error naming the path and the line for a missing, oversized, non-regular or
// truncated file, a letter outside the colours, a repeated entry or counts that disagree.
Codebook read_codebook(const std::string& path);
// Writes atomically; throws wc::Error naming the path for a book read_codebook would refuse.
void write_codebook(const std::string& path, const Codebook& book);

std::string codebook_text(const Codebook& book);
Codebook parse_codebook(const std::string& text, const std::string& where);

}  // namespace wc::model
