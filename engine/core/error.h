// The one exception type the engine throws for bad input and failed operations.
#pragma once

#include <stdexcept>
#include <string>

namespace wc {

// An error that names what was wrong and where: the file (or object) and the field inside it,
// so a user reading one line knows what to fix ("assets/x.safetensors: tensor 'w': shape ...").
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  Error(const std::string& where, const std::string& message)
      : std::runtime_error(where.empty() ? message : where + ": " + message) {}
};

}  // namespace wc
