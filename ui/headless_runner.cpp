// The headless run loop and its run.json; see headless_runner.h.
#include "ui/headless_runner.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/timing.h"
#include "ui/frame_producer.h"
#include "ui/headless_renderer.h"
#include "ui/screenshot.h"
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

// The timings of the frames so far.
nlohmann::json summarize(const std::vector<double>& render_ms, const std::vector<double>& total_ms,
                         const std::vector<double>& produce_ms) {
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
  std::error_code error;
  std::filesystem::create_directories(options.out_dir, error);
  if (error) throw Error(options.out_dir, "cannot create folder: " + error.message());

  const int target_width =
      options.target_width > 0 ? options.target_width : source.width() * options.scale;
  const int target_height =
      options.target_height > 0 ? options.target_height : source.height() * options.scale;

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

  nlohmann::json frames = nlohmann::json::array();
  std::vector<double> render_ms;
  std::vector<double> total_ms;
  std::vector<double> produce_ms;
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
      write_png((std::filesystem::path(options.out_dir) / file).string(), target_width,
                target_height, pixels);
    }
    render_ms.push_back(render_time);
    produce_ms.push_back(producer.last_step_ms());
    total_ms.push_back(total.elapsed_ms());
    frames.push_back({{"index", i},
                      {"file", png ? nlohmann::json(file) : nlohmann::json(nullptr)},
                      {"source_frame", source.frame_index()},
                      {"action", static_cast<int>(action)},
                      {"produce_ms", producer.last_step_ms()},
                      {"render_ms", render_time},
                      {"total_ms", total_ms.back()}});
    if (options.summary_every > 0 && (i + 1) % options.summary_every == 0) {
      write_file_atomically((std::filesystem::path(options.out_dir) / "summary.json").string(),
                            summarize(render_ms, total_ms, produce_ms).dump(2) + "\n");
    }
  }

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
      {"frames", frames}};
  write_file_atomically((std::filesystem::path(options.out_dir) / "run.json").string(),
                        run.dump(2) + "\n");
  write_file_atomically((std::filesystem::path(options.out_dir) / "summary.json").string(),
                        summary.dump(2) + "\n");
  return report;
}

}  // namespace wc::ui
