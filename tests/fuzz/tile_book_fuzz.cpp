// libFuzzer target: arbitrary bytes parsed as a tile book (engine/model/tile_book.h). The parser
// must either refuse them with wc::Error naming where they came from, or return a book whose
// ground entries are distinct opaque tiles within its colours, whose layers lie inside its frame
// and fit the overlay row, and whose text reads back as the same book. Built by run_fuzz.sh.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "engine/core/error.h"
#include "engine/model/tile_book.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();  // libFuzzer records the input as a crash
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  wc::model::TileBook book;
  try {
    book = wc::model::parse_tile_book(text, "fuzz.txt");
  } catch (const wc::Error& e) {
    require(std::string(e.what()).find("fuzz.txt") != std::string::npos);
    return 0;
  }
  require(book.tile >= 2 && book.tile <= wc::model::kMaxTileSide);
  require(book.frame_width % book.tile == 0 && book.frame_height % book.tile == 0);
  require(static_cast<int>(book.layers.size()) + 1 <= book.grid_w());
  std::set<std::vector<uint8_t>> distinct;
  for (const std::vector<uint8_t>& entry : book.ground) {
    require(entry.size() == static_cast<size_t>(book.tile * book.tile));
    for (uint8_t letter : entry) require(letter < book.colours.size());
    require(distinct.insert(entry).second);
  }
  for (const wc::model::TileLayer& layer : book.layers) {
    require(layer.x >= 0 && layer.y >= 0 && layer.x + layer.width <= book.frame_width &&
            layer.y + layer.height <= book.frame_height && !layer.images.empty());
    for (const std::vector<uint8_t>& image : layer.images) {
      require(image.size() == static_cast<size_t>(layer.width * layer.height));
      for (uint8_t letter : image) {
        require(letter < book.colours.size() || letter == wc::model::kTransparentColour);
      }
    }
  }
  require(book.vocab() == book.pad_id() + 1);
  const wc::model::TileBook again =
      wc::model::parse_tile_book(wc::model::tile_book_text(book), "again");
  require(again.tile == book.tile && again.colours == book.colours && again.ground == book.ground &&
          again.layers.size() == book.layers.size());
  return 0;
}
