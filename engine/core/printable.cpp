// See printable.h.
#include "engine/core/printable.h"

#include <cstdint>

#include "engine/core/utf8.h"

namespace wc {
namespace {

bool is_control(uint32_t code) {
  return (code < 0x20 && code != '\n' && code != '\t') || (code >= 0x7F && code <= 0x9F);
}

}  // namespace

std::string printable_text(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Utf8Sequence s = utf8_at(text, i);
    if (s.length == 0 || is_control(s.code)) {
      // An invalid byte alone, or every byte of a control character's sequence.
      const size_t shown = s.length == 0 ? 1 : s.length;
      for (size_t k = 0; k < shown; ++k) {
        const auto c = static_cast<unsigned char>(text[i + k]);
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
      }
      i += shown;
    } else {
      out.append(text.substr(i, s.length));
      i += s.length;
    }
  }
  return out;
}

}  // namespace wc
