// `worldcast play`: the windowed player, or with --headless N frames to PNG, frames.jsonl and
// run.json, from the world model (--source model) or the reference game (--source game). Thin:
// parses options and calls ui/inference/model_source.h, ui/window/window_player.h or
// ui/frames/headless_runner.h.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/core/log.h"
#include "engine/game/action_script.h"
#include "engine/model/play_settings.h"
#include "engine/rollout/game_source.h"
#include "ui/cli/command.h"
#include "ui/frames/frame_path.h"
#include "ui/frames/headless_runner.h"
#include "ui/frames/source_publish.h"
#include "ui/inference/model_source.h"
#include "ui/window/window_player.h"

namespace wc::cli {
namespace {

struct PlayOptions {
  std::string source;  // "" = model when the bundled model exists, else game
  std::string weights;
  std::string config;
  // Dense: the bundled model's world numbers are measured dense, and HeadCast's are not yet (its
  // model card); the panel switches to HeadCast live.
  std::string policy;  // empty: the model config's default_policy
  std::string policy_settings = "{}";
  std::string cuda_graphs = "on";
  std::string play_settings = "{}";
  std::map<std::string, std::string> play_flags;  // a play setting's key -> its flag's text
  std::string device = "auto";
  bool headless = false;
  int frames = 60;
  int png_every = 1;
  int summary_every = 1000;
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
  bool unpaced = false;
  double fps = 15.0;  // Note [Game frame rate]
  int smoke_test = 0;
  std::string screenshot;
  std::string screenshot_dir = ".";
  std::string record_dir = ".";
  std::string frame_path;  // "" = cuda when the model runs on CUDA (and the build has it), else cpu
};

std::vector<Action> load_actions(const std::string& path) {
  if (path.empty()) return {};
  try {
    return game::load_action_script(path);
  } catch (const game::ActionScriptError& error) {
    throw Error(error.what());  // already "FILE:LINE: what"
  }
}

// --source: what was asked for, else the bundled model when it exists, else the game.
std::string choose_source(PlayOptions& o) {
  if (!o.source.empty()) {
    if (o.source != "model" && o.source != "game") {
      throw Error("--source", "unknown source '" + o.source + "' (model, game)");
    }
    log_info("source: ", o.source, " (--source)");
    if (o.source == "model" && o.weights.empty() && o.config.empty()) {
      // The trained model is what a player asking for "the model" means; random weights of a
      // config stay one flag away (--config).
      o.weights = ui::find_asset(ui::kBundledModelDir);
      if (!o.weights.empty()) log_info("weights: the bundled ", o.weights);
    }
    return o.source;
  }
  if (!o.weights.empty()) {
    log_info("source: model (--weights given)");
    return "model";
  }
  const std::string bundled = ui::find_asset(ui::kBundledModelDir);
  if (!bundled.empty()) {
    o.weights = bundled;
    log_info("source: model, the bundled ", bundled);
    return "model";
  }
  log_info("source: game (no trained model bundled at ", ui::kBundledModelDir,
           "; --source model plays random weights of --config)");
  return "game";
}

nlohmann::json parse_settings(const std::string& text, const std::string& flag) {
  nlohmann::json json = parse_json(text, flag);
  if (!json.is_object()) throw Error(flag, "must be a JSON object");
  return json;
}

// Note [Play settings]: --play-settings with each setting's own flag over it, every value
// checked here against its setting's range, naming the flag.
nlohmann::json play_settings_of(const PlayOptions& o) {
  nlohmann::json play = parse_settings(o.play_settings, "--play-settings");
  for (const model::PlaySetting& setting : model::play_settings()) {
    const auto given = o.play_flags.find(setting.key);
    if (given == o.play_flags.end() || given->second.empty()) continue;
    const std::string flag = "--" + setting.flag;
    const nlohmann::json value = parse_json(given->second, flag);
    const std::string problem = model::play_setting_problem(setting, value);
    if (!problem.empty()) throw Error(flag, problem);
    play[setting.key] = value;
  }
  return play;
}

int report_headless(const ui::HeadlessReport& r, const PlayOptions& o) {
  std::printf(
      "wrote %d frames (%dx%d), frames.jsonl and run.json to %s on %s: render p50 %.3f ms, p99 "
      "%.3f ms; "
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

int report_window(const ui::WindowReport& r, const PlayOptions& o) {
  std::printf(
      "rendered %d frames (%llu generated, %d swapchain builds): frame p50 %.3f ms, "
      "p99 %.3f ms; validation %llu errors, %llu warnings\n",
      r.frames_rendered, static_cast<unsigned long long>(r.frames_produced), r.swapchain_rebuilds,
      r.frame_ms_p50, r.frame_ms_p99, static_cast<unsigned long long>(r.validation_errors),
      static_cast<unsigned long long>(r.validation_warnings));
  if (r.final_stats && r.final_stats->has_policy) {
    std::printf("policy %s %s at frame %llu\n", r.final_stats->policy.c_str(),
                r.final_stats->settings.dump().c_str(),
                static_cast<unsigned long long>(r.final_stats->frame_index));
  }
  int rc = r.validation_errors > 0 ? 1 : 0;
  if (o.smoke_test > 0) {
    if (r.frames_rendered < o.smoke_test) {
      std::fprintf(stderr, "smoke test: only %d of %d frames rendered\n", r.frames_rendered,
                   o.smoke_test);
      rc = 1;
    }
    if (r.screenshots.empty()) {
      std::fprintf(stderr, "smoke test: no screenshot was written\n");
      rc = 1;
    }
    for (const std::string& failure : r.script_failures) {
      std::fprintf(stderr, "smoke test: %s\n", failure.c_str());
      rc = 1;
    }
  }
  return rc;
}

// The frame path hooks for --frame-path (ui/frames/frame_path.h): the CUDA path hands the Session's
// device frames to the sink without a copy to the host; it falls back to the CPU path, logged.
ui::FrameRoute frame_route(const PlayOptions& o, FrameSource& source,
                           const ui::ModelSource& model) {
  const bool on_cuda = model.session && model.session->device().is_cuda();
  const ui::FramePath path = ui::resolve_frame_path(o.frame_path, on_cuda);
  const int cuda_device =
      on_cuda && model.session->device().has_index() ? model.session->device().index() : 0;
  ui::FrameRoute route;
  route.prepare_context = [path, cuda_device](ui::vk::ContextOptions* options) {
    ui::configure_context(path, cuda_device, options);
  };
  route.make_sink = [path, cuda_device, &source](ui::vk::Context& context, int width, int height) {
    ui::FrameSinkChoice choice = ui::make_frame_sink(path, context, width, height, cuda_device);
    log_info("frame path: ", ui::frame_path_name(choice.path),
             choice.fallback_reason.empty() ? "" : " (fallback: " + choice.fallback_reason + ")");
    ui::route_frames_to_device(source, *choice.sink);
    return std::move(choice.sink);
  };
  route.publish = [](const FrameSource& from, ui::FrameSink& sink) {
    ui::publish_source_frame(from, sink);
  };
  return route;
}

int play(PlayOptions o) {
  const auto filter = ui::parse_filter(o.filter);
  if (!filter) throw Error("--filter", "expected nearest or bilinear, got '" + o.filter + "'");
  ui::PresentSettings present;
  present.filter = *filter;
  present.scale_mode = o.fit ? ui::ScaleMode::kFit : ui::ScaleMode::kInteger;
  const std::vector<Action> actions = load_actions(o.actions_file);
  const std::string kind = choose_source(o);
  const nlohmann::json play_settings = play_settings_of(o);
  if (kind != "model" && !play_settings.empty()) {
    throw Error("--play-settings", "only a model has play settings; the source is the " + kind);
  }

  std::unique_ptr<FrameSource> game;
  ui::ModelSource model;
  std::unique_ptr<ui::SessionControl> control;
  FrameSource* source = nullptr;
  nlohmann::json record_meta;
  if (kind == "model") {
    ui::ModelSourceOptions m;
    m.weights = o.weights;
    m.config = o.config;
    m.policy = o.policy;
    m.policy_settings = parse_settings(o.policy_settings, "--policy-settings");
    m.device = o.device;
    m.seed = o.seed;
    m.cuda_graphs = o.cuda_graphs == "on";
    m.play_settings = play_settings;
    model = ui::make_model_source(m);
    log_info(model.summary);
    control = std::make_unique<ui::SessionControl>(*model.session);
    source = model.session.get();
    std::string command = "worldcast play --source model";
    if (!o.config.empty()) command += " --config " + o.config;
    if (!o.weights.empty()) command += " --weights " + o.weights;
    command += " --device " + model.device;
    if (o.cuda_graphs == "off") command += " --cuda-graphs off";
    record_meta = {{"command", command},
                   {"config", model.config_file},
                   {"weights", o.weights},
                   {"device", model.device}};
  } else {
    game = make_game_source(o.width, o.height, o.seed);
    source = game.get();
    record_meta = {{"command", "worldcast play --source game --width " + std::to_string(o.width) +
                                   " --height " + std::to_string(o.height)}};
  }

  if (o.headless) {
    ui::HeadlessOptions options;
    options.frames = o.frames;
    options.png_every = o.png_every;
    options.summary_every = o.summary_every;
    options.out_dir = o.out_dir;
    options.actions = actions;
    options.actions_file = o.actions_file;
    options.seed = o.seed;
    options.scale = o.scale > 0 ? o.scale : 1;
    options.present = present;
    options.validate = o.validate;
    options.source_meta = record_meta;
    options.route = frame_route(o, *source, model);
    if (control) {
      options.source_meta["policy"] = control->policy_name();
      options.source_meta["policy_settings"] = control->policy_settings();
      options.source_meta["play_settings"] = control->play_settings();
    }
    return report_headless(ui::run_headless(options, *source), o);
  }

  ui::WindowOptions options;
  options.scale = o.scale > 0 ? o.scale : 5;
  options.seed = o.seed;
  options.validate = o.validate || o.smoke_test > 0;
  options.vsync = !o.no_vsync;
  options.paced = !o.unpaced;
  options.frame_rate = o.fps;
  options.present = present;
  options.actions = actions;
  options.screenshot_dir = o.screenshot_dir;
  options.screenshot_path = o.screenshot;
  options.record_dir = o.record_dir;
  options.record_meta = record_meta;
  options.route = frame_route(o, *source, model);
  std::unique_ptr<ui::PlayerScript> script;
  if (o.smoke_test > 0) {
    if (o.smoke_test < 30) throw Error("--smoke-test", "needs at least 30 frames");
    options.injected_resizes = ui::smoke_test_resizes(o.smoke_test);
    if (kind == "model") {
      // The model is slower than the display: the script waits on generated frames.
      script = ui::make_model_smoke_script(o.smoke_test);
      options.script = script.get();
    } else {
      options.max_frames = o.smoke_test + 1;  // the script presses Esc before frame N+1
      options.injected_keys = ui::smoke_test_keys(o.smoke_test);
    }
  }
  return report_window(ui::run_window_player(options, *source, control.get()), o);
}

const bool kRegistered = register_command("play", [](CLI::App& app) {
  auto o = std::make_shared<PlayOptions>();
  CLI::App* cmd = app.add_subcommand(
      "play", "Play the neural game (or the reference game) in a window, or render it headless");
  cmd->add_option("--source", o->source,
                  "model or game (default: model when assets/models/game-tokens exists, "
                  "else game)");
  cmd->add_option("--weights", o->weights,
                  "Model checkpoint folder (config.json + safetensors shards); none = the bundled "
                  "model, or random weights of --config when that is given");
  cmd->add_option("--config", o->config,
                  "Model config JSON (default: WEIGHTS/config.json, else "
                  "assets/configs/game-small.json)");
  cmd->add_option(
      "--policy", o->policy,
      "Attention policy: dense, headcast, dummy, tempcache, combined (the panel switches live; "
      "default: the model config's default_policy, else dense)");
  cmd->add_option("--policy-settings", o->policy_settings, "The policy's settings as JSON")
      ->capture_default_str();
  cmd->add_option("--device", o->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--play-settings", o->play_settings,
                  "How a token model draws its frames, as JSON: some of the keys the flags below "
                  "set (Note [Play settings]); the model config's for the rest. The panel's "
                  "sliders change them live")
      ->type_name("JSON")
      ->capture_default_str();
  for (const model::PlaySetting& setting : model::play_settings()) {
    cmd->add_option(
           "--" + setting.flag, o->play_flags[setting.key],
           setting.help + " (play setting '" + setting.key + "'; default: the model config's)")
        ->type_name(setting.integer ? "INT" : "NUMBER");
  }
  cmd->add_option("--cuda-graphs", o->cuda_graphs,
                  "on or off: replay each block's denoising forwards from a CUDA graph once the "
                  "policy allows it (CUDA only)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--frame-path", o->frame_path,
                  "cuda or cpu: how frames reach Vulkan (default: cuda when the model runs on "
                  "CUDA, falling back to cpu with the reason logged)");
  cmd->add_flag("--headless", o->headless, "Render offscreen to PNG files; no window or display");
  cmd->add_option("--frames", o->frames, "Headless: frames to render")->capture_default_str();
  cmd->add_option(
      "--out", o->out_dir,
      "Headless: output folder (new or without a run) for PNGs, frames.jsonl and run.json");
  cmd->add_option("--png-every", o->png_every,
                  "Headless: write every N-th frame as PNG (frame 0 always; 0: none)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--summary-every", o->summary_every,
                  "Headless: rewrite summary.json every N frames (0: at the end only)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--actions", o->actions_file,
                  "Action script (engine/game/action_script.h), e.g. a recording's actions.txt");
  cmd->add_option("--seed", o->seed, "Rollout / world seed")->capture_default_str();
  cmd->add_option("--width", o->width, "Game frame width")->capture_default_str();
  cmd->add_option("--height", o->height, "Game frame height")->capture_default_str();
  cmd->add_option("--scale", o->scale,
                  "Upscale factor (headless output size; initial window size); 0: 1 headless, "
                  "5 windowed")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--filter", o->filter, "nearest or bilinear")->capture_default_str();
  cmd->add_flag("--fit", o->fit, "Fit the window instead of whole-number upscaling");
  cmd->add_flag("--validate", o->validate, "Enable Vulkan validation; any error fails the run");
  cmd->add_flag("--no-vsync", o->no_vsync, "Mailbox/immediate presentation when available");
  cmd->add_flag("--unpaced", o->unpaced, "Generate frames as fast as the source goes");
  cmd->add_option("--fps", o->fps,
                  "Frames generated per second (the game's speed); 0: one per presented frame")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  cmd->add_option("--smoke-test", o->smoke_test,
                  "Render at least N frames with scripted keys and panel use, then quit");
  cmd->add_option("--screenshot", o->screenshot, "F12 writes this PNG file");
  cmd->add_option("--screenshot-dir", o->screenshot_dir, "F12 writes numbered PNGs here")
      ->capture_default_str();
  cmd->add_option("--record-dir", o->record_dir, "F9 / Record makes its folders here")
      ->capture_default_str();
  cmd->callback([o] {
    if (o->headless && o->out_dir.empty()) throw CLI::RequiredError("--out (with --headless)");
    set_exit_code(play(*o));
  });
});

}  // namespace
}  // namespace wc::cli
