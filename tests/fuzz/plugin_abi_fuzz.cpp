// libFuzzer target: random sequences of C ABI calls (plugin/include/worldcast/worldcast.h) on
// live, destroyed, forged and wrong-type handles, with hostile sizes, strings and files. Every
// call must return one of the header's results; a failed call must leave a message in
// wc_last_error; a destroyed or forged handle must be WC_RESULT_ERROR_INVALID_HANDLE; a CPU frame
// copy must fill exactly the rows the request allows. Saved states are written by real sessions
// and then cut, flipped and spliced before they are loaded back, so the state reader sees both
// valid files and their near misses.
// Model configs are fuzzed the same way, as near misses of a tiny valid one.
// Built by run_fuzz.sh against the built libworldcast_plugin.so (the library itself is not
// instrumented; the sanitizers check this harness's view of every buffer the library fills).
// One runtime lives for the whole process; each input's sessions are destroyed at its end.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>
#include <worldcast/worldcast.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "plugin_abi_fuzz: violated: %s\n", what);
  std::abort();  // libFuzzer records the input as a crash
}

bool documented(wc_result r) {
  return r >= WC_RESULT_ERROR_IO && r <= WC_RESULT_INCOMPLETE;
}

// The thread's last error after a failed call: present and NUL-terminated.
void check_result(wc_result r) {
  require(documented(r), "a result the header does not document");
  if (r >= 0) return;
  uint32_t length = 0;
  require(wc_last_error(nullptr, 0, &length) >= 0, "wc_last_error length query");
  require(length > 1, "a failed call left no message");
  std::vector<char> text(length);
  require(wc_last_error(text.data(), length, &length) == WC_RESULT_OK, "wc_last_error copy");
  require(text[length - 1] == '\0' && std::strlen(text.data()) + 1 == length,
          "wc_last_error's length and terminator");
}

// This process's folder (configs, saved states, scripts), removed when it exits.
struct Folder {
  fs::path dir = fs::temp_directory_path() / ("wc_plugin_abi_fuzz_" + std::to_string(getpid()));
  Folder() {
    fs::create_directories(dir);
    // A tiny model (16x16 frames, one layer of 32): a session is made and stepped in about
    // 1.5 ms, so the target runs its 100 000 inputs in CI's time.
    std::ofstream(dir / "tiny.json") << R"({"name": "tiny", "description": "fuzz",
      "channels": 3, "frame": {"height": 16, "width": 16}, "resolutions": {},
      "video_frames_per_frame": 1, "autoencoder": null, "patch": [1, 8, 8],
      "frames_per_block": 1, "hidden": 32, "layers": 1, "heads": 2, "head_dim": 16, "mlp": 64,
      "num_actions": 6, "freq_dim": 32, "norm_eps": 1e-6, "rope_theta": 10000.0,
      "sampler": {"steps": 1, "shift": 1.0, "context_noise": 0.0}})";
  }
  ~Folder() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

const Folder& folder() {
  static const Folder f;
  return f;
}

wc_runtime runtime() {
  static const wc_runtime handle = [] {
    wc_runtime_desc desc{};
    desc.struct_size = sizeof(desc);
    desc.abi_version = WC_ABI_VERSION;
    desc.device = WC_DEVICE_CPU;
    desc.log_level = WC_LOG_ERROR + 1;
    wc_runtime r = WC_NULL_HANDLE;
    if (wc_runtime_create(&desc, &r) != WC_RESULT_OK) {
      std::fprintf(stderr, "plugin_abi_fuzz: cannot create a CPU runtime\n");
      std::exit(1);
    }
    return r;
  }();
  return handle;
}

const char* const kPolicies[] = {"dense", "headcast", "dummy", "tempcache", "headcast+tempcache",
                                 "annsa", "fast-ar",  "",      "Dense",     "headcast "};
const char* const kSettings[] = {"{}",
                                 "{\"theta_sink\": 0.9}",
                                 "{\"budget_frames\": 3}",
                                 "{\"window\": 2}",
                                 "{\"ann_bits\": 0}",
                                 "{\"ann_bits\": 3, \"ann_radius\": 1}",
                                 "{\"theta_sink\": 1e400}",
                                 "{\"window\": -1}",
                                 "[1]",
                                 "{\"x\": 1}",
                                 "{\"budget_frames\": 0.5}",
                                 "{\"passes\": 2, \"temperature\": 0.5}",
                                 "{\"top_p\": 1e400}",
                                 "{",
                                 "null"};

struct Input {
  FuzzedDataProvider data;
  std::vector<wc_session> live;
  std::vector<wc_session> dead;  // destroyed this input: must stay invalid
  std::vector<std::string> saved;

  Input(const uint8_t* bytes, size_t size) : data(bytes, size) {}

  ~Input() {
    for (wc_session s : live) require(wc_session_destroy(s) == WC_RESULT_OK, "destroy at the end");
  }

  std::string text() {
    if (data.ConsumeBool()) return data.PickValueInArray(kSettings);
    return data.ConsumeRandomLengthString(256);
  }

  // A handle: a live session two times in three, else a destroyed one, the runtime (the wrong
  // type), null or any 64-bit value. `expect_valid` says whether the library must accept it.
  wc_session handle(bool* expect_valid) {
    const int kind = data.ConsumeIntegralInRange(0, 11);
    *expect_valid = false;
    if (kind <= 7 && !live.empty()) {
      *expect_valid = true;
      return live[data.ConsumeIntegralInRange<size_t>(0, live.size() - 1)];
    }
    if (kind == 8 && !dead.empty())
      return dead[data.ConsumeIntegralInRange<size_t>(0, dead.size() - 1)];
    if (kind == 9) return runtime();
    if (kind == 10) return WC_NULL_HANDLE;
    const wc_session forged = data.ConsumeIntegral<uint64_t>();
    for (wc_session s : live) {
      if (s == forged) *expect_valid = true;
    }
    return forged;
  }

  void create() {
    if (live.size() >= 3) return;
    wc_session_desc desc{};
    desc.struct_size = data.ConsumeBool()
                           ? sizeof(desc)
                           : data.ConsumeIntegralInRange<uint32_t>(0, 2 * sizeof(desc));
    // A model session one time in eight (it costs a millisecond), a game session mostly, and
    // now and then a source the header does not know.
    const int32_t sources[] = {
        WC_SOURCE_MODEL, -1, 2, WC_SOURCE_GAME, WC_SOURCE_GAME, WC_SOURCE_GAME, WC_SOURCE_GAME,
        WC_SOURCE_GAME};
    desc.source = data.PickValueInArray(sources);
    const std::string config = (folder().dir / "tiny.json").string();
    std::string policy, settings;
    if (desc.source == WC_SOURCE_MODEL) {
      desc.config = config.c_str();
      desc.weights_seed = data.ConsumeIntegral<uint8_t>();
      if (data.ConsumeBool()) {
        policy = data.PickValueInArray(kPolicies);
        desc.policy = policy.c_str();
      }
      if (data.ConsumeBool()) {
        settings = text();
        desc.policy_settings = settings.c_str();
      }
    } else {
      const int32_t sizes[] = {0, 16, 32, 48, 1, -8, 100000, 65536};
      desc.width = data.PickValueInArray(sizes);
      desc.height = data.PickValueInArray(sizes);
    }
    desc.seed = data.ConsumeIntegral<uint64_t>();
    wc_session s = WC_NULL_HANDLE;
    const wc_result r = wc_session_create(runtime(), &desc, &s);
    check_result(r);
    if (r == WC_RESULT_OK) {
      require(s != WC_NULL_HANDLE, "a created session's handle is not null");
      live.push_back(s);
    }
  }

  void destroy() {
    bool valid = false;
    const wc_session s = handle(&valid);
    const wc_result r = wc_session_destroy(s);
    check_result(r);
    if (!valid) {
      require(r == WC_RESULT_ERROR_INVALID_HANDLE, "destroying an invalid handle");
      return;
    }
    require(r == WC_RESULT_OK, "destroying a live session");
    for (size_t i = 0; i < live.size(); ++i) {
      if (live[i] == s) live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    dead.push_back(s);
  }

  // Calls on one handle; an invalid one must be refused as such by every call.
  void call_on_session() {
    bool valid = false;
    const wc_session s = handle(&valid);
    wc_result r = WC_RESULT_OK;
    switch (data.ConsumeIntegralInRange(0, 14)) {
      case 0:
        r = wc_session_push_action(s, data.ConsumeIntegralInRange(-2, 8));
        break;
      case 1:
        r = wc_session_step(s, data.ConsumeIntegralInRange<uint32_t>(0, 3));
        break;
      case 2:
        r = wc_session_reset(s, data.ConsumeIntegral<uint64_t>());
        break;
      case 3:
        r = get_frame(s, valid);
        break;
      case 4:
        r = wc_session_release_frame(s, data.ConsumeIntegral<uint64_t>());
        break;
      case 5:
        r = get_stats(s);
        break;
      case 6: {
        wc_session_info info{};
        info.struct_size = data.ConsumeIntegralInRange<uint32_t>(0, sizeof(info) + 8);
        r = wc_session_get_info(s, data.ConsumeBool() ? &info : nullptr);
        break;
      }
      case 7: {
        const std::string settings = text();
        r = wc_session_set_settings(s, data.ConsumeBool() ? settings.c_str() : nullptr);
        break;
      }
      case 8:
        r = get_text(s, Text::kSettings);
        break;
      case 9: {
        const std::string policy = data.ConsumeBool()
                                       ? std::string(data.PickValueInArray(kPolicies))
                                       : data.ConsumeRandomLengthString(32);
        const std::string settings = text();
        r = wc_session_set_policy(s, policy.c_str(),
                                  data.ConsumeBool() ? settings.c_str() : nullptr);
        break;
      }
      case 10:
        r = save_state(s);
        break;
      case 11:
        r = load_state(s);
        break;
      case 12:
        r = get_text(s, Text::kLastError);
        break;
      case 13: {
        const std::string settings = text();
        r = wc_session_set_play_settings(s, data.ConsumeBool() ? settings.c_str() : nullptr);
        break;
      }
      case 14:
        r = get_text(s, Text::kPlaySettings);
        break;
    }
    check_result(r);
    if (!valid) require(r == WC_RESULT_ERROR_INVALID_HANDLE, "a call on an invalid handle");
  }

  wc_result get_frame(wc_session s, bool valid) {
    wc_frame_request request{};
    request.struct_size =
        data.ConsumeBool() ? sizeof(request) : data.ConsumeIntegralInRange<uint32_t>(0, 64);
    const int32_t kinds[] = {
        WC_FRAME_KIND_CPU_RGBA8, WC_FRAME_KIND_CPU_RGBA8, WC_FRAME_KIND_CUDA, 0, -1, 7};
    request.kind = data.PickValueInArray(kinds);
    request.cpu_row_pitch = data.ConsumeBool() ? 0 : data.ConsumeIntegralInRange<uint32_t>(0, 1024);
    // A buffer exactly as large as claimed: the library must write within cpu_capacity.
    const size_t capacity = data.ConsumeIntegralInRange<size_t>(0, 70000);
    std::vector<uint8_t> pixels(capacity);
    request.cpu_capacity = capacity;
    request.cpu_pixels = (capacity > 0 || data.ConsumeBool()) ? pixels.data() : nullptr;
    wc_frame frame{};
    frame.struct_size = sizeof(frame);
    const wc_result r = wc_session_get_frame(s, &request, data.ConsumeBool() ? &frame : nullptr);
    if (valid && r >= 0 && request.kind == WC_FRAME_KIND_CPU_RGBA8) {
      const uint64_t pitch =
          request.cpu_row_pitch == 0 ? uint64_t(frame.width) * 4 : request.cpu_row_pitch;
      require(frame.width > 0 && frame.height > 0, "a returned frame has a size");
      require(pitch * uint64_t(frame.height - 1) + uint64_t(frame.width) * 4 <= capacity,
              "a returned CPU frame fits the buffer it was copied into");
    }
    return r;
  }

  wc_result get_stats(wc_session s) {
    wc_stats stats{};
    stats.struct_size = data.ConsumeBool()
                            ? sizeof(stats)
                            : data.ConsumeIntegralInRange<uint32_t>(0, sizeof(stats) + 8);
    const uint32_t capacity = data.ConsumeIntegralInRange<uint32_t>(0, 8);
    std::vector<uint8_t> types(capacity);
    std::vector<float> scores(4 * size_t(capacity));
    stats.head_capacity = capacity;
    stats.head_types = capacity > 0 ? types.data() : nullptr;
    stats.head_scores = capacity > 0 && data.ConsumeBool() ? scores.data() : nullptr;
    return wc_session_get_stats(s, &stats);
  }

  // Two-call idiom of get_settings / get_play_settings / session_last_error with a buffer of any
  // capacity.
  enum class Text { kSettings, kPlaySettings, kLastError };
  wc_result get_text(wc_session s, Text which) {
    const uint32_t capacity = data.ConsumeIntegralInRange<uint32_t>(0, 300);
    std::vector<char> buffer(capacity + 1, '\x7f');
    uint32_t length = 0;
    char* out = capacity > 0 ? buffer.data() : nullptr;
    const wc_result r =
        which == Text::kSettings       ? wc_session_get_settings(s, out, capacity, &length)
        : which == Text::kPlaySettings ? wc_session_get_play_settings(s, out, capacity, &length)
                                       : wc_session_last_error(s, out, capacity, &length);
    require(buffer[capacity] == '\x7f', "wrote past the buffer's capacity");
    if (r >= 0 && capacity > 0) {
      require(std::memchr(buffer.data(), '\0', capacity) != nullptr,
              "a returned text is terminated");
    }
    return r;
  }

  wc_result save_state(wc_session s) {
    const fs::path path = folder().dir / ("state" + std::to_string(saved.size() % 4) + ".wcs");
    const wc_result r = wc_session_save_state(s, path.c_str());
    if (r == WC_RESULT_OK) saved.push_back(path.string());
    return r;
  }

  // A file's bytes as they are, or cut, with one bit flipped, or with bytes of the input spliced
  // in.
  std::string near_miss(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes(std::istreambuf_iterator<char>(in), {});
    if (bytes.empty()) return bytes;
    switch (data.ConsumeIntegralInRange(0, 3)) {
      case 0:
        break;
      case 1:
        bytes.resize(data.ConsumeIntegralInRange<size_t>(0, bytes.size()));
        break;
      case 2: {
        const size_t at = data.ConsumeIntegralInRange<size_t>(0, bytes.size() - 1);
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << data.ConsumeIntegralInRange(0, 7)));
        break;
      }
      case 3: {
        const size_t at = data.ConsumeIntegralInRange<size_t>(0, bytes.size());
        bytes.insert(at, data.ConsumeRandomLengthString(64));
        break;
      }
    }
    return bytes;
  }

  static fs::path write(const std::string& name, const std::string& bytes) {
    const fs::path path = folder().dir / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), std::streamsize(bytes.size()));
    return path;
  }

  // A model config near the tiny one: a session is created from it (the real config reader and
  // the memory budget behind the C ABI) and destroyed at once, so a config that asks for a large
  // model costs its creation only.
  void create_from_config() {
    const fs::path path = write("config.json", near_miss(folder().dir / "tiny.json"));
    wc_session_desc desc{};
    desc.struct_size = sizeof(desc);
    desc.source = WC_SOURCE_MODEL;
    desc.config = path.c_str();
    desc.seed = data.ConsumeIntegral<uint8_t>();
    wc_session s = WC_NULL_HANDLE;
    const wc_result r = wc_session_create(runtime(), &desc, &s);
    check_result(r);
    if (r == WC_RESULT_OK)
      require(wc_session_destroy(s) == WC_RESULT_OK, "destroy a config's session");
  }

  // A saved state as written or a near miss of it, or bytes of the input.
  wc_result load_state(wc_session s) {
    const std::string bytes =
        !saved.empty() && data.ConsumeBool()
            ? near_miss(saved[data.ConsumeIntegralInRange<size_t>(0, saved.size() - 1)])
            : data.ConsumeRandomLengthString(512);
    const fs::path path = write("load.wcs", bytes);
    const bool missing = data.ConsumeIntegralInRange(0, 15) == 0;
    return wc_session_load_state(
        s, missing ? (folder().dir / "missing" / "x.wcs").c_str() : path.c_str());
  }

  void load_script() {
    const fs::path path = write("script.actions", data.ConsumeRandomLengthString(256));
    const uint32_t capacity = data.ConsumeIntegralInRange<uint32_t>(0, 64);
    std::vector<int32_t> actions(capacity + 1, -7);
    uint32_t count = 0;
    const wc_result r = wc_action_script_load(path.c_str(), capacity > 0 ? actions.data() : nullptr,
                                              capacity, &count);
    check_result(r);
    require(actions[capacity] == -7, "wrote past the actions' capacity");
    if (r >= 0) {
      for (uint32_t i = 0; i < std::min(capacity, count); ++i) {
        require(actions[i] >= WC_ACTION_NONE && actions[i] <= WC_ACTION_RIGHT,
                "a loaded action is one of the game's");
      }
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  runtime();  // before any call: a call with no runtime alive logs to stderr, by the header
  Input input(bytes, size);
  for (int call = 0; call < 8 && input.data.remaining_bytes() > 0; ++call) {
    switch (input.data.ConsumeIntegralInRange(0, 15)) {
      case 0:
      case 1:
        input.create();
        break;
      case 2:
        input.destroy();
        break;
      case 3:
        input.load_script();
        break;
      case 4:
        input.create_from_config();
        break;
      default:
        input.call_on_session();
        break;
    }
  }
  return 0;
}
