// LibTorch's errors as one line a user can read.
#pragma once

#include <c10/util/Exception.h>

#include <string>

namespace wc {

// Note [LibTorch errors]: a c10::Error's what() carries a C++ backtrace of dozens of lines, and
// what_without_backtrace() can still hold several (the failed check, then where it was raised
// and a context line per caller). A user gets the first non-empty line of the latter, made
// printable (Note [Printable text]): what failed, never the backtrace.
std::string torch_error_line(const c10::Error& error);

}  // namespace wc
