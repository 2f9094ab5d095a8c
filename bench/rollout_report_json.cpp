// The rollout report as JSON and back: to_json writes what `bench rollout --json` saves,
// from_json validates a saved file field by field so `--replot` can rebuild the table and plot on
// a machine other than the one that measured (the GPU machine has no gnuplot).
#include <fstream>
#include <limits>
#include <sstream>

#include "bench/rollout_bench.h"
#include "engine/core/bounded_read.h"
#include "engine/core/error.h"
#include "engine/core/json_object_reader.h"
#include "engine/core/json_text.h"
#include "engine/core/timing.h"

namespace wc::attention {
namespace {

constexpr double kHuge = std::numeric_limits<double>::max();

int64_t read_int64(ObjectReader& reader, const std::string& key, int64_t lo) {
  const nlohmann::json& value = reader.get(key);
  if (!value.is_number_integer()) reader.fail(reader.field_path(key), "expected an integer");
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    reader.fail(reader.field_path(key), "too large");
  }
  const int64_t v = value.get<int64_t>();
  if (v < lo) reader.fail(reader.field_path(key), "must be at least " + std::to_string(lo));
  return v;
}

RolloutSample read_sample(const nlohmann::json& json, const std::string& file,
                          const std::string& path) {
  ObjectReader r(json, file, path);
  RolloutSample s;
  s.block = read_int64(r, "block", 0);
  s.frames = read_int64(r, "frames", 0);
  s.cache_bytes = read_int64(r, "cache_bytes", 0);
  s.cache_entries = read_int64(r, "cache_entries", 0);
  s.device_bytes = read_int64(r, "device_bytes", 0);
  r.reject_unknown();
  return s;
}

RolloutPolicyResult read_result(const nlohmann::json& json, const std::string& file,
                                const std::string& path) {
  ObjectReader r(json, file, path);
  RolloutPolicyResult p;
  p.label = r.string("label");
  p.policy = r.string("policy");
  p.settings = r.get("settings");
  if (!p.settings.is_object()) r.fail(r.field_path("settings"), "expected an object");
  const nlohmann::json& block_ms = r.get("block_ms");
  if (!block_ms.is_array()) r.fail(r.field_path("block_ms"), "expected an array of numbers");
  for (size_t i = 0; i < block_ms.size(); ++i) {
    const std::string item = r.field_path("block_ms") + "[" + std::to_string(i) + "]";
    if (!block_ms[i].is_number()) r.fail(item, "expected a number");
    const double ms = block_ms[i].get<double>();
    if (!(ms >= 0.0 && ms <= kHuge)) r.fail(item, "must be a finite time >= 0");
    p.block_ms.push_back(ms);
  }
  const int64_t blocks_run = read_int64(r, "blocks_run", 0);
  if (blocks_run != static_cast<int64_t>(p.block_ms.size())) {
    r.fail(r.field_path("blocks_run"), std::to_string(blocks_run) + " but block_ms holds " +
                                           std::to_string(p.block_ms.size()) + " times");
  }
  const nlohmann::json& samples = r.get("samples");
  if (!samples.is_array()) r.fail(r.field_path("samples"), "expected an array of objects");
  for (size_t i = 0; i < samples.size(); ++i) {
    const std::string item = r.field_path("samples") + "[" + std::to_string(i) + "]";
    RolloutSample s = read_sample(samples[i], file, item);
    if (s.block >= blocks_run) {
      r.fail(item + ".block", "block " + std::to_string(s.block) + " was not run (blocks_run " +
                                  std::to_string(blocks_run) + ")");
    }
    if (!p.samples.empty() && s.block <= p.samples.back().block) {
      r.fail(item + ".block", "samples must be in ascending block order");
    }
    p.samples.push_back(s);
  }
  p.stopped_early = r.boolean("stopped_early");
  p.stop_reason = r.string("stop_reason");
  p.peak_device_bytes = read_int64(r, "peak_device_bytes", 0);
  p.flatness = r.number("frame_time_flatness", 0.0, kHuge);
  // Derived from block_ms (from_json recomputes it; reports older than the field lack it).
  if (r.has("frame_time_flatness_worst")) r.number("frame_time_flatness_worst", 0.0, kHuge);
  p.ms_per_frame_first = r.number("ms_per_frame_100_200", 0.0, kHuge);
  p.ms_per_frame_last = r.number("ms_per_frame_last_100", 0.0, kHuge);
  p.slope_ms_per_1000_frames = r.number("slope_ms_per_1000_frames", -kHuge, kHuge);
  p.bytes_per_frame = r.number("bytes_per_frame", -kHuge, kHuge);
  p.merges = read_int64(r, "merges", 0);
  p.evictions = read_int64(r, "evictions", 0);
  p.mean_group_size = r.number("mean_group_size", 0.0, kHuge);
  // Reports older than CUDA-graph replay in the bench lack these.
  if (r.has("graph_replayed_blocks")) {
    p.graph_replayed_blocks = read_int64(r, "graph_replayed_blocks", 0);
    if (p.graph_replayed_blocks > blocks_run) {
      r.fail(r.field_path("graph_replayed_blocks"), "more than blocks_run");
    }
  }
  if (r.has("graph_recordings")) p.graph_recordings = read_int64(r, "graph_recordings", 0);
  if (r.has("output_error")) {  // only with --error-every
    const nlohmann::json& errors = r.get("output_error");
    const std::string field = r.field_path("output_error");
    if (!errors.is_array()) r.fail(field, "expected an array of [block, error] pairs");
    for (size_t i = 0; i < errors.size(); ++i) {
      const nlohmann::json& pair = errors[i];
      const std::string item = field + "[" + std::to_string(i) + "]";
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() ||
          !pair[1].is_number() || pair[0].get<int64_t>() < 0 ||
          pair[0].get<int64_t>() >= blocks_run || !(pair[1].get<double>() >= 0.0)) {
        r.fail(item, "expected [block run, error >= 0]");
      }
      p.output_error.emplace_back(pair[0].get<int64_t>(), pair[1].get<double>());
    }
  }
  r.reject_unknown();
  return p;
}

}  // namespace

nlohmann::json RolloutBenchReport::to_json() const {
  const auto& o = options;
  nlohmann::json json = {{"bench", "rollout"},
                         {"device", device_name},
                         {"dtype", o.dtype == at::kBFloat16 ? "bf16" : "f32"},
                         {"resolution", o.resolution},
                         {"grid", {grid_h, grid_w}},
                         {"frames_per_block", o.frames_per_block},
                         {"heads", o.num_heads},
                         {"head_dim", o.head_dim},
                         {"layers", o.num_layers},
                         {"steps", o.steps},
                         {"blocks", o.blocks},
                         {"every", o.every},
                         {"window", o.window},
                         {"seed", o.seed},
                         {"cuda_graphs", o.cuda_graphs},
                         {"key_process", "see Note [Rollout key process] in bench/rollout_bench.h"},
                         {"results", nlohmann::json::array()}};
  for (const RolloutPolicyResult& r : results) {
    nlohmann::json samples = nlohmann::json::array();
    for (const RolloutSample& s : r.samples) {
      samples.push_back({{"block", s.block},
                         {"frames", s.frames},
                         {"cache_bytes", s.cache_bytes},
                         {"cache_entries", s.cache_entries},
                         {"device_bytes", s.device_bytes}});
    }
    json["results"].push_back({{"label", r.label},
                               {"policy", r.policy},
                               {"settings", r.settings},
                               {"blocks_run", r.block_ms.size()},
                               {"stopped_early", r.stopped_early},
                               {"stop_reason", r.stop_reason},
                               {"block_ms", r.block_ms},
                               {"samples", samples},
                               {"peak_device_bytes", r.peak_device_bytes},
                               {"frame_time_flatness", r.flatness},
                               {"frame_time_flatness_worst", r.flatness_worst},
                               {"ms_per_frame_100_200", r.ms_per_frame_first},
                               {"ms_per_frame_last_100", r.ms_per_frame_last},
                               {"slope_ms_per_1000_frames", r.slope_ms_per_1000_frames},
                               {"bytes_per_frame", r.bytes_per_frame},
                               {"merges", r.merges},
                               {"evictions", r.evictions},
                               {"mean_group_size", r.mean_group_size},
                               {"graph_replayed_blocks", r.graph_replayed_blocks},
                               {"graph_recordings", r.graph_recordings}});
    if (!r.output_error.empty()) json["results"].back()["output_error"] = r.output_error;
  }
  return json;
}

RolloutBenchReport RolloutBenchReport::from_json(const nlohmann::json& json,
                                                 const std::string& file) {
  ObjectReader r(json, file, "");
  RolloutBenchReport report;
  RolloutBenchOptions& o = report.options;
  if (r.string("bench") != "rollout") r.fail("bench", "expected \"rollout\"");
  report.device_name = r.string("device");
  const std::string dtype = r.string("dtype");
  if (dtype != "bf16" && dtype != "f32") r.fail("dtype", "expected \"bf16\" or \"f32\"");
  o.dtype = dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  o.resolution = r.string("resolution");
  const std::vector<int> grid = r.integers("grid", 2, 1, 1 << 20);
  report.grid_h = grid[0];
  report.grid_w = grid[1];
  o.frames_per_block = r.integer("frames_per_block", 1, 1 << 20);
  o.num_heads = r.integer("heads", 1, 1 << 20);
  o.head_dim = r.integer("head_dim", 1, 1 << 20);
  o.num_layers = r.integer("layers", 1, 1 << 20);
  o.steps = r.integer("steps", 1, 1 << 20);
  o.blocks = read_int64(r, "blocks", 1);
  o.every = r.integer("every", 1, std::numeric_limits<int>::max());
  o.window = read_int64(r, "window", 0);
  o.seed = static_cast<uint64_t>(read_int64(r, "seed", 0));
  o.cuda_graphs = r.has("cuda_graphs") && r.boolean("cuda_graphs");  // older reports: eager
  r.string("key_process");
  const nlohmann::json& results = r.get("results");
  if (!results.is_array()) r.fail("results", "expected an array of objects");
  o.policies.clear();
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string path = "results[" + std::to_string(i) + "]";
    RolloutPolicyResult result = read_result(results[i], file, path);
    if (static_cast<int64_t>(result.block_ms.size()) > o.blocks) {
      r.fail(path + ".block_ms", "more blocks than the run's " + std::to_string(o.blocks));
    }
    std::vector<double> frame_ms;
    for (double ms : result.block_ms) {
      frame_ms.insert(frame_ms.end(), o.frames_per_block, ms / o.frames_per_block);
    }
    result.flatness_worst = frame_time_flatness_worst(frame_ms);
    o.policies.push_back(result.label);
    report.results.push_back(std::move(result));
  }
  r.reject_unknown();
  return report;
}

RolloutBenchReport load_rollout_report(const std::string& path) {
  // Note [Bounded reads], Note [Checked JSON]: a report of the longest rollout is a few MB.
  constexpr int64_t kMaxRolloutReportBytes = int64_t{64} << 20;
  const nlohmann::json json =
      parse_json(read_bounded_file(path, kMaxRolloutReportBytes, "rollout report"), path);
  return RolloutBenchReport::from_json(json, path);
}

}  // namespace wc::attention
