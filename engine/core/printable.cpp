// See printable.h.
#include "engine/core/printable.h"

#include <cstdint>

namespace wc {
namespace {

// The code point of the valid UTF-8 sequence at text[i] and its length, or length 0 when the
// bytes there are not one (overlong forms, surrogates and code points above U+10FFFF included).
struct Sequence {
  uint32_t code = 0;
  size_t length = 0;
};

Sequence utf8_at(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  Sequence s;
  if (lead >= 0xC2 && lead <= 0xDF) {
    s = {lead & 0x1Fu, 2};
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    s = {lead & 0x0Fu, 3};
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    s = {lead & 0x07u, 4};
  } else {
    return {};
  }
  if (i + s.length > text.size()) return {};
  for (size_t k = 1; k < s.length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    s.code = (s.code << 6) | (byte(i + k) & 0x3Fu);
  }
  if (s.length == 3 && (s.code < 0x800 || (s.code >= 0xD800 && s.code <= 0xDFFF))) return {};
  if (s.length == 4 && (s.code < 0x10000 || s.code > 0x10FFFF)) return {};
  return s;
}

bool is_control(uint32_t code) {
  return (code < 0x20 && code != '\n' && code != '\t') || (code >= 0x7F && code <= 0x9F);
}

}  // namespace

std::string printable_text(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Sequence s = utf8_at(text, i);
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
