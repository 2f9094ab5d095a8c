// See torch_error.h.
#include "engine/core/torch_error.h"

#include <sstream>

#include "engine/core/printable.h"

namespace wc {

std::string torch_error_line(const c10::Error& error) {
  std::istringstream text(error.what_without_backtrace());
  for (std::string line; std::getline(text, line);) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const size_t last = line.find_last_not_of(" \t\r");
    return printable_text(line.substr(first, last - first + 1));
  }
  return "LibTorch failed without a message";
}

}  // namespace wc
