// See session_state.h.
#include "engine/rollout/session_state.h"

#include <cstring>
#include <limits>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/core/safetensors.h"

namespace wc::rollout {
namespace {

constexpr const char* kFormat = "worldcast-session-state";
// 2: block hashes are Note [Block hash]'s (1 was FNV-1a over host bytes).
constexpr const char* kVersion = "2";

uint64_t parse_u64(const std::string& path, const std::string& field, const std::string& text) {
  if (text.empty() || text.size() > 20 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    throw Error(path, "field '" + field + "': expected a non-negative integer, got '" + text + "'");
  }
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    throw Error(path, "field '" + field + "': out of range: '" + text + "'");
  }
}

int parse_int(const std::string& path, const std::string& field, const std::string& text, int lo,
              int hi) {
  const uint64_t value = parse_u64(path, field, text);
  if (value < static_cast<uint64_t>(lo) || value > static_cast<uint64_t>(hi)) {
    throw Error(path, "field '" + field + "': must be in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "], got " + text);
  }
  return static_cast<int>(value);
}

}  // namespace

void write_session_state(const std::string& path, const SessionState& state) {
  const int64_t blocks = static_cast<int64_t>(state.block_hashes.size());
  std::vector<int64_t> hashes(state.block_hashes.size());
  std::memcpy(hashes.data(), state.block_hashes.data(), hashes.size() * sizeof(int64_t));
  std::vector<TensorView> tensors(2);
  tensors[0].name = "actions";
  tensors[0].dtype = Dtype::kI64;
  tensors[0].shape = {blocks, state.frames_per_block};
  tensors[0].data = reinterpret_cast<const uint8_t*>(state.actions.data());
  tensors[0].byte_size = state.actions.size() * sizeof(int64_t);
  tensors[1].name = "block_hashes";
  tensors[1].dtype = Dtype::kI64;
  tensors[1].shape = {blocks};
  tensors[1].data = reinterpret_cast<const uint8_t*>(hashes.data());
  tensors[1].byte_size = hashes.size() * sizeof(int64_t);
  const Metadata metadata{
      {"format", kFormat},
      {"version", kVersion},
      {"config", state.config},
      {"resolution",
       std::to_string(state.resolution.height) + "x" + std::to_string(state.resolution.width)},
      {"frames_per_block", std::to_string(state.frames_per_block)},
      {"seed_frames", std::to_string(state.seed_frames)},
      {"policy", state.policy},
      {"policy_settings", state.policy_settings.dump()},
      {"seed", std::to_string(state.seed)},
      {"frame_index", std::to_string(state.frame_index)},
  };
  const std::vector<uint8_t> bytes = serialize_safetensors(tensors, metadata, path);
  write_file_atomically(path, bytes.data(), bytes.size());
}

SessionState read_session_state(const std::string& path, int num_actions) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  const Metadata& metadata = file.metadata();
  const auto field = [&](const std::string& key) -> const std::string& {
    const auto it = metadata.find(key);
    if (it == metadata.end()) throw Error(path, "field '" + key + "': missing");
    return it->second;
  };
  if (field("format") != kFormat) {
    throw Error(path, "field 'format': not a worldcast session state ('" + field("format") + "')");
  }
  if (field("version") != kVersion) {
    throw Error(path, "field 'version': unsupported version '" + field("version") + "'");
  }
  for (const auto& [key, unused] : metadata) {
    static const char* kKnown[] = {
        "format",      "version", "config",          "resolution", "frames_per_block",
        "seed_frames", "policy",  "policy_settings", "seed",       "frame_index"};
    bool known = false;
    for (const char* name : kKnown) known = known || key == name;
    if (!known) throw Error(path, "field '" + key + "': unknown key");
  }

  SessionState state;
  state.config = field("config");
  const std::string& resolution = field("resolution");
  const size_t x = resolution.find('x');
  if (x == std::string::npos) {
    throw Error(path, "field 'resolution': expected HxW, got '" + resolution + "'");
  }
  state.resolution.height = parse_int(path, "resolution", resolution.substr(0, x), 1, 1 << 14);
  state.resolution.width = parse_int(path, "resolution", resolution.substr(x + 1), 1, 1 << 14);
  state.frames_per_block = parse_int(path, "frames_per_block", field("frames_per_block"), 1, 64);
  state.seed_frames = parse_int(path, "seed_frames", field("seed_frames"), 0, 1 << 20);
  state.policy = field("policy");
  state.policy_settings = parse_json(field("policy_settings"), path + ": field 'policy_settings'");
  if (!state.policy_settings.is_object()) {
    throw Error(path, "field 'policy_settings': expected a JSON object");
  }
  state.seed = parse_u64(path, "seed", field("seed"));
  state.frame_index = parse_u64(path, "frame_index", field("frame_index"));

  if (file.tensors().size() != 2) {
    throw Error(path, "expected exactly the tensors 'actions' and 'block_hashes'");
  }
  const TensorView& hashes = file.at("block_hashes");
  if (hashes.dtype != Dtype::kI64 || hashes.shape.size() != 1) {
    throw Error(path, "field 'block_hashes': expected I64 [blocks]");
  }
  const int64_t blocks = hashes.shape[0];
  const TensorView& actions = file.at("actions");
  if (actions.dtype != Dtype::kI64 ||
      actions.shape != Shape{blocks, static_cast<int64_t>(state.frames_per_block)}) {
    throw Error(path, "field 'actions': expected I64 [" + std::to_string(blocks) + ", " +
                          std::to_string(state.frames_per_block) + "], got " +
                          std::string(dtype_name(actions.dtype)) + " " +
                          shape_to_string(actions.shape));
  }
  state.block_hashes.resize(static_cast<size_t>(blocks));
  if (blocks > 0) std::memcpy(state.block_hashes.data(), hashes.data, hashes.byte_size);
  state.actions.resize(static_cast<size_t>(actions.numel()));
  if (!state.actions.empty()) std::memcpy(state.actions.data(), actions.data, actions.byte_size);
  for (size_t i = 0; i < state.actions.size(); ++i) {
    if (state.actions[i] < 0 || state.actions[i] >= num_actions) {
      throw Error(path, "field 'actions[" + std::to_string(i) + "]': action " +
                            std::to_string(state.actions[i]) + " out of range [0, " +
                            std::to_string(num_actions) + ")");
    }
  }
  const uint64_t f = static_cast<uint64_t>(state.frames_per_block);
  const uint64_t b = static_cast<uint64_t>(blocks);
  const bool consistent = blocks == 0
                              ? state.frame_index == 0
                              : state.frame_index > (b - 1) * f && state.frame_index <= b * f;
  if (!consistent) {
    throw Error(path, "field 'frame_index': " + std::to_string(state.frame_index) +
                          " does not match " + std::to_string(blocks) + " blocks of " +
                          std::to_string(f) + " frames");
  }
  return state;
}

}  // namespace wc::rollout
