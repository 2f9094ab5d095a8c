// The tile book file (engine/model/tile_book.h): text and files read back as the book written,
// every malformed book is refused naming its line and what is wrong, and its token ids.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>

#include "engine/core/error.h"
#include "engine/model/tile_book.h"

namespace wc::model {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

// 2x2 tiles in a 4x4 frame, whose overlay row has 3 places: the phase and two layers.
constexpr char kSmall[] =
    "worldcast tilebook 1\n"
    "tile 2 frame 4 4 colours 3 ground 3 layers 2\n"
    "colours #000000 #ffffff #62b24a\n"
    "abca\n"
    "bbcc\n"
    "aaab\n"
    "layer sprite 1 1 2 2 images 2\n"
    "a.b.\n"
    "....\n"
    "layer hud 0 0 3 1 images 1\n"
    "ccc\n";

// kSmall with line `number` (from 1) replaced by `line`.
std::string with_line(int number, const std::string& line) {
  std::istringstream in(kSmall);
  std::string out, text;
  for (int n = 1; std::getline(in, text); ++n) out += (n == number ? line : text) + "\n";
  return out;
}

std::string parse_error(const std::string& text) {
  try {
    parse_tile_book(text, "book.txt");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

void expect_same(const TileBook& a, const TileBook& b) {
  EXPECT_EQ(a.tile, b.tile);
  EXPECT_EQ(a.frame_width, b.frame_width);
  EXPECT_EQ(a.frame_height, b.frame_height);
  EXPECT_EQ(a.colours, b.colours);
  EXPECT_EQ(a.ground, b.ground);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t i = 0; i < a.layers.size(); ++i) {
    EXPECT_EQ(a.layers[i].name, b.layers[i].name);
    EXPECT_EQ(a.layers[i].x, b.layers[i].x);
    EXPECT_EQ(a.layers[i].y, b.layers[i].y);
    EXPECT_EQ(a.layers[i].width, b.layers[i].width);
    EXPECT_EQ(a.layers[i].height, b.layers[i].height);
    EXPECT_EQ(a.layers[i].images, b.layers[i].images);
  }
}

// A random book of 4x4 tiles in a 16x12 frame: 20 ground entries and 3 layers of 1..5 images.
TileBook random_tile_book(uint32_t seed) {
  std::mt19937 random(seed);
  TileBook book;
  book.tile = 4;
  book.frame_width = 16;
  book.frame_height = 12;
  for (int c = 0; c < 5; ++c) {
    book.colours.push_back(
        {static_cast<uint8_t>(random()), static_cast<uint8_t>(random()), static_cast<uint8_t>(c)});
  }
  const auto random_image = [&](size_t size, bool transparent) {
    std::vector<uint8_t> image(size);
    for (uint8_t& v : image) {
      v = transparent && random() % 3 == 0 ? kTransparentColour
                                           : static_cast<uint8_t>(random() % 5);
    }
    return image;
  };
  while (book.ground.size() < 20) {
    std::vector<uint8_t> entry = random_image(16, false);
    if (std::find(book.ground.begin(), book.ground.end(), entry) == book.ground.end())
      book.ground.push_back(entry);
  }
  for (int l = 0; l < 3; ++l) {
    TileLayer layer;
    layer.name = "layer_" + std::to_string(l);
    layer.x = static_cast<int>(random() % 16);
    layer.y = static_cast<int>(random() % 12);
    layer.width = 1 + static_cast<int>(random() % (16 - layer.x));
    layer.height = 1 + static_cast<int>(random() % (12 - layer.y));
    const size_t wanted = 1 + random() % 5;
    for (int tries = 0; tries < 50 && layer.images.size() < wanted; ++tries) {
      std::vector<uint8_t> image =
          random_image(static_cast<size_t>(layer.width) * layer.height, true);
      if (std::find(layer.images.begin(), layer.images.end(), image) == layer.images.end())
        layer.images.push_back(image);
    }
    book.layers.push_back(layer);
  }
  return book;
}

fs::path temp_dir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("wc_tile_book_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_error(const std::string& path) {
  try {
    read_tile_book(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TileBook, ReadsBackAsItselfThroughText) {
  EXPECT_EQ(tile_book_text(parse_tile_book(kSmall, "small")), kSmall);
  const TileBook small = parse_tile_book(kSmall, "small");
  EXPECT_EQ(small.layers[0].images[0],
            (std::vector<uint8_t>{0, kTransparentColour, 1, kTransparentColour}));
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const TileBook book = random_tile_book(seed);
    expect_same(parse_tile_book(tile_book_text(book), "text"), book);
  }
}

TEST(TileBook, AcceptsWindowsLineEndsAndTrailingEmptyLines) {
  std::string crlf;
  for (char c : std::string(kSmall)) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  expect_same(parse_tile_book(crlf + "\r\n\r\n", "crlf"), parse_tile_book(kSmall, "small"));
  expect_same(parse_tile_book(std::string(kSmall) + "\n\n", "trailing"),
              parse_tile_book(kSmall, "small"));
}

TEST(TileBook, RefusesABadHeaderNamingTheLine) {
  EXPECT_THAT(parse_error(with_line(1, "worldcast codebook 1")),
              AllOf(HasSubstr("book.txt: line 1"), HasSubstr("worldcast tilebook 1")));
  const auto header = [](const std::string& line) { return parse_error(with_line(2, line)); };
  EXPECT_THAT(header("tile 2 frame 4 colours 3 ground 3 layers 2"),
              AllOf(HasSubstr("line 2"), HasSubstr("expected \"tile T frame W H")));
  EXPECT_THAT(header("tile two frame 4 4 colours 3 ground 3 layers 2"),
              HasSubstr("line 2: tile must be an integer, got \"two\""));
  EXPECT_THAT(header("tile 1 frame 4 4 colours 3 ground 3 layers 2"),
              HasSubstr("line 2: tile must be in [2, 64], got 1"));
  EXPECT_THAT(header("tile 65 frame 4 4 colours 3 ground 3 layers 2"),
              HasSubstr("tile must be in [2, 64], got 65"));
  EXPECT_THAT(header("tile 2 frame 1 4 colours 3 ground 3 layers 2"),
              HasSubstr("line 2: frame width must be in [2, 2048], got 1"));
  EXPECT_THAT(header("tile 2 frame 4 4096 colours 3 ground 3 layers 2"),
              HasSubstr("frame height must be in [2, 2048], got 4096"));
  EXPECT_THAT(header("tile 2 frame 5 4 colours 3 ground 3 layers 2"),
              HasSubstr("line 2: frame width 5 is not a multiple of the tile side 2"));
  EXPECT_THAT(header("tile 2 frame 4 5 colours 3 ground 3 layers 2"),
              HasSubstr("line 2: frame height 5 is not a multiple of the tile side 2"));
  EXPECT_THAT(header("tile 2 frame 4 4 colours 0 ground 3 layers 2"),
              HasSubstr("line 2: colours must be in [1, 64], got 0"));
  EXPECT_THAT(header("tile 2 frame 4 4 colours 65 ground 3 layers 2"),
              HasSubstr("colours must be in [1, 64], got 65"));
  EXPECT_THAT(header("tile 2 frame 4 4 colours 3 ground 0 layers 2"),
              HasSubstr("line 2: ground must be in [1, 65536], got 0"));
  EXPECT_THAT(header("tile 2 frame 4 4 colours 3 ground 3 layers -1"),
              HasSubstr("layers must be in [0, 2]"));
}

TEST(TileBook, RefusesMoreLayersThanTheOverlayRowHolds) {
  EXPECT_THAT(parse_error(with_line(2, "tile 2 frame 4 4 colours 3 ground 3 layers 3")),
              AllOf(HasSubstr("line 2: layers must be in [0, 2]"),
                    HasSubstr("the overlay row's 3 places hold the phase and one place per layer"),
                    HasSubstr("got 3")));
}

TEST(TileBook, RefusesBadColoursAndGroundNamingTheLine) {
  EXPECT_THAT(parse_error(with_line(3, "colours #000000 #ffffff")),
              HasSubstr("line 3: the header says 3 colours, the line has 2"));
  EXPECT_THAT(parse_error(with_line(3, "colours #000000 #ffffff #zz0000")),
              HasSubstr("line 3: expected a colour #rrggbb, got \"#zz0000\""));
  EXPECT_THAT(parse_error(with_line(3, "palette #000000 #ffffff #62b24a")),
              HasSubstr("line 3: expected \"colours"));
  EXPECT_THAT(parse_error(with_line(4, "ab.a")),
              HasSubstr("line 4: ground entries are opaque: '.' at column 3"));
  EXPECT_THAT(parse_error(with_line(5, "abca")),
              HasSubstr("line 5: ground entry repeated: entry 1 is entry 0"));
  EXPECT_THAT(parse_error(with_line(6, "abd a")),
              HasSubstr("line 6: a ground entry is 4 letters, got 5"));
  EXPECT_THAT(parse_error(with_line(6, "abda")),
              HasSubstr("line 6: letter 'd' is not one of the 3 colours"));
}

TEST(TileBook, RefusesBadLayersNamingTheLine) {
  const auto layer = [](const std::string& line) { return parse_error(with_line(7, line)); };
  EXPECT_THAT(layer("layer sprite 1 1 2 2 pictures 2"),
              HasSubstr("line 7: expected \"layer NAME X Y WIDTH HEIGHT images N\""));
  EXPECT_THAT(layer("layer Sprite 1 1 2 2 images 2"),
              HasSubstr("line 7: a layer's name is [a-z0-9_-]+, got \"Sprite\""));
  EXPECT_THAT(parse_error(with_line(10, "layer sprite 0 0 3 1 images 1")),
              HasSubstr("line 10: layer name \"sprite\" repeated"));
  EXPECT_THAT(layer("layer sprite 1 1 0 2 images 2"),
              HasSubstr("line 7: width must be in [1, 3] (the layer lies inside the 4x4 frame)"));
  EXPECT_THAT(
      layer("layer sprite -1 1 2 2 images 2"),
      HasSubstr("line 7: x must be in [0, 3] (the layer lies inside the 4x4 frame), got -1"));
  EXPECT_THAT(layer("layer sprite 1 4 2 2 images 2"), HasSubstr("y must be in [0, 3]"));
  EXPECT_THAT(layer("layer sprite 3 1 2 2 images 2"),
              HasSubstr("line 7: width must be in [1, 1] (the layer lies inside the 4x4 frame), "
                        "got 2"));
  EXPECT_THAT(layer("layer sprite 1 1 2 9223372036854775807 images 2"),
              HasSubstr("height must be in [1, 3]"));
  EXPECT_THAT(layer("layer sprite 1 1 2 99999999999999999999 images 2"),
              HasSubstr("height must be an integer"));
  EXPECT_THAT(layer("layer sprite 1 1 2 2 images 0"),
              HasSubstr("line 7: images must be in [1, 1024], got 0"));
  EXPECT_THAT(layer("layer sprite 1 1 2 2 images 1025"), HasSubstr("images must be in [1, 1024]"));
  EXPECT_THAT(parse_error(with_line(9, "a.b.")),
              HasSubstr("line 9: image repeated in layer \"sprite\": image 1 is image 0"));
  EXPECT_THAT(parse_error(with_line(9, "...")),
              HasSubstr("line 9: an image of layer \"sprite\" is 4 letters, got 3"));
  EXPECT_THAT(parse_error(with_line(11, "ccz")),
              HasSubstr("line 11: letter 'z' is not one of the 3 colours"));
}

TEST(TileBook, RefusesATruncatedBookAndLinesAfterIt) {
  const std::string text = kSmall;
  EXPECT_THAT(parse_error(""), HasSubstr("book.txt: truncated: the first line missing"));
  size_t end = text.find('\n');
  for (; end + 1 < text.size(); end = text.find('\n', end + 1)) {
    EXPECT_THAT(parse_error(text.substr(0, end + 1)),
                AllOf(HasSubstr("book.txt: truncated"), HasSubstr("missing at the end")));
  }
  EXPECT_THAT(parse_error(text.substr(0, text.size() - 4)),
              HasSubstr("truncated: image 0 of layer \"hud\" missing at the end"));
  EXPECT_THAT(parse_error(text + "\nccc\n"),
              HasSubstr("line 13: more lines than the header's 3 ground entries and 2 layers"));
}

TEST(TileBook, KnowsItsTextByTheFirstLine) {
  EXPECT_TRUE(is_tile_book_text(kSmall));
  EXPECT_TRUE(is_tile_book_text("worldcast tilebook 1"));
  EXPECT_TRUE(is_tile_book_text("worldcast tilebook 1\r\nanything"));
  EXPECT_FALSE(is_tile_book_text("worldcast codebook 1\npatch 8 colours 1 entries 1\n"));
  EXPECT_FALSE(is_tile_book_text("worldcast tilebook 10\n"));
  EXPECT_FALSE(is_tile_book_text(" worldcast tilebook 1\n"));
  EXPECT_FALSE(is_tile_book_text(""));
}

TEST(TileBook, ReadsBackAsItselfThroughAFile) {
  const fs::path dir = temp_dir("roundtrip");
  const TileBook book = random_tile_book(3);
  write_tile_book((dir / "tiles.txt").string(), book);
  expect_same(read_tile_book((dir / "tiles.txt").string()), book);

  TileBook outside = book;
  outside.layers[0].x = book.frame_width;
  try {
    write_tile_book((dir / "bad.txt").string(), outside);
    ADD_FAILURE() << "a layer outside the frame was written";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("bad.txt"), HasSubstr("x must be in")));
  }
  TileBook see_through = book;
  see_through.ground[0][0] = kTransparentColour;
  EXPECT_THROW(write_tile_book((dir / "bad.txt").string(), see_through), Error);
  EXPECT_FALSE(fs::exists(dir / "bad.txt"));
  fs::remove_all(dir);
}

TEST(TileBook, RefusesFilesThatAreNotRegularNamingThePath) {
  const fs::path dir = temp_dir("files");
  EXPECT_THAT(read_error((dir / "missing.txt").string()), HasSubstr("missing.txt"));
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(read_error(fifo.string()),  // must not block
              AllOf(HasSubstr(fifo.string()), HasSubstr("regular file")));
  EXPECT_THAT(read_error(dir.string()), AllOf(HasSubstr(dir.string()), HasSubstr("regular file")));
  fs::remove_all(dir);
}

TEST(TileBook, NumbersGroundPhasesLayersAndThePad) {
  TileBook book;  // 128x128 frames of 16-pixel tiles
  book.ground.resize(176);
  for (const int images : {12, 1, 11, 11, 11}) {
    TileLayer layer;
    layer.images.resize(static_cast<size_t>(images));
    book.layers.push_back(layer);
  }
  EXPECT_EQ(book.ground_rows(), 9);
  EXPECT_EQ(book.ground_cols(), 9);
  EXPECT_EQ(book.grid_h(), 10);
  EXPECT_EQ(book.grid_w(), 9);
  EXPECT_EQ(book.phase_id(0), 176);
  EXPECT_EQ(book.phase_id(3), 179);
  EXPECT_EQ(book.layer_first_id(0), 180);
  EXPECT_EQ(book.layer_first_id(1), 192);
  EXPECT_EQ(book.layer_first_id(2), 193);
  EXPECT_EQ(book.layer_first_id(4), 215);
  EXPECT_EQ(book.pad_id(), 226);
  EXPECT_EQ(book.vocab(), 227);
  EXPECT_THROW(book.layer_first_id(5), std::out_of_range);
  EXPECT_THROW(book.layer_first_id(-1), std::out_of_range);
  book.layers.clear();
  EXPECT_EQ(book.pad_id(), 180);
}

// Random edits of a good book: each parses (and reads back as itself) or is refused with a
// wc::Error naming the text; nothing else escapes.
TEST(TileBook, MutatedBooksParseOrAreRefusedWithAnError) {
  std::mt19937 random(2024);
  const std::string alphabet = "abcz.#-_ 0123456789\n\r\t\xff";
  const auto pick = [&](size_t n) { return static_cast<size_t>(random() % n); };
  int refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string text = kSmall;
    for (int edit = 0, edits = 1 + static_cast<int>(pick(3)); edit < edits; ++edit) {
      if (text.empty()) text = "\n";
      const size_t at = pick(text.size());
      switch (pick(5)) {
        case 0:
          text[at] = alphabet[pick(alphabet.size())];
          break;
        case 1:
          text.insert(at, 1, alphabet[pick(alphabet.size())]);
          break;
        case 2:
          text.erase(at, 1 + pick(4));
          break;
        case 3:
          text.insert(at, text.substr(pick(text.size()), 1 + pick(12)));
          break;
        default:
          text[at] = static_cast<char>(random());
      }
    }
    try {
      const TileBook book = parse_tile_book(text, "mutant.txt");
      expect_same(parse_tile_book(tile_book_text(book), "again"), book);
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("mutant.txt")) << text;
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a wc::Error: " << e.what() << "\n" << text;
    }
  }
  EXPECT_GT(refused, 200);
}

}  // namespace
}  // namespace wc::model
