// Text bound for a terminal or a host's log, made safe to show. See Note [Printable text].
#pragma once

#include <string>
#include <string_view>

namespace wc {

// Note [Printable text]
// Errors quote what they refuse: a JSON parser's "last read" bytes, an unknown key, a config's
// string value. Those come from files an attacker can write, and a raw ESC or C1 control byte in
// them reaches the user's terminal as a command (clear the screen, retitle the window, worse on
// some terminals); a byte that is not UTF-8 garbles the line. printable_text keeps valid UTF-8
// and the line breaks and tabs messages use, and writes every other control character (C0, DEL,
// the C1 range U+0080–U+009F) and every byte that does not start a valid UTF-8 sequence as
// \xNN. The CLI's error line and the default log sink pass everything through it.
std::string printable_text(std::string_view text);

}  // namespace wc
