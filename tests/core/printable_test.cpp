// Note [Printable text]: control characters and bytes that are not UTF-8 are shown as \xNN;
// everything else, line breaks and tabs included, is kept as it is.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "engine/core/printable.h"

namespace wc {
namespace {

// Whether `text` is valid UTF-8 with no control character but the line break and the tab, by a
// plain decoder written apart from the one under test.
bool safe_for_a_terminal(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t n = 0;
    if (lead < 0x80) {
      n = 1;
    } else if ((lead >> 5) == 0x6) {
      n = 2;
    } else if ((lead >> 4) == 0xE) {
      n = 3;
    } else if ((lead >> 3) == 0x1E) {
      n = 4;
    }
    if (n == 0 || i + n > text.size()) return false;
    uint32_t code = n == 1 ? lead : lead & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      code = (code << 6) | (c & 0x3F);
    }
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < least[n] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    const bool control = code < 0x20 || (code >= 0x7F && code <= 0x9F);
    if (control && code != '\n' && code != '\t') return false;
    i += n;
  }
  return true;
}

TEST(PrintableText, KeepsTextAndLineBreaksAndEscapesControls) {
  EXPECT_EQ(printable_text("field 'hidden': got 3\n\tnext"), "field 'hidden': got 3\n\tnext");
  const std::string accents = "caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x8C\xB3";
  EXPECT_EQ(printable_text(accents), accents);
  EXPECT_EQ(printable_text("a\x1b[2Jb"), "a\\x1B[2Jb");
  EXPECT_EQ(printable_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable_text("\x7f\r"), "\\x7F\\x0D");
  EXPECT_EQ(printable_text("\xC2\x9B"
                           "31m"),
            "\\xC2\\x9B31m");  // C1 CSI
  EXPECT_EQ(printable_text("host\xFF"
                           "file"),
            "host\\xFFfile");
  EXPECT_EQ(printable_text("\xC0\xAF"), "\\xC0\\xAF");           // overlong '/'
  EXPECT_EQ(printable_text("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // a surrogate
  EXPECT_EQ(printable_text("\xE2\x86"), "\\xE2\\x86");           // cut short
  EXPECT_EQ(printable_text(""), "");
}

TEST(PrintableText, RandomBytesComeOutSafeAndSafeTextUnchanged) {
  std::mt19937 random(12345);
  for (int round = 0; round < 20000; ++round) {
    std::string text(random() % 24, '\0');
    for (char& c : text) {
      // Bias towards the interesting bytes: controls, leads and continuations.
      const uint32_t pick = random() % 4;
      const uint32_t byte = pick == 0   ? random() % 0x20
                            : pick == 1 ? 0x80 + random() % 0x80
                                        : random() % 0x100;
      c = static_cast<char>(byte);
    }
    const std::string shown = printable_text(text);
    ASSERT_TRUE(safe_for_a_terminal(shown)) << shown;
    if (safe_for_a_terminal(text)) {
      ASSERT_EQ(shown, text);
    } else {
      ASSERT_NE(shown, text);
    }
    ASSERT_EQ(printable_text(shown), shown);  // escaping twice changes nothing more
  }
}

}  // namespace
}  // namespace wc
