// Decoding one UTF-8 sequence, header-only so that wc_game (standard library only) and wc_core
// share it: action scripts refuse what is not UTF-8, printable_text escapes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace wc {

struct Utf8Sequence {
  uint32_t code = 0;  // the code point
  size_t length = 0;  // its bytes; 0 when the bytes at the place are not valid UTF-8
};

// The valid UTF-8 sequence at text[i] (i < text.size()), or length 0 when the bytes there are not
// one (overlong forms, surrogates and code points above U+10FFFF included).
inline Utf8Sequence utf8_at(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  Utf8Sequence s;
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

}  // namespace wc
