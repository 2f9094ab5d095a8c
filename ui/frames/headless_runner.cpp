// The headless run loop, its per-frame records and its run.json; see headless_runner.h.
#include "ui/frames/headless_runner.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/timing.h"
#include "ui/frames/frame_producer.h"
#include "ui/frames/headless_renderer.h"
#include "ui/frames/screenshot.h"
#include "ui/vulkan/context.h"

namespace wc::ui {
namespace {

std::string frame_file_name(int index) {
  char name[32];
  std::snprintf(name, sizeof(name), "frame_%05d.png", index);
  return name;
}

// DESIGN.md §13 flatness of the source's step times (engine/core/timing.h); null for runs shorter
// than 300 frames.
nlohmann::json flatness_or_null(double flatness) {
  return flatness > 0.0 ? nlohmann::json(flatness) : nlohmann::json(nullptr);
}

// Note [Headless records]: a run's per-frame records go to frames.jsonl as they are made, one
// line each, flushed every kRecordFlushFrames frames and at the end, so a run of any length holds
// only its timings in memory (three floats a frame: 2.4 MB for 200 000 frames, the summary's
// percentiles and flatness need every one) and a run cut short still leaves whole lines.
constexpr int kRecordFlushFrames = 256;
constexpr const char* kRecordsFile = "frames.jsonl";

// The timings of the frames so far.
std::vector<double> widened(const std::vector<float>& values) {
  return std::vector<double>(values.begin(), values.end());
}

nlohmann::json summarize(const std::vector<float>& render_ms_f,
                         const std::vector<float>& total_ms_f,
                         const std::vector<float>& produce_ms_f) {
  const std::vector<double> render_ms = widened(render_ms_f);
  const std::vector<double> total_ms = widened(total_ms_f);
  const std::vector<double> produce_ms = widened(produce_ms_f);
  return {{"frames", render_ms.size()},
          {"render_ms_p50", percentile(render_ms, 50.0)},
          {"render_ms_p99", percentile(render_ms, 99.0)},
          {"total_ms_p50", percentile(total_ms, 50.0)},
          {"produce_ms_p50", percentile(produce_ms, 50.0)},
          {"produce_ms_p99", percentile(produce_ms, 99.0)},
          {"produce_ms_flatness", flatness_or_null(frame_time_flatness(produce_ms))},
          {"produce_ms_flatness_worst", flatness_or_null(frame_time_flatness_worst(produce_ms))}};
}

}  // namespace

HeadlessReport run_headless(const HeadlessOptions& options, FrameSource& source) {
  if (options.frames <= 0) throw Error("--frames", "must be positive");
  if (options.scale <= 0) throw Error("--scale", "must be positive");
  if (options.out_dir.empty()) throw Error("--out", "an output folder is required");
  const int64_t wide =
      options.target_width > 0 ? options.target_width : int64_t{source.width()} * options.scale;
  const int64_t high =
      options.target_height > 0 ? options.target_height : int64_t{source.height()} * options.scale;
  if (wide > kMaxHeadlessSide || high > kMaxHeadlessSide) {
    throw Error("--scale", "the output would be " + std::to_string(wide) + "x" +
                               std::to_string(high) + " pixels; at most " +
                               std::to_string(kMaxHeadlessSide) + " a side");
  }
  const int target_width = static_cast<int>(wide), target_height = static_cast<int>(high);
  const std::filesystem::path dir(options.out_dir);
  std::error_code error;
  if (std::filesystem::is_directory(dir, error)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
      const std::string name = entry.path().filename().string();
      if (name == "run.json" || name == "summary.json" || name == kRecordsFile ||
          (name.rfind("frame_", 0) == 0 && entry.path().extension() == ".png")) {
        throw Error(options.out_dir, "already holds a run (" + name +
                                         "); choose a new or empty folder, old frames would mix "
                                         "with new ones");
      }
    }
  }

  vk::ContextOptions context_options;
  context_options.validation = options.validate;
  if (options.route.prepare_context) options.route.prepare_context(&context_options);
  vk::Context context(context_options);
  std::unique_ptr<HeadlessRenderer> made;
  if (options.route.make_sink) {
    made = std::make_unique<HeadlessRenderer>(
        context, options.route.make_sink(context, source.width(), source.height()), target_width,
        target_height);
  } else {
    made = std::make_unique<HeadlessRenderer>(context, source.width(), source.height(),
                                              target_width, target_height);
  }
  HeadlessRenderer& renderer = *made;
  FrameProducer producer(source, renderer.sink(), options.route);
  producer.reset(options.seed);

  // The folder is made only once the renderer stands: a run that cannot start leaves nothing.
  std::filesystem::create_directories(dir, error);
  if (error) throw Error(options.out_dir, "cannot create folder: " + error.message());
  const std::string records_path = (dir / kRecordsFile).string();
  std::ofstream records(records_path, std::ios::trunc);
  if (!records) throw Error(records_path, "cannot open for writing");
  const auto flush_records = [&] {
    records.flush();
    if (!records) throw Error(records_path, "cannot write (disk full?)");
  };
  std::vector<float> render_ms;
  std::vector<float> total_ms;
  std::vector<float> produce_ms;
  for (int i = 0; i < options.frames; ++i) {
    Stopwatch total;
    const Action action = static_cast<size_t>(i) < options.actions.size()
                              ? options.actions[static_cast<size_t>(i)]
                              : Action::kNone;
    producer.step(action);
    Stopwatch render;
    const uint8_t* pixels = renderer.render(options.present);
    const double render_time = render.elapsed_ms();
    const bool png = i == 0 || (options.png_every > 0 && i % options.png_every == 0);
    const std::string file = png ? frame_file_name(i) : std::string();
    if (png) {
      write_png((dir / file).string(), target_width, target_height, pixels);
    }
    const double total_time = total.elapsed_ms();
    render_ms.push_back(static_cast<float>(render_time));
    produce_ms.push_back(static_cast<float>(producer.last_step_ms()));
    total_ms.push_back(static_cast<float>(total_time));
    const nlohmann::json record = {{"index", i},
                                   {"file", png ? nlohmann::json(file) : nlohmann::json(nullptr)},
                                   {"source_frame", source.frame_index()},
                                   {"action", static_cast<int>(action)},
                                   {"produce_ms", producer.last_step_ms()},
                                   {"render_ms", render_time},
                                   {"total_ms", total_time}};
    records << record.dump() << '\n';
    if ((i + 1) % kRecordFlushFrames == 0) flush_records();
    if (options.summary_every > 0 && (i + 1) % options.summary_every == 0) {
      flush_records();
      write_file_atomically((dir / "summary.json").string(),
                            summarize(render_ms, total_ms, produce_ms).dump(2) + "\n");
    }
  }

  flush_records();
  records.close();
  const nlohmann::json summary = summarize(render_ms, total_ms, produce_ms);
  HeadlessReport report;
  report.frames = options.frames;
  report.target_width = target_width;
  report.target_height = target_height;
  report.render_ms_p50 = summary["render_ms_p50"].get<double>();
  report.render_ms_p99 = summary["render_ms_p99"].get<double>();
  report.total_ms_p50 = summary["total_ms_p50"].get<double>();
  report.validation_errors = context.validation_errors();
  report.validation_warnings = context.validation_warnings();
  report.device_name = context.device_name();

  const nlohmann::json run = {
      {"source", source.name()},
      {"source_settings", options.source_meta},
      {"frame_width", source.width()},
      {"frame_height", source.height()},
      {"target_width", target_width},
      {"target_height", target_height},
      {"scale", options.scale},
      {"filter", filter_name(options.present.filter)},
      {"scale_mode", options.present.scale_mode == ScaleMode::kInteger ? "integer" : "fit"},
      {"seed", options.seed},
      {"actions_file", options.actions_file},
      {"action_codes", "0 none, 1 up, 2 down, 3 left, 4 right (engine/game/action.h)"},
      {"device", report.device_name},
      {"validation", options.validate},
      {"validation_errors", report.validation_errors},
      {"validation_warnings", report.validation_warnings},
      {"summary", summary},
      {"frames", options.frames},
      {"frames_file", kRecordsFile}};
  write_file_atomically((dir / "run.json").string(), run.dump(2) + "\n");
  write_file_atomically((dir / "summary.json").string(), summary.dump(2) + "\n");
  return report;
}

}  // namespace wc::ui
