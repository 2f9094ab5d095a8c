// libFuzzer target: arbitrary bytes parsed as a codebook (engine/model/codebook.h). The parser
// must either refuse them with wc::Error naming where they came from, or return a book whose
// entries are distinct, patch × patch letters within its colours, and whose text reads back as
// the same book. Built by run_fuzz.sh.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "engine/core/error.h"
#include "engine/model/codebook.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();  // libFuzzer records the input as a crash
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  wc::model::Codebook book;
  try {
    book = wc::model::parse_codebook(text, "fuzz.txt");
  } catch (const wc::Error& e) {
    require(std::string(e.what()).find("fuzz.txt") != std::string::npos);
    return 0;
  }
  require(book.patch >= 1 && book.patch <= wc::model::kMaxCodebookPatch);
  require(!book.colours.empty() &&
          book.colours.size() <= static_cast<size_t>(wc::model::kMaxCodebookColours));
  require(book.size() <= wc::model::kMaxCodebookEntries);
  std::set<std::vector<uint8_t>> distinct;
  for (const std::vector<uint8_t>& entry : book.entries) {
    require(entry.size() == static_cast<size_t>(book.patch * book.patch));
    for (uint8_t letter : entry) require(letter < book.colours.size());
    require(distinct.insert(entry).second);
  }
  const wc::model::Codebook again =
      wc::model::parse_codebook(wc::model::codebook_text(book), "again");
  require(again.patch == book.patch && again.colours == book.colours &&
          again.entries == book.entries);
  return 0;
}
