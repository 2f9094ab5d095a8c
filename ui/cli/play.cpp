// `worldcast play`: the windowed player, or with --headless N frames to PNG + run.json.
// Thin: parses options and calls ui/window_player.h or ui/headless_runner.h.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "engine/core/error.h"
#include "engine/game/action_script.h"
#include "engine/rollout/game_source.h"
#include "ui/cli/command.h"
#include "ui/headless_runner.h"
#include "ui/window_player.h"

namespace wc::cli {
namespace {

struct PlayOptions {
  std::string source = "game";
  bool headless = false;
  int frames = 60;
  std::string out_dir;
  std::string actions_file;
  uint64_t seed = 1;
  int width = 128;
  int height = 128;
  int scale = 0;  // 0: 1 headless, 5 windowed
  std::string filter = "nearest";
  bool fit = false;
  bool validate = false;
  bool no_vsync = false;
  int smoke_test = 0;
  std::string screenshot;
  std::string screenshot_dir = ".";
};

std::vector<Action> load_actions(const std::string& path) {
  if (path.empty()) return {};
  try {
    return game::load_action_script(path);
  } catch (const game::ActionScriptError& error) {
    throw Error(error.what());  // already "FILE:LINE: what"
  }
}

int play(const PlayOptions& o) {
  if (o.source != "game") throw Error("--source", "unknown source '" + o.source + "' (game)");
  const auto filter = ui::parse_filter(o.filter);
  if (!filter) throw Error("--filter", "expected nearest or bilinear, got '" + o.filter + "'");
  ui::PresentSettings present;
  present.filter = *filter;
  present.scale_mode = o.fit ? ui::ScaleMode::kFit : ui::ScaleMode::kInteger;
  const std::vector<Action> actions = load_actions(o.actions_file);
  std::unique_ptr<FrameSource> source = make_game_source(o.width, o.height, o.seed);

  if (o.headless) {
    ui::HeadlessOptions options;
    options.frames = o.frames;
    options.out_dir = o.out_dir;
    options.actions = actions;
    options.actions_file = o.actions_file;
    options.seed = o.seed;
    options.scale = o.scale > 0 ? o.scale : 1;
    options.present = present;
    options.validate = o.validate;
    const ui::HeadlessReport r = ui::run_headless(options, *source);
    std::printf(
        "wrote %d frames (%dx%d) and run.json to %s on %s: render p50 %.3f ms, p99 %.3f ms; "
        "per frame incl. PNG p50 %.3f ms\n",
        r.frames, r.target_width, r.target_height, o.out_dir.c_str(), r.device_name.c_str(),
        r.render_ms_p50, r.render_ms_p99, r.total_ms_p50);
    if (o.validate) {
      std::printf("validation: %llu errors, %llu warnings\n",
                  static_cast<unsigned long long>(r.validation_errors),
                  static_cast<unsigned long long>(r.validation_warnings));
    }
    return r.validation_errors > 0 ? 1 : 0;
  }

  ui::WindowOptions options;
  options.scale = o.scale > 0 ? o.scale : 5;
  options.seed = o.seed;
  options.validate = o.validate || o.smoke_test > 0;
  options.vsync = !o.no_vsync;
  options.present = present;
  options.actions = actions;
  options.screenshot_dir = o.screenshot_dir;
  options.screenshot_path = o.screenshot;
  if (o.smoke_test > 0) {
    if (o.smoke_test < 30) throw Error("--smoke-test", "needs at least 30 frames");
    options.max_frames = o.smoke_test + 1;  // the script presses Esc before frame N+1
    options.injected_keys = ui::smoke_test_keys(o.smoke_test);
    options.injected_resizes = ui::smoke_test_resizes(o.smoke_test);
  }
  const ui::WindowReport r = ui::run_window_player(options, *source);
  std::printf(
      "rendered %d frames (%llu produced, %d swapchain builds): frame p50 %.3f ms, "
      "p99 %.3f ms; validation %llu errors, %llu warnings\n",
      r.frames_rendered, static_cast<unsigned long long>(r.frames_produced), r.swapchain_rebuilds,
      r.frame_ms_p50, r.frame_ms_p99, static_cast<unsigned long long>(r.validation_errors),
      static_cast<unsigned long long>(r.validation_warnings));
  if (r.validation_errors > 0) return 1;
  if (o.smoke_test > 0) {
    if (r.frames_rendered < o.smoke_test) {
      std::fprintf(stderr, "smoke test: only %d of %d frames rendered\n", r.frames_rendered,
                   o.smoke_test);
      return 1;
    }
    if (r.screenshots.empty()) {
      std::fprintf(stderr, "smoke test: no screenshot was written\n");
      return 1;
    }
  }
  return 0;
}

const bool kRegistered = register_command("play", [](CLI::App& app) {
  auto o = std::make_shared<PlayOptions>();
  CLI::App* cmd = app.add_subcommand("play", "Play a world in a window, or render it headless");
  cmd->add_option("--source", o->source, "Frame source: game (model comes later)")
      ->capture_default_str();
  cmd->add_flag("--headless", o->headless, "Render offscreen to PNG files; no window or display");
  cmd->add_option("--frames", o->frames, "Headless: frames to render")->capture_default_str();
  cmd->add_option("--out", o->out_dir, "Headless: output folder for PNGs and run.json");
  cmd->add_option("--actions", o->actions_file, "Action script (engine/game/action_script.h)");
  cmd->add_option("--seed", o->seed, "World seed")->capture_default_str();
  cmd->add_option("--width", o->width, "Frame width")->capture_default_str();
  cmd->add_option("--height", o->height, "Frame height")->capture_default_str();
  cmd->add_option("--scale", o->scale,
                  "Upscale factor (headless output size; initial window size)");
  cmd->add_option("--filter", o->filter, "nearest or bilinear")->capture_default_str();
  cmd->add_flag("--fit", o->fit, "Fit the window instead of whole-number upscaling");
  cmd->add_flag("--validate", o->validate, "Enable Vulkan validation; any error fails the run");
  cmd->add_flag("--no-vsync", o->no_vsync, "Mailbox/immediate presentation when available");
  cmd->add_option("--smoke-test", o->smoke_test,
                  "Render N frames with scripted keys (move, pause, step, reset, F12), then quit");
  cmd->add_option("--screenshot", o->screenshot, "F12 writes this PNG file");
  cmd->add_option("--screenshot-dir", o->screenshot_dir, "F12 writes numbered PNGs here")
      ->capture_default_str();
  cmd->callback([o] {
    if (o->headless && o->out_dir.empty()) throw CLI::RequiredError("--out (with --headless)");
    set_exit_code(play(*o));
  });
});

}  // namespace
}  // namespace wc::cli
