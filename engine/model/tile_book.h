// The tile model's tokenizer table: the game's whole tiles and the screen-fixed layers drawn over
// them. Note [Tile tokens] (tile_tokenizer.h) says why a frame is tokens of whole tiles.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace wc::model {

// A text file, so that a bad one is named by line (`worldcast codebook --tiles` makes it):
//
//   worldcast tilebook 1
//   tile 16 frame 128 128 colours 26 ground 176 layers 5
//   colours #62b24a #2e66cc ...
//   <tile*tile letters, row by row>              (one line per ground entry, entry 0 first)
//   layer sprite 56 56 16 16 images 12           (name x y width height, in frame pixels)
//   <width*height letters or '.', row by row>    (one line per image; '.' is transparent)
//   layer hud 2 2 36 14 images 1
//   ...
//
// A letter is an index into the colours, from kCodebookLetters (codebook.h). Ground entries are
// opaque and distinct; a layer's images are distinct; a layer lies inside the frame. Layers are
// drawn in file order over the ground, each by one of its images.
inline constexpr char kTileTransparent = '.';
inline constexpr uint8_t kTransparentColour = 255;  // a layer pixel that shows what is below
inline constexpr int kMaxTileSide = 64;
inline constexpr int kMaxTileFrameSide = 2048;
inline constexpr int kMaxTileGround = 1 << 16;
inline constexpr int kMaxLayerImages = 1024;
// A tile book larger than this is refused before it is read (the game's is under 1 MB).
inline constexpr int64_t kMaxTileBookBytes = int64_t{64} << 20;

// A screen-fixed layer (the player's sprite, the HUD box, a HUD digit): a rectangle of the frame
// and the images that may fill it.
struct TileLayer {
  std::string name;  // [a-z0-9_-]+, unique in the book
  int x = 0, y = 0, width = 0, height = 0;
  std::vector<std::vector<uint8_t>> images;  // width*height colour indices or kTransparentColour
};

struct TileBook {
  int tile = 16;  // a tile's side in pixels
  int frame_width = 128;
  int frame_height = 128;
  std::vector<std::array<uint8_t, 3>> colours;  // RGB
  std::vector<std::vector<uint8_t>> ground;     // tile*tile colour indices, row-major
  std::vector<TileLayer> layers;

  // Note [Tile tokens]: the ground grid covers the view at either phase of the tile grid.
  int ground_rows() const { return frame_height / tile + 1; }
  int ground_cols() const { return frame_width / tile + 1; }
  // A frame's token grid: the ground rows, then one row holding the phase and the layers.
  int grid_h() const { return ground_rows() + 1; }
  int grid_w() const { return ground_cols(); }

  // Token ids: ground entries, then the four phases, then each layer's images in turn, then the
  // pad of the overlay row's unused places. The mask is vocab().
  int64_t ground_size() const { return static_cast<int64_t>(ground.size()); }
  int64_t phase_id(int quarter) const { return ground_size() + quarter; }
  int64_t layer_first_id(int layer) const;
  int64_t pad_id() const;
  int64_t vocab() const { return pad_id() + 1; }
};

// Throws wc::Error naming the path and the line for a missing, oversized, non-regular or
// truncated file, a letter outside the colours, a transparent ground pixel, a repeated entry or
// image, a layer outside the frame, more layers than the overlay row holds, or counts that
// disagree.
TileBook read_tile_book(const std::string& path);
// Writes atomically; throws wc::Error naming the path for a book read_tile_book would refuse.
void write_tile_book(const std::string& path, const TileBook& book);

std::string tile_book_text(const TileBook& book);
TileBook parse_tile_book(const std::string& text, const std::string& where);

// Whether `text` starts as a tile book (its first line), so a config's "codebook" may name
// either kind of table.
bool is_tile_book_text(const std::string& text);

}  // namespace wc::model
