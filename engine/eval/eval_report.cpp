// See eval_report.h.
#include "engine/eval/eval_report.h"

#include <cstdarg>
#include <cstdio>
#include <string_view>

namespace wc::eval {
namespace {

using Json = nlohmann::json;

__attribute__((format(printf, 1, 2))) std::string format(const char* pattern, ...) {
  char buffer[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buffer, sizeof(buffer), pattern, args);
  va_end(args);
  return buffer;
}

// A number or "-" for null/missing.
std::string num(const Json& value, const char* pattern = "%.2f") {
  if (!value.is_number()) return "-";
  return format(pattern, value.get<double>());
}

std::string percent(const Json& value) {
  if (!value.is_number()) return "-";
  return format("%.1f%%", 100.0 * value.get<double>());
}

const Json& field(const Json& object, const char* key) {
  static const Json kNull = nullptr;
  if (!object.is_object() || !object.contains(key)) return kNull;
  return object[key];
}

// By value (no reference to a temporary string), so g++ 13's -Wdangling-reference stays quiet
// where the result is bound to a reference.
const Json& row_of(const Json& section, std::string_view policy) {
  static const Json kNull = nullptr;
  for (const Json& row : field(section, "rows")) {
    if (row.contains("policy") && row["policy"].is_string() &&
        row["policy"].get_ref<const std::string&>() == policy) {
      return row;
    }
  }
  return kNull;
}

Json check(const std::string& name, const Json& value, const std::string& target, bool pass) {
  return {{"name", name}, {"value", value}, {"target", target}, {"pass", pass && !value.is_null()}};
}

Json at_least(const std::string& name, const Json& value, double target, const char* unit) {
  return check(name, value, format(">= %g%s", target, unit),
               value.is_number() && value.get<double>() >= target);
}

Json at_most(const std::string& name, const Json& value, double target) {
  return check(name, value, format("<= %g", target),
               value.is_number() && value.get<double>() <= target);
}

Json within(const std::string& name, const Json& value, double low, double high) {
  return check(name, value, format("%g..%g", low, high),
               value.is_number() && value.get<double>() >= low && value.get<double>() <= high);
}

}  // namespace

Json eval_checks(const Json& report) {
  Json checks = Json::array();
  if (report.contains("responsiveness")) {
    checks.push_back(
        at_least("responsiveness", field(report["responsiveness"], "share"), 0.90, ""));
  }
  if (report.contains("idle")) {
    checks.push_back(at_least("idle fidelity dB", field(report["idle"], "psnr_db"), 28.0, " dB"));
  }
  if (report.contains("memory")) {
    checks.push_back(
        at_least("return-trip PSNR dB", field(report["memory"], "psnr_db"), 24.0, " dB"));
    // Note [Still trips]: a trip that did not scroll proves no memory.
    checks.push_back(
        at_least("return trip scrolled", field(report["memory"], "trip_scrolled_share"), 0.90, ""));
  }
  if (report.contains("stability")) {
    const Json& s = report["stability"];
    checks.push_back(check("stability finite", field(s, "finite"), "no NaN/inf",
                           field(s, "finite").is_boolean() && s["finite"].get<bool>()));
    checks.push_back(check("stability idle within 1 dB", field(s, "delta_db"), "|delta| <= 1 dB",
                           field(s, "within_1db").is_boolean() && s["within_1db"].get<bool>()));
  }
  if (report.contains("policies")) {
    const Json& headcast = row_of(report["policies"], "headcast");
    const Json& dummy = row_of(report["policies"], "dummy");
    if (!headcast.is_null()) {
      checks.push_back(
          at_least("headcast vs dense PSNR dB", field(headcast, "psnr_db"), 26.0, " dB"));
      if (!dummy.is_null()) {
        const Json& h = field(headcast, "psnr_db");
        const Json& d = field(dummy, "psnr_db");
        checks.push_back(
            check("headcast above dummy", h, "> dummy " + num(d),
                  h.is_number() && d.is_number() && h.get<double>() > d.get<double>()));
      }
    }
  }
  if (report.contains("world")) {
    // Note [World content].
    const Json& w = report["world"];
    // Note [Game's terrain mix]: against the game's mix, not the same seeds' worlds.
    checks.push_back(at_most("world terrain mix TV", field(w, "terrain_mix_tv"), 0.10));
    checks.push_back(
        within("world terrain mix non-grass ratio", field(w, "terrain_mix_ratio"), 0.8, 1.25));
    checks.push_back(at_least("world tile structure", field(w, "structure_share"), 0.95, ""));
    checks.push_back(at_least("world sprite poses", field(w, "sprite_share"), 0.99, ""));
    checks.push_back(
        at_least("world own walls held", field(w, "own_blocked_still_share"), 0.80, ""));
    checks.push_back(
        at_least("world own free steps scrolled", field(w, "own_free_scrolled_share"), 0.90, ""));
    checks.push_back(
        at_least("world return-trip tokens", field(w, "return_patch_share"), 0.90, ""));
  }
  if (report.contains("speed")) {
    const std::string policy = report.value("policy", "dense");
    const Json& row = row_of(report["speed"], policy);
    const bool cuda = report.value("device", "cpu").rfind("cuda", 0) == 0;
    if (cuda) {
      checks.push_back(at_least(policy + " FPS (cuda)", field(row, "fps"), 60.0, ""));
      const Json& p99 = field(row, "frame_ms_p99");
      checks.push_back(check(policy + " p99 frame ms (cuda)", p99, "<= 16.7 ms",
                             p99.is_number() && p99.get<double>() <= 16.7));
    } else {
      checks.push_back(at_least(policy + " FPS (cpu)", field(row, "fps"), 4.0, ""));
    }
  }
  return checks;
}

std::string format_eval_report(const Json& report) {
  std::string out = format(
      "worldcast eval: %s on %s (%s), %zu seed(s), policy %s, window %s frames\n",
      report.value("config", "?").c_str(), report.value("device", "?").c_str(),
      report.value("dtype", "?").c_str(), field(report, "seeds").size(),
      report.value("policy", "?").c_str(), num(field(report, "window_frames"), "%.0f").c_str());
  if (report.contains("responsiveness")) {
    const Json& r = report["responsiveness"];
    out += format(
        "responsiveness   %s of %s moving steps (exact %d px: %s; estimator on the game: "
        "%s; blocked steps still: %s; idle steps still: %s)\n",
        percent(field(r, "share")).c_str(), num(field(r, "scored_steps"), "%.0f").c_str(),
        r.value("scroll_pixels", 0), percent(field(r, "exact_shift_share")).c_str(),
        percent(field(r, "estimator_share_on_truth")).c_str(),
        percent(field(r, "blocked_still_share")).c_str(),
        percent(field(r, "idle_still_share")).c_str());
  }
  if (report.contains("idle")) {
    const Json& r = report["idle"];
    out += format(
        "idle fidelity    %s dB PSNR, SSIM %s over %s frames (first %s dB, last %s dB, "
        "min %s dB)\n",
        num(field(r, "psnr_db")).c_str(), num(field(r, "ssim"), "%.3f").c_str(),
        num(field(r, "frames"), "%.0f").c_str(), num(field(r, "psnr_first_db")).c_str(),
        num(field(r, "psnr_last_db")).c_str(), num(field(r, "psnr_min_db")).c_str());
  }
  if (report.contains("memory")) {
    const Json& r = report["memory"];
    out += format(
        "memory           %s dB PSNR on return (the game itself: %s dB), %s steps = %s px "
        "each way (%s of them scrolled), %s, %zu seed(s) skipped\n",
        num(field(r, "psnr_db")).c_str(), num(field(r, "truth_psnr_db")).c_str(),
        num(field(r, "steps"), "%.0f").c_str(), num(field(r, "scroll_pixels"), "%.0f").c_str(),
        percent(field(r, "trip_scrolled_share")).c_str(),
        field(r, "fits_window").is_boolean() && r["fits_window"].get<bool>()
            ? "fits the window"
            : "LONGER than the window",
        field(r, "skipped_seeds").size());
  }
  if (report.contains("stability")) {
    const Json& r = report["stability"];
    out += format(
        "stability        %s frames, %s non-finite blocks; idle self-PSNR %s -> %s dB "
        "(delta %s; the game: %s -> %s dB), detail ratio %s, sprite vs truth %s -> %s dB\n",
        num(field(r, "frames"), "%.0f").c_str(), num(field(r, "non_finite_blocks"), "%.0f").c_str(),
        num(field(r, "idle_self_psnr_start_db")).c_str(),
        num(field(r, "idle_self_psnr_end_db")).c_str(), num(field(r, "delta_db")).c_str(),
        num(field(r, "truth_idle_self_psnr_start_db")).c_str(),
        num(field(r, "truth_idle_self_psnr_end_db")).c_str(),
        num(field(r, "detail_ratio"), "%.3f").c_str(),
        num(field(r, "sprite_psnr_vs_truth_start_db")).c_str(),
        num(field(r, "sprite_psnr_vs_truth_end_db")).c_str());
  }
  if (report.contains("policies")) {
    const Json& r = report["policies"];
    out += format("policies vs dense (%s frames per seed, first %s left out)\n",
                  num(field(r, "frames_per_seed"), "%.0f").c_str(),
                  num(field(r, "skipped_frames"), "%.0f").c_str());
    out += format("  | %-10s | %8s | %8s | %6s | %16s | %12s |\n", "policy", "PSNR dB", "min dB",
                  "SSIM", "flicker vs dense", "cache tokens");
    for (const Json& row : field(r, "rows")) {
      out += format("  | %-10s | %8s | %8s | %6s | %16s | %12s |\n",
                    row.value("policy", "?").c_str(), num(field(row, "psnr_db")).c_str(),
                    num(field(row, "psnr_min_db")).c_str(), num(field(row, "ssim"), "%.3f").c_str(),
                    num(field(row, "flicker_vs_dense"), "%.3f").c_str(),
                    num(field(row, "cache_tokens"), "%.0f").c_str());
    }
  }
  if (report.contains("speed")) {
    out += "speed (model + decode per frame)\n";
    out += format("  | %-10s | %8s | %8s | %8s | %8s | %9s | %12s | %12s |\n", "policy", "FPS",
                  "p50 ms", "p99 ms", "model ms", "decode ms", "cache tokens", "history kept");
    for (const Json& row : field(report["speed"], "rows")) {
      out +=
          format("  | %-10s | %8s | %8s | %8s | %8s | %9s | %12s | %12s |\n",
                 row.value("policy", "?").c_str(), num(field(row, "fps")).c_str(),
                 num(field(row, "frame_ms_p50")).c_str(), num(field(row, "frame_ms_p99")).c_str(),
                 num(field(row, "model_ms_mean")).c_str(),
                 num(field(row, "decode_ms_mean"), "%.3f").c_str(),
                 num(field(row, "cache_tokens"), "%.0f").c_str(),
                 num(field(row, "history_kept"), "%.3f").c_str());
    }
  }
  if (report.contains("world")) {
    const Json& r = report["world"];
    // Note [Game's terrain mix]: the model's mix against the game's, and the game's own band.
    if (const Json& mix = field(r, "game_mix"); mix.is_object()) {
      const Json& band = field(mix, "band");
      out += format(
          "world            terrain mix against the game's (%s worlds): TV %s, non-grass %s vs "
          "%s (ratio %s); the game's own samples of %s worlds: TV %s mean, %s at most, ratio "
          "%s-%s\n",
          num(field(mix, "worlds"), "%.0f").c_str(),
          num(field(r, "terrain_mix_tv"), "%.3f").c_str(),
          percent(field(r, "non_grass_share")).c_str(),
          percent(field(mix, "non_grass_share")).c_str(),
          num(field(r, "terrain_mix_ratio"), "%.2f").c_str(),
          num(field(band, "worlds_per_sample"), "%.0f").c_str(),
          num(field(band, "tv_mean"), "%.3f").c_str(), num(field(band, "tv_max"), "%.3f").c_str(),
          num(field(band, "ratio_min"), "%.2f").c_str(),
          num(field(band, "ratio_max"), "%.2f").c_str());
    }
    out += format(
        "world            %s frames per seed, after frame %s: terrain TV %s, non-grass %s vs the "
        "game's %s (ratio %s) on the same seeds\n",
        num(field(r, "frames_per_seed"), "%.0f").c_str(),
        num(field(r, "skipped_frames"), "%.0f").c_str(),
        num(field(r, "terrain_tv"), "%.3f").c_str(), percent(field(r, "non_grass_share")).c_str(),
        percent(field(r, "truth_non_grass_share")).c_str(),
        num(field(r, "non_grass_ratio"), "%.2f").c_str());
    // Note [World content]: another world of the game, the floor of the terrain numbers.
    if (const Json& other = field(r, "another_world"); other.is_object()) {
      out += format(
          "                 another world of the game on the same keys: terrain TV %s (pooled %s), "
          "non-grass ratio %s\n",
          num(field(other, "terrain_tv"), "%.3f").c_str(),
          num(field(other, "terrain_tv_pooled"), "%.3f").c_str(),
          num(field(other, "non_grass_ratio"), "%.2f").c_str());
    }
    out += format(
        "                 tile structure %s of %s blocks (the game: %s of %s; %s survey blocks); "
        "sprite poses %s (pixels %s), HUD digits %s\n",
        percent(field(r, "structure_share")).c_str(),
        num(field(r, "structure_blocks"), "%.0f").c_str(),
        percent(field(r, "truth_structure_share")).c_str(),
        num(field(r, "truth_structure_blocks"), "%.0f").c_str(),
        num(field(field(r, "survey"), "blocks"), "%.0f").c_str(),
        percent(field(r, "sprite_share")).c_str(), percent(field(r, "sprite_pixel_share")).c_str(),
        percent(field(r, "hud_share")).c_str());
    // Note [Structure flow]: where the broken blocks are made.
    if (const Json& flow = field(r, "structure_flow"); flow.is_object()) {
      out += format(
          "                 tiles the view's edge completes whole %s (%s a step), of the broken "
          "%s broken in the half that came in before; carried broken blocks %s a step, %s made "
          "by the step\n",
          percent(field(flow, "edge_structure_share")).c_str(),
          num(field(flow, "edge_blocks_per_step"), "%.2f").c_str(),
          percent(field(flow, "edge_broken_first_half_share")).c_str(),
          num(field(flow, "carried_broken_per_step"), "%.2f").c_str(),
          num(field(flow, "carried_broken_made_per_step"), "%.2f").c_str());
    }
    out += format(
        "                 its own walls held %s of %s steps, its free steps scrolled %s of %s "
        "(%s read at its drawn grid); the game's walls held %s of %s, its moving steps scrolled "
        "%s\n",
        percent(field(r, "own_blocked_still_share")).c_str(),
        num(field(r, "own_blocked_steps"), "%.0f").c_str(),
        percent(field(r, "own_free_scrolled_share")).c_str(),
        num(field(r, "own_free_steps"), "%.0f").c_str(),
        num(field(r, "own_drawn_phase_steps"), "%.0f").c_str(),
        percent(field(r, "blocked_still_share")).c_str(),
        num(field(r, "blocked_steps"), "%.0f").c_str(),
        percent(field(r, "walk_scrolled_share")).c_str());
    out += format(
        "                 return trip of %s steps: %s of the %s tokens it drew things on kept, "
        "%s with grass (the game keeps %s)\n",
        num(field(r, "return_trip_steps"), "%.0f").c_str(),
        percent(field(r, "return_patch_share")).c_str(),
        num(field(r, "return_patches"), "%.0f").c_str(),
        percent(field(r, "return_all_patch_share")).c_str(),
        percent(field(r, "truth_return_patch_share")).c_str());
    const Json& segments = field(r, "segments");
    if (segments.size() > 1) {
      out += format("  | %-13s | %8s | %9s | %8s | %15s | %9s | %8s |\n", "frames", "mix TV",
                    "mix ratio", "TV", "non-grass ratio", "structure", "other TV");
      for (const Json& row : segments) {
        const std::string span =
            num(field(row, "first_frame"), "%.0f") + "-" + num(field(row, "last_frame"), "%.0f");
        out += format("  | %-13s | %8s | %9s | %8s | %15s | %9s | %8s |\n", span.c_str(),
                      num(field(row, "terrain_mix_tv"), "%.3f").c_str(),
                      num(field(row, "terrain_mix_ratio"), "%.2f").c_str(),
                      num(field(row, "terrain_tv"), "%.3f").c_str(),
                      num(field(row, "non_grass_ratio"), "%.2f").c_str(),
                      percent(field(row, "structure_share")).c_str(),
                      num(field(row, "another_world_terrain_tv"), "%.3f").c_str());
      }
    }
  }
  const Json& checks = field(report, "checks");
  size_t passed = 0;
  out += "checks\n";
  for (const Json& c : checks) {
    const bool pass = c.value("pass", false);
    passed += pass;
    const Json& value = field(c, "value");
    const std::string shown =
        value.is_boolean() ? (value.get<bool>() ? "true" : "false") : num(value, "%.3f");
    out += format("  %-4s %-32s %10s  (target %s)\n", pass ? "ok" : "FAIL",
                  c.value("name", "?").c_str(), shown.c_str(), c.value("target", "").c_str());
  }
  out += format("%zu of %zu checks pass\n", passed, checks.size());
  return out;
}

}  // namespace wc::eval
