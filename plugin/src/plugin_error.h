// Errors inside the plugin carry the wc_result they become at the C boundary, and every entry
// point runs its body through call_guarded so that no C++ exception crosses it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "worldcast/worldcast.h"

namespace wc::plugin {

// An error with the result code the caller will see.
class PluginError : public std::runtime_error {
 public:
  PluginError(wc_result code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  wc_result code() const { return code_; }

 private:
  wc_result code_;
};

// Where a failure's message is kept besides the calling thread's last error: the session a
// call was made on (nullptr for calls without one).
class ErrorSink {
 public:
  virtual ~ErrorSink() = default;
  virtual void set_last_error(const std::string& message) = 0;
};

// Records `message` as the calling thread's last error (and in `sink`), logs it as a warning,
// and returns `code`.
wc_result fail(ErrorSink* sink, wc_result code, const std::string& where,
               const std::string& message);

// The calling thread's last error message ("" if none).
const std::string& thread_last_error();

// Copies `text` into a caller buffer with the two-call idiom of worldcast.h.
wc_result copy_out_string(const std::string& text, char* buffer, uint32_t capacity,
                          uint32_t* length);

// Runs `body` (returning wc_result) and turns every exception into a result: PluginError keeps
// its code, wc::Error becomes `engine_error_code` (the meaning depends on the call), memory
// exhaustion becomes WC_RESULT_ERROR_OUT_OF_MEMORY and anything else WC_RESULT_ERROR_INTERNAL.
// `where` names the C function in messages. Defined in call_guarded.cpp via a type-erased
// callback so this header stays free of torch.
using GuardedBody = wc_result (*)(void* context);
wc_result call_guarded_impl(const char* where, ErrorSink* sink, wc_result engine_error_code,
                            GuardedBody body, void* context) noexcept;

template <typename Body>
wc_result call_guarded(const char* where, ErrorSink* sink, wc_result engine_error_code,
                       Body&& body) noexcept {
  using Callable = std::remove_reference_t<Body>;
  return call_guarded_impl(
      where, sink, engine_error_code,
      [](void* context) -> wc_result { return (*static_cast<Callable*>(context))(); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace wc::plugin
