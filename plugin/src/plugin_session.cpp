// See plugin_session.h.
//
// Note [Session locks]: work_mutex_ serialises everything that runs or changes the model (step,
// reset, settings, save/load); state_mutex_ guards what readers need (the newest frame's pixels,
// the stats snapshot, the action queue, the frame rings) and is only ever held for copies. A
// model step holds work_mutex_ alone and takes state_mutex_ briefly at its end to publish, so a
// render thread calling wc_session_get_frame never waits for the model. Lock order: work_mutex_
// before state_mutex_.
#include "plugin/src/plugin_session.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "engine/attention/registry.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/core/timing.h"
#include "engine/model/memory_budget.h"
#include "engine/model/model_config.h"
#include "engine/rollout/game_source.h"

namespace wc::plugin {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxQueuedActions = 1024;
constexpr int kRingSlots = 3;

static_assert(static_cast<int>(attention::HeadType::kDense) == WC_HEAD_DENSE &&
                  static_cast<int>(attention::HeadType::kSink) == WC_HEAD_SINK &&
                  static_cast<int>(attention::HeadType::kDummy) == WC_HEAD_DUMMY &&
                  static_cast<int>(attention::HeadType::kSpatial) == WC_HEAD_SPATIAL &&
                  static_cast<int>(attention::HeadType::kGlobal) == WC_HEAD_GLOBAL &&
                  static_cast<int>(attention::HeadType::kNeighbour) == WC_HEAD_NEIGHBOUR,
              "WC_HEAD_* must equal wc::attention::HeadType");
static_assert(attention::kHeadTypeCount <= WC_HEAD_TYPE_COUNT, "WC_HEAD_TYPE_COUNT too small");

std::string text_or(const char* text, const std::string& fallback) {
  return text && *text ? std::string(text) : fallback;
}

}  // namespace

PluginSession::PluginSession(std::shared_ptr<Runtime> runtime, const wc_session_desc& desc)
    : runtime_(std::move(runtime)), source_(desc.source) {
  if (source_ == WC_SOURCE_GAME) {
    width_ = desc.width != 0 ? desc.width : 128;
    height_ = desc.height != 0 ? desc.height : 128;
    try {
      frames_ = make_game_source(width_, height_, desc.seed);
    } catch (const std::exception& error) {  // std::invalid_argument for a bad size
      throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, error.what());
    }
  } else if (source_ == WC_SOURCE_MODEL) {
    const std::string weights = text_or(desc.weights, "");
    std::string config_path = text_or(desc.config, "");
    if (config_path.empty()) {
      if (weights.empty()) {
        throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT,
                          "config is required when weights is NULL (random weights)");
      }
      config_path = (fs::path(weights) / "config.json").string();
    }
    if (!weights.empty() && !fs::exists(weights)) {
      throw PluginError(WC_RESULT_ERROR_BAD_CHECKPOINT, weights + ": no such weights directory");
    }
    if (!fs::is_regular_file(config_path)) {
      throw PluginError(WC_RESULT_ERROR_BAD_CHECKPOINT, config_path + ": no such model config");
    }
    model::ModelConfig config;
    try {
      config = model::load_model_config(config_path);
    } catch (const Error& error) {
      throw PluginError(WC_RESULT_ERROR_BAD_CHECKPOINT, error.what());
    }
    rollout::SessionOptions options;
    options.resolution = text_or(desc.resolution, "");
    options.weights_seed = desc.weights_seed;
    model::FrameSize size;
    try {
      size = config.resolve(options.resolution);
      config.check_frame_size(size);
    } catch (const Error& error) {
      throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, error.what());
    }
    // What Session::create builds its policy for; see session.cpp.
    const at::Device device = runtime_->device();
    shape_.num_layers = config.layers;
    shape_.num_heads = config.heads;
    shape_.head_dim = config.head_dim;
    shape_.batch = 1;
    shape_.geometry = {config.frames_per_block, config.grid_h(size), config.grid_w(size)};
    shape_.device = device;
    shape_.dtype = device.is_cuda() ? at::kBFloat16 : at::kFloat;

    const std::string policy = text_or(desc.policy, "headcast");
    const nlohmann::json settings = parse_settings(text_or(desc.policy_settings, "{}"));
    // Note [Memory budget]: before the policy check below builds a policy of the model's shape.
    try {
      rollout::require_session_memory(config, size, policy, settings, device, shape_.dtype);
    } catch (const model::OutOfMemory& error) {
      throw PluginError(WC_RESULT_ERROR_OUT_OF_MEMORY, error.what());
    } catch (const Error& error) {
      throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, error.what());
    }
    check_settings(policy, settings);
    std::unique_ptr<rollout::Session> session;
    try {
      session =
          rollout::Session::create(config, weights, policy, settings, desc.seed, device, options);
    } catch (const model::OutOfMemory& error) {
      throw PluginError(WC_RESULT_ERROR_OUT_OF_MEMORY, error.what());
    } catch (const Error& error) {
      // The config, policy and settings were checked above: what is left is the checkpoint.
      throw PluginError(WC_RESULT_ERROR_BAD_CHECKPOINT, error.what());
    }
    width_ = session->width();
    height_ = session->height();
    frames_per_block_ = config.frames_per_block;
    num_actions_ = config.num_actions;
    policy_name_ = session->policy().name();
    model_ = session.get();
    frames_ = std::move(session);
  } else {
    throw PluginError(
        WC_RESULT_ERROR_INVALID_ARGUMENT,
        "source must be WC_SOURCE_MODEL or WC_SOURCE_GAME, got " + std::to_string(desc.source));
  }
  std::lock_guard<std::mutex> work(work_mutex_);
  publish(true, 0.0);
}

PluginSession::~PluginSession() = default;

void PluginSession::set_last_error(const std::string& message) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  last_error_ = message;
}

std::string PluginSession::last_error() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return last_error_;
}

rollout::Session& PluginSession::model() const {
  if (!model_) {
    throw PluginError(WC_RESULT_ERROR_UNSUPPORTED,
                      "the reference game source has no model, policy or saved state");
  }
  return *model_;
}

nlohmann::json PluginSession::parse_settings(const std::string& json, const char* what) const {
  nlohmann::json settings;
  try {
    // Note [Checked JSON]: numbers out of range and keys given twice are refused by field.
    settings = parse_json(json, what);
  } catch (const Error& error) {
    throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, error.what());
  }
  if (!settings.is_object()) {
    throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT,
                      std::string(what) + " must be a JSON object");
  }
  return settings;
}

std::string PluginSession::check_settings(const std::string& policy,
                                          const nlohmann::json& settings) const {
  // A throwaway policy validates every key and value (and the name) before anything changes;
  // policies allocate their stores lazily, so this is cheap.
  try {
    return attention::create_policy(policy, shape_, settings)->name();
  } catch (const Error& error) {
    throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, error.what());
  }
}

PluginSession::Snapshot PluginSession::take_snapshot(double step_ms) const {
  Snapshot snap;
  wc_stats& s = snap.stats;
  s.frame_index = frames_->frame_index();
  s.step_ms = step_ms;
  if (model_) {
    const rollout::SessionStats stats = model_->stats();
    s.blocks = stats.blocks;
    s.model_ms = stats.model_ms;
    s.decode_ms = stats.decode_ms;
    s.mean_model_ms = stats.mean_model_ms;
    s.mean_decode_ms = stats.mean_decode_ms;
    s.cache_bytes = stats.policy.total_bytes();
    s.cache_tokens = stats.policy.total_tokens();
    s.num_layers = shape_.num_layers;
    s.num_heads = shape_.num_heads;
    s.classified = stats.policy.classified ? 1 : 0;
    s.ann_history_pairs = stats.policy.ann.history_pairs;
    s.ann_allowed_pairs = stats.policy.ann.allowed_pairs;
    s.ann_gathered_pairs = stats.policy.ann.gathered_pairs;
    s.ann_largest_bucket = stats.policy.ann.largest_bucket;
    for (int t = 0; t < attention::kHeadTypeCount; ++t) {
      s.heads_per_type[t] = stats.policy.per_type[static_cast<size_t>(t)].heads;
      s.bytes_per_type[t] = stats.policy.per_type[static_cast<size_t>(t)].cached_bytes;
    }
    const size_t n = static_cast<size_t>(shape_.num_layers) * static_cast<size_t>(shape_.num_heads);
    snap.head_types.assign(n, WC_HEAD_DENSE);
    snap.head_scores.assign(4 * n, attention::HeadScores::kUnset);
    for (size_t layer = 0; layer < stats.policy.heads.size(); ++layer) {
      const auto& heads = stats.policy.heads[layer];
      for (size_t head = 0; head < heads.size(); ++head) {
        const size_t i = layer * static_cast<size_t>(shape_.num_heads) + head;
        if (i >= n) break;
        snap.head_types[i] = static_cast<uint8_t>(heads[head].type);
        const attention::HeadScores& scores = heads[head].scores;
        snap.head_scores[4 * i + 0] = scores.sink;
        snap.head_scores[4 * i + 1] = scores.dummy;
        snap.head_scores[4 * i + 2] = scores.spatial_mean;
        snap.head_scores[4 * i + 3] = scores.spatial_score;
      }
    }
    snap.settings = model_->policy().settings().dump();
    snap.play = model_->play_settings().dump();
  }
  return snap;
}

void PluginSession::publish(bool restart, double step_ms) {
  Snapshot snap = take_snapshot(step_ms);
  const uint8_t* rgba = frames_->rgba();
  const size_t bytes = static_cast<size_t>(width_) * static_cast<size_t>(height_) * 4;
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (restart) {
    dropped_since_get_ = 0;
  } else if (!latest_delivered_) {
    ++dropped_since_get_;
    ++frames_dropped_;
  }
  latest_.assign(rgba, rgba + bytes);
  latest_index_ = frames_->frame_index();
  // A first frame after create/reset/load that nobody fetched was not dropped by a step.
  latest_delivered_ = restart;
  snapshot_ = std::move(snap);
}

void PluginSession::refresh_snapshot() {
  double step_ms = 0.0;
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    step_ms = snapshot_.stats.step_ms;
  }
  Snapshot snap = take_snapshot(step_ms);
  std::lock_guard<std::mutex> lock(state_mutex_);
  snapshot_ = std::move(snap);
}

wc_session_info PluginSession::info() const {
  wc_session_info info{};
  info.source = source_;
  info.width = width_;
  info.height = height_;
  info.frames_per_block = frames_per_block_;
  info.num_actions = num_actions_;
  info.num_layers = model_ ? shape_.num_layers : 0;
  info.num_heads = model_ ? shape_.num_heads : 0;
  std::lock_guard<std::mutex> lock(state_mutex_);
  std::snprintf(info.policy, sizeof(info.policy), "%s", policy_name_.c_str());
  return info;
}

void PluginSession::push_action(int32_t action) {
  if (action < 0 || action >= num_actions_) {
    throw PluginError(
        WC_RESULT_ERROR_INVALID_ARGUMENT,
        "action " + std::to_string(action) + " is outside 0.." + std::to_string(num_actions_ - 1));
  }
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (actions_.size() >= kMaxQueuedActions) actions_.pop_front();
  actions_.push_back(action);
}

void PluginSession::step(uint32_t flags) {
  if (flags & ~WC_STEP_NEWEST_ACTION) {
    throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "unknown step flags");
  }
  std::lock_guard<std::mutex> work(work_mutex_);
  int32_t action = WC_ACTION_NONE;
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    if (!actions_.empty()) {
      if (flags & WC_STEP_NEWEST_ACTION) {
        action = actions_.back();
        actions_.clear();
      } else {
        action = actions_.front();
        actions_.pop_front();
      }
    }
  }
  Stopwatch watch;
  frames_->step(static_cast<Action>(action));
  publish(false, watch.elapsed_ms());
}

void PluginSession::reset(uint64_t seed) {
  std::lock_guard<std::mutex> work(work_mutex_);
  frames_->reset(seed);
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    actions_.clear();
  }
  publish(true, 0.0);
}

wc_result PluginSession::get_frame(const wc_frame_request& request, wc_frame& frame) {
  const uint32_t tight_pitch = static_cast<uint32_t>(width_) * 4;
  frame.kind = request.kind;
  frame.width = width_;
  frame.height = height_;
  frame.row_pitch = tight_pitch;
  frame.format = WC_FORMAT_RGBA8_UNORM;

  std::unique_lock<std::mutex> lock(state_mutex_, std::defer_lock);
  switch (request.kind) {
    case WC_FRAME_KIND_CPU_RGBA8: {
      const uint32_t pitch = request.cpu_row_pitch != 0 ? request.cpu_row_pitch : tight_pitch;
      if (pitch < tight_pitch) {
        throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT,
                          "cpu_row_pitch " + std::to_string(pitch) +
                              " < width * 4 = " + std::to_string(tight_pitch));
      }
      if (!request.cpu_pixels) {
        throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, "cpu_pixels is NULL");
      }
      const uint64_t needed =
          static_cast<uint64_t>(pitch) * static_cast<uint64_t>(height_ - 1) + tight_pitch;
      if (request.cpu_capacity < needed) {
        throw PluginError(WC_RESULT_ERROR_BUFFER_TOO_SMALL,
                          "cpu_capacity " + std::to_string(request.cpu_capacity) + " bytes < the " +
                              std::to_string(needed) + " the frame needs");
      }
      lock.lock();
      auto* out = static_cast<uint8_t*>(request.cpu_pixels);
      for (int y = 0; y < height_; ++y) {
        std::memcpy(out + static_cast<size_t>(y) * pitch,
                    latest_.data() + static_cast<size_t>(y) * tight_pitch, tight_pitch);
      }
      frame.row_pitch = pitch;
      break;
    }
    case WC_FRAME_KIND_CUDA: {
      if (runtime_->cuda_device() < 0) {
        throw PluginError(WC_RESULT_ERROR_UNSUPPORTED,
                          "CUDA frames need a runtime on a CUDA device (WORLDCAST_CUDA build, "
                          "device WC_DEVICE_CUDA or AUTO with a CUDA GPU)");
      }
      lock.lock();
      if (!cuda_ring_) {
        cuda_ring_ = make_cuda_frame_ring(runtime_->cuda_device(), width_, height_, kRingSlots);
      }
      const int slot = cuda_slots_.acquire();
      if (slot < 0) return WC_RESULT_NOT_READY;
      try {
        cuda_ring_->write(slot, latest_.data());
      } catch (...) {
        cuda_slots_.cancel(slot);
        throw;
      }
      frame.release_token = cuda_slots_.token(slot);
      frame.cuda_device_ptr = cuda_ring_->pointer(slot);
      frame.cuda_stream = cuda_ring_->stream();
      frame.cuda_device = cuda_ring_->device();
      break;
    }
    case WC_FRAME_KIND_VULKAN: {
      lock.lock();
      if (!vulkan_ring_) {
        vulkan_ring_ = std::make_unique<VulkanFrameRing>(
            runtime_->vulkan(), width_, height_, kRingSlots, runtime_->vulkan_device_local());
      }
      const int slot = vulkan_slots_.acquire();
      if (slot < 0) return WC_RESULT_NOT_READY;
      uint64_t value = 0;
      try {
        value = vulkan_ring_->write(slot, latest_.data());
      } catch (...) {
        vulkan_slots_.cancel(slot);
        throw;
      }
      frame.release_token = vulkan_slots_.token(slot);
      frame.vk_slot = static_cast<uint32_t>(slot);
      frame.vk_offset = vulkan_ring_->slot_offset(slot);
      frame.vk_semaphore_value = value;
      break;
    }
    default:
      throw PluginError(
          WC_RESULT_ERROR_INVALID_ARGUMENT,
          "kind must be a WC_FRAME_KIND_* value, got " + std::to_string(request.kind));
  }
  frame.frame_index = latest_index_;
  const bool dropped = dropped_since_get_ > 0;
  dropped_since_get_ = 0;
  latest_delivered_ = true;
  return dropped ? WC_RESULT_FRAME_DROPPED : WC_RESULT_OK;
}

void PluginSession::release_frame(uint64_t token) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  FrameSlots* slots = vulkan_slots_.owns(token) ? &vulkan_slots_
                      : cuda_slots_.owns(token) ? &cuda_slots_
                                                : nullptr;
  if (!slots) {
    throw PluginError(WC_RESULT_ERROR_INVALID_HANDLE, "not a frame token of this session");
  }
  if (!slots->release(token)) {
    throw PluginError(WC_RESULT_ERROR_INVALID_HANDLE,
                      "this frame token was already released (or is from before a newer write)");
  }
}

void PluginSession::export_vulkan(wc_vulkan_export& out) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (!vulkan_ring_) {
    vulkan_ring_ = std::make_unique<VulkanFrameRing>(runtime_->vulkan(), width_, height_,
                                                     kRingSlots, runtime_->vulkan_device_local());
  }
  vulkan_ring_->export_to(out);
}

wc_result PluginSession::get_stats(wc_stats& stats) const {
  const uint32_t capacity = stats.head_capacity;
  uint8_t* const types = stats.head_types;
  float* const scores = stats.head_scores;
  const uint64_t validation_errors = runtime_->vulkan_validation_errors();
  std::lock_guard<std::mutex> lock(state_mutex_);
  const uint32_t struct_size = stats.struct_size;
  stats = snapshot_.stats;
  stats.struct_size = struct_size;
  stats.head_capacity = capacity;
  stats.head_types = types;
  stats.head_scores = scores;
  stats.frames_dropped = frames_dropped_;
  stats.vulkan_validation_errors = validation_errors;
  const size_t n = snapshot_.head_types.size();
  const size_t fill = std::min<size_t>(n, capacity);
  if (types) std::copy_n(snapshot_.head_types.begin(), fill, types);
  if (scores) std::copy_n(snapshot_.head_scores.begin(), 4 * fill, scores);
  return (types || scores) && fill < n ? WC_RESULT_INCOMPLETE : WC_RESULT_OK;
}

void PluginSession::change_live(
    const std::string& json, const char* what,
    const std::function<void(rollout::Session&, const nlohmann::json&)>& change) {
  rollout::Session& session = model();
  const nlohmann::json settings = parse_settings(json, what);
  std::lock_guard<std::mutex> work(work_mutex_);
  try {
    change(session, settings);  // each change leaves the Session unchanged when it throws
  } catch (const Error& error) {
    throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, error.what());
  }
  refresh_snapshot();
}

void PluginSession::set_settings(const std::string& json) {
  change_live(json, "policy settings", [](rollout::Session& session, const nlohmann::json& s) {
    session.configure_policy(s);
  });
}

std::string PluginSession::settings() const {
  model();
  std::lock_guard<std::mutex> lock(state_mutex_);
  return snapshot_.settings;
}

void PluginSession::set_play_settings(const std::string& json) {
  change_live(json, "play settings", [](rollout::Session& session, const nlohmann::json& s) {
    session.configure_play(s);
  });
}

std::string PluginSession::play_settings() const {
  model();
  std::lock_guard<std::mutex> lock(state_mutex_);
  return snapshot_.play;
}

void PluginSession::set_policy(const std::string& name, const std::string& json) {
  change_live(json, "policy settings", [&](rollout::Session& session, const nlohmann::json& s) {
    // Keeps the game: the context blocks are committed again through the new policy.
    session.switch_policy(name, s);
    std::lock_guard<std::mutex> lock(state_mutex_);
    policy_name_ = session.policy().name();
  });
}

void PluginSession::save_state(const std::string& path) {
  rollout::Session& session = model();
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent)) {
    throw PluginError(WC_RESULT_ERROR_IO, path + ": folder " + parent.string() + " does not exist");
  }
  std::lock_guard<std::mutex> work(work_mutex_);
  try {
    session.save_state(path);
  } catch (const Error& error) {
    throw PluginError(WC_RESULT_ERROR_IO, error.what());
  }
}

void PluginSession::load_state(const std::string& path) {
  rollout::Session& session = model();
  if (!fs::is_regular_file(path)) {
    throw PluginError(WC_RESULT_ERROR_IO, path + ": no such file");
  }
  std::lock_guard<std::mutex> work(work_mutex_);
  session.load_state(path);  // wc::Error -> BAD_CHECKPOINT (the entry point's engine code)
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    actions_.clear();
    policy_name_ = session.policy().name();
  }
  publish(true, 0.0);
}

}  // namespace wc::plugin
