// The catch-all around every C entry point, the per-thread last error and the two-call string
// copy; see plugin_error.h.
#include <c10/util/Exception.h>

#include <cstring>
#include <new>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/model/memory_budget.h"
#include "plugin/src/plugin_error.h"

namespace wc::plugin {
namespace {

std::string& last_error_storage() {
  thread_local std::string message;
  return message;
}

}  // namespace

const std::string& thread_last_error() {
  return last_error_storage();
}

wc_result fail(ErrorSink* sink, wc_result code, const std::string& where,
               const std::string& message) {
  const std::string text = where + ": " + message;
  last_error_storage() = text;
  if (sink) sink->set_last_error(text);
  log_warning(text, " (", wc_result_string(code), ")");
  return code;
}

wc_result copy_out_string(const std::string& text, char* buffer, uint32_t capacity,
                          uint32_t* length) {
  if (!length) throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "length is NULL");
  if (!buffer && capacity > 0) {
    throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "buffer is NULL but capacity > 0");
  }
  const size_t needed = text.size() + 1;
  if (needed > UINT32_MAX) throw PluginError(WC_RESULT_ERROR_INTERNAL, "string too long");
  *length = static_cast<uint32_t>(needed);
  if (capacity == 0) return buffer ? WC_RESULT_INCOMPLETE : WC_RESULT_OK;
  const size_t n = std::min<size_t>(capacity - 1, text.size());
  std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
  return needed > capacity ? WC_RESULT_INCOMPLETE : WC_RESULT_OK;
}

wc_result call_guarded_impl(const char* where, ErrorSink* sink, wc_result engine_error_code,
                            GuardedBody body, void* context) noexcept {
  // Each handler only builds a string and records it; should that itself throw (no memory
  // left for the message), the outer catch still returns a code.
  try {
    try {
      return body(context);
    } catch (const PluginError& error) {
      return fail(sink, error.code(), where, error.what());
    } catch (const model::OutOfMemory& error) {
      return fail(sink, WC_RESULT_ERROR_OUT_OF_MEMORY, where, error.what());
    } catch (const Error& error) {
      return fail(sink, engine_error_code, where, error.what());
    } catch (const std::bad_alloc&) {
      return fail(sink, WC_RESULT_ERROR_OUT_OF_MEMORY, where, "out of memory");
    } catch (const c10::OutOfMemoryError& error) {
      return fail(sink, WC_RESULT_ERROR_OUT_OF_MEMORY, where, error.what_without_backtrace());
    } catch (const c10::Error& error) {
      const std::string message = error.what_without_backtrace();
      // The CPU allocator reports exhaustion as a plain c10::Error.
      const bool out_of_memory = message.find("can't allocate memory") != std::string::npos ||
                                 message.find("out of memory") != std::string::npos;
      return fail(sink, out_of_memory ? WC_RESULT_ERROR_OUT_OF_MEMORY : WC_RESULT_ERROR_INTERNAL,
                  where, message);
    } catch (const std::exception& error) {
      return fail(sink, WC_RESULT_ERROR_INTERNAL, where, error.what());
    } catch (...) {
      return fail(sink, WC_RESULT_ERROR_INTERNAL, where, "unknown exception");
    }
  } catch (...) {
    return WC_RESULT_ERROR_OUT_OF_MEMORY;
  }
}

}  // namespace wc::plugin
