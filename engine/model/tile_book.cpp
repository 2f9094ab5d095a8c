// See tile_book.h.
#include "engine/model/tile_book.h"

#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "engine/core/atomic_file.h"
#include "engine/core/bounded_read.h"
#include "engine/core/error.h"
#include "engine/model/book_text.h"
#include "engine/model/codebook.h"

namespace wc::model {
namespace {

constexpr char kMagic[] = "worldcast tilebook 1";

struct Counts {
  int colours = 0, ground = 0, layers = 0;
};

// A frame side in [tile, kMaxTileFrameSide] and a whole number of tiles.
int frame_side(const BookLines& lines, const std::string& word, const std::string& name, int tile) {
  const int side = lines.integer(word, name, tile, kMaxTileFrameSide);
  if (side % tile != 0) {
    lines.fail(name + " " + word + " is not a multiple of the tile side " + std::to_string(tile));
  }
  return side;
}

Counts read_header(const BookLines& lines, const std::string& line, TileBook& book) {
  const std::vector<std::string> f =
      lines.fields(line, "tile T frame W H colours C ground G layers L");
  book.tile = lines.integer(f[0], "tile", 2, kMaxTileSide);
  book.frame_width = frame_side(lines, f[1], "frame width", book.tile);
  book.frame_height = frame_side(lines, f[2], "frame height", book.tile);
  Counts counts;
  counts.colours = lines.integer(f[3], "colours", 1, kMaxCodebookColours);
  counts.ground = lines.integer(f[4], "ground", 1, kMaxTileGround);
  const int places = book.grid_w();
  counts.layers = lines.integer(f[5], "layers", 0, places - 1,
                                " (the overlay row's " + std::to_string(places) +
                                    " places hold the phase and one place per layer)");
  return counts;
}

void read_ground(BookLines& lines, int count, int colours, TileBook& book) {
  const size_t letters = static_cast<size_t>(book.tile) * static_cast<size_t>(book.tile);
  std::map<std::string, int> seen;
  std::string line;
  book.ground.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    lines.expect(line, "ground entry " + std::to_string(i) + " of " + std::to_string(count));
    const size_t dot = line.find(kTileTransparent);
    if (dot != std::string::npos) {
      lines.fail("ground entries are opaque: '" + std::string(1, kTileTransparent) +
                 "' at column " + std::to_string(dot + 1));
    }
    book.ground.push_back(parse_letters(lines, line, letters, colours, "a ground entry", false));
    const auto [at, fresh] = seen.emplace(line, i);
    if (!fresh) {
      lines.fail("ground entry repeated: entry " + std::to_string(i) + " is entry " +
                 std::to_string(at->second));
    }
  }
}

bool is_layer_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The rectangle of a layer line: at least a pixel, inside the frame.
void read_layer_rect(const BookLines& lines, const std::vector<std::string>& f,
                     const TileBook& book, TileLayer& layer) {
  const int w = book.frame_width, h = book.frame_height;
  const std::string frame =
      " (the layer lies inside the " + std::to_string(w) + "x" + std::to_string(h) + " frame)";
  layer.x = lines.integer(f[1], "x", 0, w - 1, frame);
  layer.y = lines.integer(f[2], "y", 0, h - 1, frame);
  layer.width = lines.integer(f[3], "width", 1, w - layer.x, frame);
  layer.height = lines.integer(f[4], "height", 1, h - layer.y, frame);
}

TileLayer read_layer(BookLines& lines, int index, int colours, const TileBook& book) {
  std::string line;
  lines.expect(line, "layer " + std::to_string(index));
  const std::vector<std::string> f = lines.fields(line, "layer NAME X Y WIDTH HEIGHT images N");
  TileLayer layer;
  layer.name = f[0];
  if (!is_layer_name(layer.name)) {
    lines.fail("a layer's name is [a-z0-9_-]+, got \"" + layer.name + "\"");
  }
  for (const TileLayer& before : book.layers) {
    if (before.name == layer.name) lines.fail("layer name \"" + layer.name + "\" repeated");
  }
  read_layer_rect(lines, f, book, layer);
  const int count = lines.integer(f[5], "images", 1, kMaxLayerImages);
  const size_t letters = static_cast<size_t>(layer.width) * static_cast<size_t>(layer.height);
  const std::string of_layer = "layer \"" + layer.name + "\"";
  std::map<std::string, int> seen;
  for (int i = 0; i < count; ++i) {
    lines.expect(line, "image " + std::to_string(i) + " of " + of_layer);
    layer.images.push_back(
        parse_letters(lines, line, letters, colours, "an image of " + of_layer, true));
    const auto [at, fresh] = seen.emplace(line, i);
    if (!fresh) {
      lines.fail("image repeated in " + of_layer + ": image " + std::to_string(i) + " is image " +
                 std::to_string(at->second));
    }
  }
  return layer;
}

}  // namespace

int64_t TileBook::layer_first_id(int layer) const {
  if (layer < 0 || layer >= static_cast<int>(layers.size())) {
    throw std::out_of_range("tile book: layer " + std::to_string(layer) + " of " +
                            std::to_string(layers.size()));
  }
  int64_t id = ground_size() + 4;
  for (int i = 0; i < layer; ++i) id += static_cast<int64_t>(layers[i].images.size());
  return id;
}

int64_t TileBook::pad_id() const {
  int64_t id = ground_size() + 4;
  for (const TileLayer& layer : layers) id += static_cast<int64_t>(layer.images.size());
  return id;
}

TileBook parse_tile_book(const std::string& text, const std::string& where) {
  BookLines lines(text, where);
  std::string line;
  lines.expect(line, "the first line");
  if (line != kMagic) lines.fail(std::string("expected \"") + kMagic + "\"");
  lines.expect(line, "the header");
  TileBook book;
  const Counts counts = read_header(lines, line, book);
  lines.expect(line, "the colours line");
  book.colours = parse_colours_line(lines, line, counts.colours);
  read_ground(lines, counts.ground, counts.colours, book);
  for (int i = 0; i < counts.layers; ++i) {
    book.layers.push_back(read_layer(lines, i, counts.colours, book));
  }
  lines.expect_end("more lines than the header's " + std::to_string(counts.ground) +
                   " ground entries and " + std::to_string(counts.layers) + " layers");
  return book;
}

std::string tile_book_text(const TileBook& book) {
  std::ostringstream out;
  out << kMagic << "\ntile " << book.tile << " frame " << book.frame_width << ' '
      << book.frame_height << " colours " << book.colours.size() << " ground " << book.ground.size()
      << " layers " << book.layers.size() << '\n';
  write_colours_line(out, book.colours);
  for (const auto& entry : book.ground) out << letters_text(entry) << '\n';
  for (const TileLayer& layer : book.layers) {
    out << "layer " << layer.name << ' ' << layer.x << ' ' << layer.y << ' ' << layer.width << ' '
        << layer.height << " images " << layer.images.size() << '\n';
    for (const auto& image : layer.images) out << letters_text(image) << '\n';
  }
  return out.str();
}

TileBook read_tile_book(const std::string& path) {
  return parse_tile_book(read_bounded_file(path, kMaxTileBookBytes, "tile book"), path);
}

void write_tile_book(const std::string& path, const TileBook& book) {
  const std::string text = tile_book_text(book);
  parse_tile_book(text, path);  // refuses what could not be read back
  write_file_atomically(path, text);
}

bool is_tile_book_text(const std::string& text) {
  std::string first = text.substr(0, text.find('\n'));
  if (!first.empty() && first.back() == '\r') first.pop_back();
  return first == kMagic;
}

}  // namespace wc::model
