// The exported C entry points of worldcast.h: handle lookup, struct-size checks, and every body
// run through call_guarded so that no exception leaves the library.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/core/cpu_features.h"
#include "engine/core/log.h"
#include "engine/game/action_script.h"
#include "plugin/src/handle_table.h"
#include "plugin/src/log_forwarding.h"
#include "plugin/src/plugin_error.h"
#include "plugin/src/plugin_session.h"
#include "plugin/src/runtime.h"
#include "worldcast/worldcast.h"

namespace wc::plugin {
namespace {

// The sizes of the structs in ABI 1.0. Structs only grow: a caller's struct_size below these
// is from no header that ever existed. Changing a number here breaks the ABI.
constexpr size_t kRuntimeDescV1 = 56;
constexpr size_t kSessionDescV1 = 72;
constexpr size_t kSessionInfoV1 = 100;
constexpr size_t kFrameRequestV1 = 32;
constexpr size_t kFrameV1 = 80;
constexpr size_t kVulkanExportV1 = 112;
constexpr size_t kStatsV1 = 224;
static_assert(sizeof(wc_runtime_desc) >= kRuntimeDescV1 &&
                  sizeof(wc_session_desc) >= kSessionDescV1 &&
                  sizeof(wc_session_info) >= kSessionInfoV1 &&
                  sizeof(wc_frame_request) >= kFrameRequestV1 && sizeof(wc_frame) >= kFrameV1 &&
                  sizeof(wc_vulkan_export) >= kVulkanExportV1 && sizeof(wc_stats) >= kStatsV1,
              "a public struct shrank: the ABI only grows");

HandleTable<Runtime>& runtimes() {
  static auto* table = new HandleTable<Runtime>(HandleTag::kRuntime);  // never destroyed: see
  return *table;                                                       // Note [Static lifetime]
}
HandleTable<PluginSession>& sessions() {
  static auto* table = new HandleTable<PluginSession>(HandleTag::kSession);
  return *table;
}
// Note [Static lifetime]: the tables are deliberately leaked so a host calling wc_* from its own
// static destructors (after ours would have run) still gets INVALID_HANDLE, not a crash.

// An input struct from a caller whose header may be older or newer than ours: copies the
// fields both know and zeroes the rest.
template <typename T>
T read_struct(const T* in, size_t v1_size, const char* name) {
  if (!in) throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, std::string(name) + " is NULL");
  if (in->struct_size < v1_size) {
    throw PluginError(WC_RESULT_ERROR_VERSION_MISMATCH,
                      std::string(name) + "->struct_size is " + std::to_string(in->struct_size) +
                          ", smaller than any version of the struct (" + std::to_string(v1_size) +
                          "): set it to sizeof(the struct)");
  }
  T out{};
  std::memcpy(&out, in, std::min<size_t>(in->struct_size, sizeof(T)));
  out.struct_size = static_cast<uint32_t>(sizeof(T));
  return out;
}

template <typename T>
void check_out_struct(const T* out, size_t v1_size, const char* name) {
  if (!out) throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, std::string(name) + " is NULL");
  if (out->struct_size < v1_size) {
    throw PluginError(WC_RESULT_ERROR_VERSION_MISMATCH,
                      std::string(name) + "->struct_size is " + std::to_string(out->struct_size) +
                          ", smaller than any version of the struct (" + std::to_string(v1_size) +
                          "): set it to sizeof(the struct)");
  }
}

// Writes the fields the caller's struct has room for; its struct_size stays as it was.
template <typename T>
void write_struct(T* out, const T& value) {
  const uint32_t size = out->struct_size;
  std::memcpy(out, &value, std::min<size_t>(size, sizeof(T)));
  out->struct_size = size;
}

std::string required_text(const char* text, const char* name) {
  if (!text) throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, std::string(name) + " is NULL");
  return text;
}

// Runs `body(session)` for a valid session handle, with the session's runtime as the log
// destination and the session as the place its errors are recorded.
template <typename Body>
wc_result with_session(const char* where, wc_session handle, wc_result engine_code,
                       Body&& body) noexcept {
  std::shared_ptr<PluginSession> session;
  const wc_result found =
      call_guarded(where, nullptr, WC_RESULT_ERROR_INTERNAL, [&]() -> wc_result {
        session = sessions().find(handle);
        if (!session) {
          throw PluginError(WC_RESULT_ERROR_INVALID_HANDLE,
                            "not a live session handle (null, destroyed, or another type)");
        }
        return WC_RESULT_OK;
      });
  if (found != WC_RESULT_OK) return found;
  ScopedLogTarget log(session->runtime().log_target());
  return call_guarded(where, session.get(), engine_code,
                      [&]() -> wc_result { return body(*session); });
}

std::shared_ptr<Runtime> find_runtime(wc_runtime handle) {
  std::shared_ptr<Runtime> runtime = runtimes().find(handle);
  if (!runtime) {
    throw PluginError(WC_RESULT_ERROR_INVALID_HANDLE,
                      "not a live runtime handle (null, destroyed, or another type)");
  }
  return runtime;
}

}  // namespace
}  // namespace wc::plugin

using namespace wc::plugin;

extern "C" {

WC_API uint32_t wc_abi_version(void) {
  return WC_ABI_VERSION;
}

WC_API const char* wc_result_string(wc_result result) {
  switch (result) {
    case WC_RESULT_OK:
      return "WC_RESULT_OK";
    case WC_RESULT_NOT_READY:
      return "WC_RESULT_NOT_READY";
    case WC_RESULT_FRAME_DROPPED:
      return "WC_RESULT_FRAME_DROPPED";
    case WC_RESULT_INCOMPLETE:
      return "WC_RESULT_INCOMPLETE";
    case WC_RESULT_ERROR_INVALID_ARGUMENT:
      return "WC_RESULT_ERROR_INVALID_ARGUMENT";
    case WC_RESULT_ERROR_INVALID_HANDLE:
      return "WC_RESULT_ERROR_INVALID_HANDLE";
    case WC_RESULT_ERROR_OUT_OF_MEMORY:
      return "WC_RESULT_ERROR_OUT_OF_MEMORY";
    case WC_RESULT_ERROR_UNSUPPORTED:
      return "WC_RESULT_ERROR_UNSUPPORTED";
    case WC_RESULT_ERROR_VERSION_MISMATCH:
      return "WC_RESULT_ERROR_VERSION_MISMATCH";
    case WC_RESULT_ERROR_BAD_CHECKPOINT:
      return "WC_RESULT_ERROR_BAD_CHECKPOINT";
    case WC_RESULT_ERROR_DEVICE_LOST:
      return "WC_RESULT_ERROR_DEVICE_LOST";
    case WC_RESULT_ERROR_INTERNAL:
      return "WC_RESULT_ERROR_INTERNAL";
    case WC_RESULT_ERROR_BUFFER_TOO_SMALL:
      return "WC_RESULT_ERROR_BUFFER_TOO_SMALL";
    case WC_RESULT_ERROR_IO:
      return "WC_RESULT_ERROR_IO";
    default:
      return "WC_RESULT_UNKNOWN";
  }
}

WC_API wc_result wc_last_error(char* buffer, uint32_t capacity, uint32_t* length) {
  return call_guarded("wc_last_error", nullptr, WC_RESULT_ERROR_INTERNAL, [&] {
    // A copy first: a failure of this very call would overwrite the message being read.
    const std::string message = thread_last_error();
    return copy_out_string(message, buffer, capacity, length);
  });
}

WC_API wc_result wc_runtime_create(const wc_runtime_desc* desc, wc_runtime* out_runtime) {
  return call_guarded("wc_runtime_create", nullptr, WC_RESULT_ERROR_INTERNAL, [&] {
    if (!out_runtime) throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "out_runtime is NULL");
    *out_runtime = WC_NULL_HANDLE;
    const wc_runtime_desc d = read_struct(desc, kRuntimeDescV1, "desc");
    if (WC_VERSION_MAJOR(d.abi_version) != WC_VERSION_MAJOR(WC_ABI_VERSION)) {
      throw PluginError(
          WC_RESULT_ERROR_VERSION_MISMATCH,
          "the host was built for ABI " + std::to_string(WC_VERSION_MAJOR(d.abi_version)) + "." +
              std::to_string(WC_VERSION_MINOR(d.abi_version)) + ", this library implements " +
              std::to_string(WC_VERSION_MAJOR(WC_ABI_VERSION)) + "." +
              std::to_string(WC_VERSION_MINOR(WC_ABI_VERSION)) +
              " (set desc.abi_version = WC_ABI_VERSION)");
    }
    auto runtime = std::make_shared<Runtime>(d);
    ScopedLogTarget log(runtime->log_target());
    wc::log_info("worldcast plugin: runtime on ", runtime->device().str());
    // Note [OpenBLAS kernels]: the host's process loaded OpenBLAS; only its environment can fix it.
    const std::string kernels = wc::blas_kernels_to_ask_for();
    if (runtime->device().is_cpu() && !kernels.empty()) {
      wc::log_warning("worldcast plugin: OpenBLAS chose its ", wc::blas_kernels_in_use(),
                      " kernels on a CPU that runs its ", kernels,
                      " ones; start the host with OPENBLAS_CORETYPE=", kernels,
                      " for float32 products several times faster");
    }
    *out_runtime = runtimes().insert(std::move(runtime));
    return WC_RESULT_OK;
  });
}

WC_API wc_result wc_runtime_destroy(wc_runtime runtime_handle) {
  return call_guarded("wc_runtime_destroy", nullptr, WC_RESULT_ERROR_INTERNAL, [&] {
    std::shared_ptr<Runtime> runtime = runtimes().remove(runtime_handle);
    if (!runtime) {
      throw PluginError(WC_RESULT_ERROR_INVALID_HANDLE,
                        "not a live runtime handle (null, destroyed, or another type)");
    }
    ScopedLogTarget log(runtime->log_target());
    for (auto& [handle, session] : sessions().all()) {
      if (session->runtime_ptr() == runtime) sessions().remove(handle);
    }
    return WC_RESULT_OK;
  });
}

WC_API wc_result wc_runtime_vulkan_device_extensions(wc_runtime runtime_handle, const char** names,
                                                     uint32_t capacity, uint32_t* count) {
  return call_guarded(
      "wc_runtime_vulkan_device_extensions", nullptr, WC_RESULT_ERROR_INTERNAL, [&] {
        const std::shared_ptr<Runtime> runtime = find_runtime(runtime_handle);
        ScopedLogTarget log(runtime->log_target());
        if (!count) throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "count is NULL");
        if (!names && capacity > 0) {
          throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "names is NULL but capacity > 0");
        }
        const std::vector<const char*>& list = runtime->vulkan()->host_extensions();
        *count = static_cast<uint32_t>(list.size());
        const size_t fill = std::min<size_t>(capacity, list.size());
        std::copy_n(list.begin(), fill, names);
        return names && fill < list.size() ? WC_RESULT_INCOMPLETE : WC_RESULT_OK;
      });
}

WC_API wc_result wc_session_create(wc_runtime runtime_handle, const wc_session_desc* desc,
                                   wc_session* out_session) {
  return call_guarded("wc_session_create", nullptr, WC_RESULT_ERROR_BAD_CHECKPOINT, [&] {
    if (!out_session) throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "out_session is NULL");
    *out_session = WC_NULL_HANDLE;
    const std::shared_ptr<Runtime> runtime = find_runtime(runtime_handle);
    ScopedLogTarget log(runtime->log_target());
    const wc_session_desc d = read_struct(desc, kSessionDescV1, "desc");
    const wc_session handle = sessions().insert(std::make_shared<PluginSession>(runtime, d));
    if (!runtimes().find(runtime_handle)) {
      // The runtime was destroyed while this session loaded: it would outlive its owner.
      sessions().remove(handle);
      throw PluginError(WC_RESULT_ERROR_INVALID_HANDLE, "the runtime was destroyed meanwhile");
    }
    *out_session = handle;
    return WC_RESULT_OK;
  });
}

WC_API wc_result wc_session_destroy(wc_session session_handle) {
  return call_guarded("wc_session_destroy", nullptr, WC_RESULT_ERROR_INTERNAL, [&] {
    std::shared_ptr<PluginSession> session = sessions().remove(session_handle);
    if (!session) {
      throw PluginError(WC_RESULT_ERROR_INVALID_HANDLE,
                        "not a live session handle (null, destroyed, or another type)");
    }
    // The runtime outlives the log scope even if this session held its last reference.
    const std::shared_ptr<Runtime> runtime = session->runtime_ptr();
    ScopedLogTarget log(runtime->log_target());
    session.reset();  // frees it here unless a call on another thread still uses it
    return WC_RESULT_OK;
  });
}

WC_API wc_result wc_session_last_error(wc_session session, char* buffer, uint32_t capacity,
                                       uint32_t* length) {
  return with_session(
      "wc_session_last_error", session, WC_RESULT_ERROR_INTERNAL,
      [&](PluginSession& s) { return copy_out_string(s.last_error(), buffer, capacity, length); });
}

WC_API wc_result wc_session_get_info(wc_session session, wc_session_info* out_info) {
  return with_session("wc_session_get_info", session, WC_RESULT_ERROR_INTERNAL,
                      [&](PluginSession& s) {
                        check_out_struct(out_info, kSessionInfoV1, "out_info");
                        wc_session_info info = s.info();
                        info.struct_size = static_cast<uint32_t>(sizeof(info));
                        write_struct(out_info, info);
                        return WC_RESULT_OK;
                      });
}

WC_API wc_result wc_session_push_action(wc_session session, int32_t action) {
  return with_session("wc_session_push_action", session, WC_RESULT_ERROR_INTERNAL,
                      [&](PluginSession& s) {
                        s.push_action(action);
                        return WC_RESULT_OK;
                      });
}

WC_API wc_result wc_session_step(wc_session session, uint32_t flags) {
  return with_session("wc_session_step", session, WC_RESULT_ERROR_INTERNAL, [&](PluginSession& s) {
    s.step(flags);
    return WC_RESULT_OK;
  });
}

WC_API wc_result wc_session_reset(wc_session session, uint64_t seed) {
  return with_session("wc_session_reset", session, WC_RESULT_ERROR_INTERNAL, [&](PluginSession& s) {
    s.reset(seed);
    return WC_RESULT_OK;
  });
}

WC_API wc_result wc_session_get_frame(wc_session session, const wc_frame_request* request,
                                      wc_frame* out_frame) {
  return with_session("wc_session_get_frame", session, WC_RESULT_ERROR_INTERNAL,
                      [&](PluginSession& s) {
                        const wc_frame_request r = read_struct(request, kFrameRequestV1, "request");
                        check_out_struct(out_frame, kFrameV1, "out_frame");
                        wc_frame frame{};
                        frame.struct_size = static_cast<uint32_t>(sizeof(frame));
                        const wc_result result = s.get_frame(r, frame);
                        if (result != WC_RESULT_NOT_READY) write_struct(out_frame, frame);
                        return result;
                      });
}

WC_API wc_result wc_session_release_frame(wc_session session, uint64_t release_token) {
  return with_session("wc_session_release_frame", session, WC_RESULT_ERROR_INTERNAL,
                      [&](PluginSession& s) {
                        s.release_frame(release_token);
                        return WC_RESULT_OK;
                      });
}

WC_API wc_result wc_session_export_vulkan(wc_session session, wc_vulkan_export* out_export) {
  return with_session("wc_session_export_vulkan", session, WC_RESULT_ERROR_INTERNAL,
                      [&](PluginSession& s) {
                        check_out_struct(out_export, kVulkanExportV1, "out_export");
                        wc_vulkan_export exported{};
                        exported.struct_size = static_cast<uint32_t>(sizeof(exported));
                        s.export_vulkan(exported);
                        write_struct(out_export, exported);
                        return WC_RESULT_OK;
                      });
}

WC_API wc_result wc_session_get_stats(wc_session session, wc_stats* stats) {
  return with_session("wc_session_get_stats", session, WC_RESULT_ERROR_INTERNAL,
                      [&](PluginSession& s) {
                        wc_stats full = read_struct(stats, kStatsV1, "stats");
                        if (full.head_capacity > 0 && !full.head_types && !full.head_scores) {
                          throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT,
                                            "head_capacity > 0 but head_types and head_scores "
                                            "are NULL");
                        }
                        const wc_result result = s.get_stats(full);
                        write_struct(stats, full);
                        return result;
                      });
}

WC_API wc_result wc_session_set_settings(wc_session session, const char* settings_json) {
  return with_session("wc_session_set_settings", session, WC_RESULT_ERROR_INVALID_ARGUMENT,
                      [&](PluginSession& s) {
                        s.set_settings(required_text(settings_json, "settings_json"));
                        return WC_RESULT_OK;
                      });
}

WC_API wc_result wc_session_get_settings(wc_session session, char* buffer, uint32_t capacity,
                                         uint32_t* length) {
  return with_session(
      "wc_session_get_settings", session, WC_RESULT_ERROR_INTERNAL,
      [&](PluginSession& s) { return copy_out_string(s.settings(), buffer, capacity, length); });
}

WC_API wc_result wc_session_set_play_settings(wc_session session, const char* settings_json) {
  return with_session("wc_session_set_play_settings", session, WC_RESULT_ERROR_INVALID_ARGUMENT,
                      [&](PluginSession& s) {
                        s.set_play_settings(required_text(settings_json, "settings_json"));
                        return WC_RESULT_OK;
                      });
}

WC_API wc_result wc_session_get_play_settings(wc_session session, char* buffer, uint32_t capacity,
                                              uint32_t* length) {
  return with_session("wc_session_get_play_settings", session, WC_RESULT_ERROR_INTERNAL,
                      [&](PluginSession& s) {
                        return copy_out_string(s.play_settings(), buffer, capacity, length);
                      });
}

WC_API wc_result wc_session_set_policy(wc_session session, const char* policy,
                                       const char* settings_json) {
  return with_session(
      "wc_session_set_policy", session, WC_RESULT_ERROR_INVALID_ARGUMENT, [&](PluginSession& s) {
        s.set_policy(required_text(policy, "policy"), settings_json ? settings_json : "{}");
        return WC_RESULT_OK;
      });
}

WC_API wc_result wc_session_save_state(wc_session session, const char* path) {
  return with_session("wc_session_save_state", session, WC_RESULT_ERROR_IO, [&](PluginSession& s) {
    s.save_state(required_text(path, "path"));
    return WC_RESULT_OK;
  });
}

WC_API wc_result wc_session_load_state(wc_session session, const char* path) {
  return with_session("wc_session_load_state", session, WC_RESULT_ERROR_BAD_CHECKPOINT,
                      [&](PluginSession& s) {
                        s.load_state(required_text(path, "path"));
                        return WC_RESULT_OK;
                      });
}

WC_API wc_result wc_action_script_load(const char* path, int32_t* actions, uint32_t capacity,
                                       uint32_t* count) {
  return call_guarded("wc_action_script_load", nullptr, WC_RESULT_ERROR_INVALID_ARGUMENT, [&] {
    const std::string file = required_text(path, "path");
    if (!count) throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "count is NULL");
    if (!actions && capacity > 0) {
      throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "actions is NULL but capacity > 0");
    }
    if (!std::filesystem::is_regular_file(file)) {
      throw PluginError(WC_RESULT_ERROR_IO, file + ": no such file");
    }
    std::vector<wc::game::Action> script;
    try {
      script = wc::game::load_action_script(file);
    } catch (const wc::game::ActionScriptError& error) {
      throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, error.what());
    }
    if (script.size() > UINT32_MAX) {
      throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, file + ": too many actions");
    }
    *count = static_cast<uint32_t>(script.size());
    const size_t fill = std::min<size_t>(capacity, script.size());
    for (size_t i = 0; i < fill; ++i) actions[i] = static_cast<int32_t>(script[i]);
    return actions && fill < script.size() ? WC_RESULT_INCOMPLETE : WC_RESULT_OK;
  });
}

}  // extern "C"
