// See world_content.h. The model and the reference game step together on each held-out seed;
// every frame is read as terrain groups (terrain_groups.h), tile blocks (tile_structure.h) and
// overlays (overlay_glyphs.h).
#include "engine/eval/world_content.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/eval/eval_session.h"
#include "engine/eval/ground_flow.h"
#include "engine/eval/memory_trip.h"
#include "engine/eval/overlay_glyphs.h"
#include "engine/eval/own_walls.h"
#include "engine/eval/phase_correlation.h"
#include "engine/eval/reference_run.h"
#include "engine/eval/structure_flow.h"
#include "engine/eval/terrain_groups.h"
#include "engine/eval/tile_structure.h"

namespace wc::eval {
namespace {

using Json = nlohmann::json;

constexpr uint64_t kActionSalt = 0x776F726C64ull;  // "world"
constexpr int kGridEvery = 100;                    // walk frames between pictures of the grid
constexpr int kGridGap = 2;                        // pixels between them

Json share(int64_t part, int64_t whole) {
  if (whole == 0) return nullptr;
  return static_cast<double>(part) / static_cast<double>(whole);
}

// Less than half a camera step in both axes: not a scroll (the game's waves drift a pixel now
// and then; a camera step is game::kPlayerSpeed pixels).
bool view_still(const Shift& shift) {
  return std::abs(shift.dx) < game::kPlayerSpeed / 2 && std::abs(shift.dy) < game::kPlayerSpeed / 2;
}

// `drawn`'s non-grass share over the truth's, null when the truth has none.
Json non_grass_ratio_of(const TerrainHistogram& drawn, const TerrainHistogram& truth) {
  const double truth_share = non_grass_share(truth);
  if (truth_share <= 0.0) return nullptr;
  return non_grass_share(drawn) / truth_share;
}

// The terrain mix and structure of some walk frames, the model's and the game's, and the mix of
// the game's other world on the same keys (Note [World content]).
void add_histogram(TerrainHistogram& sum, const TerrainHistogram& part) {
  for (int g = 0; g < kTerrainGroupCount; ++g) sum[g] += part[g];
}

struct ContentCounts {
  TerrainHistogram model{}, truth{}, other{};
  int64_t frames = 0;
  int64_t model_scored = 0, model_known = 0, truth_scored = 0, truth_known = 0;
  GroundFlow model_flow, truth_flow;  // Note [Ground flow]
  StructureFlow model_structure;      // Note [Structure flow]

  void add(const ContentCounts& o) {
    add_histogram(model, o.model);
    add_histogram(truth, o.truth);
    add_histogram(other, o.other);
    frames += o.frames;
    model_scored += o.model_scored, model_known += o.model_known;
    truth_scored += o.truth_scored, truth_known += o.truth_known;
    model_flow.add(o.model_flow);
    truth_flow.add(o.truth_flow);
    model_structure.add(o.model_structure);
  }
  // Note [Structure flow]: where the broken blocks were made, per step; null when nothing was.
  Json structure_flow_json() const {
    const StructureFlow& f = model_structure;
    const auto per_step = [&](int64_t count) {
      return f.steps == 0 ? Json(nullptr) : Json(static_cast<double>(count) / f.steps);
    };
    return {{"steps", f.steps},
            {"edge_blocks_per_step", per_step(f.edge_blocks)},
            {"edge_structure_share", share(f.edge_known, f.edge_blocks)},
            {"edge_broken_first_half_share",
             share(f.edge_broken_first_half, f.edge_blocks - f.edge_known)},
            {"carried_broken_per_step", per_step(f.carried_broken)},
            {"carried_broken_made_per_step", per_step(f.carried_broken_made)}};
  }
  // Note [Ground flow]'s shares, null when nothing was counted.
  Json flow_json() const {
    const auto value = [](double share) { return share < 0.0 ? Json(nullptr) : Json(share); };
    return {{"invented_non_grass_share", value(model_flow.invented_share())},
            {"truth_invented_non_grass_share", value(truth_flow.invented_share())},
            {"kept_ground_share", value(model_flow.kept_share())},
            {"truth_kept_ground_share", value(truth_flow.kept_share())}};
  }
  Json non_grass_ratio() const { return non_grass_ratio_of(model, truth); }
  Json terrain_tv() const {
    if (frames == 0) return nullptr;
    return total_variation(model, truth);
  }
  Json another_world_non_grass_ratio() const { return non_grass_ratio_of(other, truth); }
  Json another_world_terrain_tv() const {
    if (frames == 0) return nullptr;
    return total_variation(other, truth);
  }
};

Json shares_of(const TerrainHistogram& histogram) {
  int64_t total = 0;
  for (int64_t count : histogram) total += count;
  Json out = Json::object();
  for (int i = 0; i < kTerrainGroupCount; ++i) {
    out[terrain_group_name(static_cast<TerrainGroup>(i))] = share(histogram[i], total);
  }
  return out;
}

// Whether the 8x8 patch at (x0, y0) has the same RGB in both frames (uint8 [H, W, 4]).
bool same_patch(const at::Tensor& a, const at::Tensor& b, int x0, int y0) {
  const int64_t width = a.size(1);
  const uint8_t* pa = a.data_ptr<uint8_t>();
  const uint8_t* pb = b.data_ptr<uint8_t>();
  for (int y = y0; y < y0 + kStructurePatch; ++y) {
    for (int x = x0; x < x0 + kStructurePatch; ++x) {
      const size_t i = (static_cast<size_t>(y) * width + x) * 4;
      if (pa[i] != pb[i] || pa[i + 1] != pb[i + 1] || pa[i + 2] != pb[i + 2]) return false;
    }
  }
  return true;
}

// The top-left corners of the 8x8 patches on the screen grid that miss every overlay.
std::vector<std::pair<int, int>> token_patches(int width, int height,
                                               const std::vector<game::PixelRect>& overlays) {
  std::vector<std::pair<int, int>> patches;
  for (int y = 0; y + kStructurePatch <= height; y += kStructurePatch) {
    for (int x = 0; x + kStructurePatch <= width; x += kStructurePatch) {
      bool hidden = false;
      for (const game::PixelRect& r : overlays) {
        hidden = hidden || (x < r.x + r.width && r.x < x + kStructurePatch && y < r.y + r.height &&
                            r.y < y + kStructurePatch);
      }
      if (!hidden) patches.emplace_back(x, y);
    }
  }
  return patches;
}

// The model's frames in a row above the game's, kGridGap white pixels between pictures.
at::Tensor walk_grid(const std::vector<at::Tensor>& model, const std::vector<at::Tensor>& truth) {
  const int64_t h = model.front().size(0), w = model.front().size(1);
  const int64_t columns = static_cast<int64_t>(model.size());
  at::Tensor grid =
      at::full({2 * h + kGridGap, columns * (w + kGridGap) - kGridGap, 4}, 255, at::kByte);
  for (int64_t i = 0; i < columns; ++i) {
    grid.narrow(0, 0, h).narrow(1, i * (w + kGridGap), w).copy_(model[static_cast<size_t>(i)]);
    grid.narrow(0, h + kGridGap, h)
        .narrow(1, i * (w + kGridGap), w)
        .copy_(truth[static_cast<size_t>(i)]);
  }
  return grid;
}

// Note [Own walls]: the model's steps read against the ground it showed before each of them.
struct OwnWallCounts {
  int64_t blocked = 0, still = 0;  // steps its own walls stop, and of them the ones it held
  int64_t free = 0, scrolled = 0;  // steps its own ground lets through, and the ones it took
  int64_t by_drawn_phase = 0;      // steps read at the frame's drawn grid phase

  void add(StepReading reading, game::Action move, const Shift& shift) {
    by_drawn_phase += reading.by_drawn_phase;
    if (reading.blocked) {
      ++blocked;
      still += view_still(shift);
    } else {
      ++free;
      scrolled += camera_direction(shift) == move;
    }
  }
  void add(const OwnWallCounts& o) {
    blocked += o.blocked, still += o.still, free += o.free, scrolled += o.scrolled;
    by_drawn_phase += o.by_drawn_phase;
  }
};

struct TripCounts {
  int64_t patches = 0;      // patches compared
  int64_t truth_kept = 0;   // of them, brought back unchanged by the game
  int64_t kept = 0;         // of those, brought back unchanged by the model
  int64_t things = 0;       // of the game's, those the model's way out drew something but grass on
  int64_t things_kept = 0;  // of those, brought back unchanged by the model (the checked share)

  void add(const TripCounts& o) {
    patches += o.patches, truth_kept += o.truth_kept, kept += o.kept;
    things += o.things, things_kept += o.things_kept;
  }
};

// Whether any pixel of the 8x8 patch at (x0, y0) of `frame` (uint8 [H, W, 4]) is not grass.
bool holds_a_thing(const at::Tensor& frame, int x0, int y0) {
  const int64_t width = frame.size(1);
  const uint8_t* p = frame.data_ptr<uint8_t>();
  for (int y = y0; y < y0 + kStructurePatch; ++y) {
    for (int x = x0; x < x0 + kStructurePatch; ++x) {
      const size_t i = (static_cast<size_t>(y) * width + x) * 4;
      if (terrain_group_of(p[i], p[i + 1], p[i + 2]) != TerrainGroup::kGrass) return true;
    }
  }
  return false;
}

// One letter per move ("rrrrdddd").
std::string path_letters(const std::vector<game::Action>& path) {
  std::string letters;
  for (game::Action move : path) letters += game::action_name(move)[0];
  return letters;
}

// Note [World content], the return trip. Returns the way out, empty when none was free.
std::vector<game::Action> return_trip(const EvalOptions& options, FrameSource& source,
                                      uint64_t seed,
                                      const std::vector<std::pair<int, int>>& patches,
                                      TripCounts& counts) {
  const int width = source.width(), height = source.height();
  const int f = options.config.frames_per_block;
  source.reset(seed);
  ReferenceRun truth(width, height, seed, options.seed_frames);
  for (int i = 0; i < f; ++i) truth.step(game::Action::kNone);
  const std::vector<game::Action> path = free_trip_path(truth, options.world_trip_steps, f);
  if (path.empty()) return path;
  for (int i = 0; i < f; ++i) source.step(game::Action::kNone);
  // O_j: the frame after j moves out, j = 0..k-1.
  std::vector<at::Tensor> out{current_frame(source)}, out_true{truth.frame()};
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    source.step(path[i]);
    truth.step(path[i]);
    out.push_back(current_frame(source));
    out_true.push_back(truth.frame());
  }
  source.step(path.back());
  truth.step(path.back());
  for (size_t j = path.size(); j-- > 0;) {
    source.step(opposite(path[j]));
    truth.step(opposite(path[j]));
    const at::Tensor frame = current_frame(source), frame_true = truth.frame();
    for (const auto& [x, y] : patches) {
      ++counts.patches;
      if (!same_patch(frame_true, out_true[j], x, y)) continue;
      ++counts.truth_kept;
      const bool kept = same_patch(frame, out[j], x, y);
      counts.kept += kept;
      if (holds_a_thing(out[j], x, y)) {
        ++counts.things;
        counts.things_kept += kept;
      }
    }
  }
  return path;
}

// The terrain histogram of a game walk: every frame after kWorldSkipFrames, overlays left out.
TerrainHistogram walk_histogram(const EvalOptions& options, uint64_t seed, int width, int height,
                                int frames) {
  const std::vector<game::PixelRect> overlays = game::screen_overlays(width, height);
  TerrainHistogram histogram{};
  ReferenceRun run(width, height, seed, options.seed_frames);
  const std::vector<game::Action> actions = eval_actions(options, seed ^ kActionSalt, frames);
  for (int i = 0; i < frames; ++i) {
    run.step(actions[static_cast<size_t>(i)]);
    if (i + 1 <= kWorldSkipFrames) continue;
    const std::vector<TerrainGroup> groups =
        terrain_groups(run.game().frame().data(), width, height);
    add_histogram(histogram, terrain_histogram(groups, width, height, overlays));
  }
  return histogram;
}

TerrainHistogram pooled(const std::vector<TerrainHistogram>& histograms, size_t first,
                        size_t last) {
  TerrainHistogram sum{};
  for (size_t w = first; w < last; ++w) add_histogram(sum, histograms[w]);
  return sum;
}

int64_t pixels_of(const TerrainHistogram& histogram) {
  int64_t total = 0;
  for (int64_t count : histogram) total += count;
  return total;
}

// A histogram's distance from the game's mix and its non-grass share over the mix's (Note
// [Game's terrain mix]); nulls when either counted nothing.
Json mix_tv(const TerrainHistogram& model, const TerrainHistogram& mix) {
  if (pixels_of(model) == 0 || pixels_of(mix) == 0) return nullptr;
  return total_variation(model, mix);
}

// How close the game's own walks come to its mix in samples of `per_sample` worlds: each sample
// against the other worlds (Note [Game's terrain mix]).
Json mix_band(const std::vector<TerrainHistogram>& worlds, size_t per_sample) {
  per_sample = std::max<size_t>(1, std::min(per_sample, worlds.size() / 2));
  const size_t samples = worlds.size() / per_sample;
  double tv_sum = 0.0, tv_max = 0.0, ratio_min = 0.0, ratio_max = 0.0;
  int counted = 0;
  const TerrainHistogram all = pooled(worlds, 0, worlds.size());
  for (size_t s = 0; s < samples; ++s) {
    const TerrainHistogram sample = pooled(worlds, s * per_sample, (s + 1) * per_sample);
    TerrainHistogram rest = all;
    for (int g = 0; g < kTerrainGroupCount; ++g) rest[g] -= sample[g];
    const Json tv = mix_tv(sample, rest);
    const Json ratio = non_grass_ratio_of(sample, rest);
    if (!tv.is_number() || !ratio.is_number()) continue;
    const double r = ratio.get<double>();
    tv_sum += tv.get<double>();
    tv_max = std::max(tv_max, tv.get<double>());
    ratio_min = counted == 0 ? r : std::min(ratio_min, r);
    ratio_max = counted == 0 ? r : std::max(ratio_max, r);
    ++counted;
  }
  if (counted == 0) return nullptr;
  return {{"worlds_per_sample", per_sample}, {"samples", counted},
          {"tv_mean", tv_sum / counted},     {"tv_max", tv_max},
          {"ratio_min", ratio_min},          {"ratio_max", ratio_max}};
}

}  // namespace

std::vector<TerrainHistogram> survey_terrain_mix(const EvalOptions& options, int width,
                                                 int height) {
  const int frames = std::min(options.world_frames, kTerrainMixFrames);
  std::vector<TerrainHistogram> worlds;
  worlds.reserve(kTerrainMixWorlds);
  for (int w = 0; w < kTerrainMixWorlds; ++w) {
    worlds.push_back(walk_histogram(options, kTerrainMixFirstSeed + static_cast<uint64_t>(w), width,
                                    height, frames));
  }
  return worlds;
}

Json eval_world(const EvalOptions& options) {
  auto source = make_eval_source(options, options.policy, options.seeds.front());
  const int width = source->width(), height = source->height();
  const std::vector<game::PixelRect> overlays = game::screen_overlays(width, height);
  const game::PixelRect sprite_rect = overlays.front();
  const PhaseCorrelationOptions correlation = scroll_estimator(options, width, height);
  const std::vector<std::pair<int, int>> patches = token_patches(width, height, overlays);
  report_progress(options, "world: surveying the game's tile blocks (" +
                               std::to_string(kStructureSurveySeeds) + " seeds x " +
                               std::to_string(kStructureSurveyFrames) + " frames)");
  const TileBlockSurvey survey = survey_tile_blocks(width, height);
  report_progress(options, "world: surveying the game's terrain mix (" +
                               std::to_string(kTerrainMixWorlds) + " worlds)");
  const std::vector<TerrainHistogram> mix_worlds = survey_terrain_mix(options, width, height);
  const TerrainHistogram mix = pooled(mix_worlds, 0, mix_worlds.size());

  const int frames = options.world_frames;
  const size_t segment_count =
      frames > kWorldSkipFrames ? static_cast<size_t>((frames - 1) / kWorldSegmentFrames + 1) : 0;
  std::vector<ContentCounts> segments(segment_count);
  ContentCounts total;
  double tv_sum = 0.0, other_tv_sum = 0.0;
  int tv_seeds = 0;
  int64_t walk_frames = 0, sprite_poses = 0, hud_readable = 0;
  double sprite_pixels = 0.0;
  int64_t blocked = 0, blocked_still = 0, moving = 0, scrolled = 0;
  OwnWallCounts own;
  TripCounts trip_total;
  Json per_seed = Json::array(), trip_skipped = Json::array();

  for (uint64_t seed : options.seeds) {
    report_progress(
        options, "world: seed " + std::to_string(seed) + ", " + std::to_string(frames) + " frames");
    source->reset(seed);
    ReferenceRun truth(width, height, seed, options.seed_frames);
    ReferenceRun other(width, height, another_world_seed(seed), options.seed_frames);
    at::Tensor previous = current_frame(*source);
    // Each frame is read as terrain groups and tile blocks once: for the terrain mix and the
    // structure, and as the ground the next step meets (Note [Own walls]).
    std::vector<TerrainGroup> previous_groups =
        terrain_groups(previous.data_ptr<uint8_t>(), width, height);
    GridPhase previous_phase =
        best_structure(previous_groups, width, height, overlays, survey).phase;
    std::vector<TerrainGroup> previous_true_groups =
        terrain_groups(truth.game().frame().data(), width, height);
    const bool keep_grid = options.keep_frame && seed == options.seeds.front();
    std::vector<at::Tensor> grid_model, grid_truth;
    if (keep_grid) {
      grid_model.push_back(previous);
      grid_truth.push_back(truth.frame());
    }
    ContentCounts seed_counts;
    int64_t seed_sprite = 0, seed_hud = 0, seed_blocked = 0, seed_blocked_still = 0;
    OwnWallCounts seed_own;
    const std::vector<game::Action> actions = eval_actions(options, seed ^ kActionSalt, frames);
    for (int i = 0; i < frames; ++i) {
      const game::Action action = actions[static_cast<size_t>(i)];
      source->step(action);
      const bool moved = truth.step(action);
      other.step(action);
      at::Tensor frame = current_frame(*source);
      const uint8_t* pixels = frame.data_ptr<uint8_t>();
      const uint8_t* true_pixels = truth.game().frame().data();
      const int walk_frame = i + 1;
      std::vector<TerrainGroup> groups = terrain_groups(pixels, width, height);
      std::vector<TerrainGroup> true_groups = terrain_groups(true_pixels, width, height);
      const StructureScore drawn = best_structure(groups, width, height, overlays, survey);
      Shift model_scroll;  // the content shift of the model's own step (Note [Ground flow])

      if (action != game::Action::kNone) {
        const Shift shift = estimate_shift(previous, frame, correlation);
        model_scroll = content_shift_of(camera_direction(shift), game::kPlayerSpeed);
        if (moved) {
          ++moving;
          scrolled += camera_direction(shift) == action;
        } else {
          ++seed_blocked;
          seed_blocked_still += view_still(shift);
        }
        seed_own.add(read_step(previous_groups, width, height, action, overlays, previous_phase),
                     action, shift);
      }
      const SpriteMatch sprite = match_player_sprite(pixels, width, height, sprite_rect);
      seed_sprite += sprite.pose;
      sprite_pixels += sprite.pixel_share;
      seed_hud += hud_digits_readable(pixels, width, height);
      ++walk_frames;

      if (walk_frame > kWorldSkipFrames) {
        ContentCounts counts;
        counts.frames = 1;
        counts.model_flow = ground_flow(previous_groups, groups, width, height, model_scroll.dx,
                                        model_scroll.dy, overlays);
        counts.model_structure =
            structure_flow(previous_groups, groups, width, height, model_scroll.dx, model_scroll.dy,
                           drawn.phase, overlays, survey);
        if (moved) {
          const Shift camera = content_shift_of(action, game::kPlayerSpeed);
          counts.truth_flow = ground_flow(previous_true_groups, true_groups, width, height,
                                          camera.dx, camera.dy, overlays);
        }
        counts.model = terrain_histogram(groups, width, height, overlays);
        counts.truth = terrain_histogram(true_groups, width, height, overlays);
        counts.other = terrain_histogram(terrain_groups(other.game().frame().data(), width, height),
                                         width, height, overlays);
        const StructureScore true_drawn = score_structure(
            true_groups, width, height, game_grid_phase(truth.game()), overlays, survey);
        counts.model_scored = drawn.scored, counts.model_known = drawn.known;
        counts.truth_scored = true_drawn.scored, counts.truth_known = true_drawn.known;
        seed_counts.add(counts);
        segments[static_cast<size_t>(i / kWorldSegmentFrames)].add(counts);
      }
      if (keep_grid && walk_frame % kGridEvery == 0) {
        grid_model.push_back(frame);
        grid_truth.push_back(truth.frame());
      }
      if (walk_frame % kWorldSegmentFrames == 0 && walk_frame < frames) {
        report_progress(options, "world: seed " + std::to_string(seed) + ", frame " +
                                     std::to_string(walk_frame) + "/" + std::to_string(frames));
      }
      previous = std::move(frame);
      previous_groups = std::move(groups);
      previous_true_groups = std::move(true_groups);
      previous_phase = drawn.phase;
    }
    if (keep_grid) options.keep_frame("world_walk_grid", walk_grid(grid_model, grid_truth));
    total.add(seed_counts);
    const Json seed_tv = seed_counts.terrain_tv();
    const Json seed_other_tv = seed_counts.another_world_terrain_tv();
    if (seed_tv.is_number()) {  // the other world's is a number on the same frames
      tv_sum += seed_tv.get<double>();
      other_tv_sum += seed_other_tv.get<double>();
      ++tv_seeds;
    }
    sprite_poses += seed_sprite;
    hud_readable += seed_hud;
    blocked += seed_blocked;
    blocked_still += seed_blocked_still;
    own.add(seed_own);

    TripCounts trip;
    const std::vector<game::Action> path = return_trip(options, *source, seed, patches, trip);
    if (path.empty()) trip_skipped.push_back(seed);
    trip_total.add(trip);
    per_seed.push_back(
        {{"seed", seed},
         {"terrain_tv", seed_tv},
         {"terrain_mix_tv", mix_tv(seed_counts.model, mix)},
         {"non_grass_ratio", seed_counts.non_grass_ratio()},
         {"non_grass_share", non_grass_share(seed_counts.model)},
         {"truth_non_grass_share", non_grass_share(seed_counts.truth)},
         {"another_world_terrain_tv", seed_other_tv},
         {"another_world_non_grass_ratio", seed_counts.another_world_non_grass_ratio()},
         {"structure_share", share(seed_counts.model_known, seed_counts.model_scored)},
         {"ground_flow", seed_counts.flow_json()},
         {"structure_flow", seed_counts.structure_flow_json()},
         {"sprite_share", share(seed_sprite, frames)},
         {"hud_share", share(seed_hud, frames)},
         {"blocked_steps", seed_blocked},
         {"blocked_still_share", share(seed_blocked_still, seed_blocked)},
         {"own_blocked_steps", seed_own.blocked},
         {"own_blocked_still_share", share(seed_own.still, seed_own.blocked)},
         {"own_free_scrolled_share", share(seed_own.scrolled, seed_own.free)},
         {"trip_path", path_letters(path)},
         {"return_patch_share", share(trip.things_kept, trip.things)},
         {"return_all_patch_share", share(trip.kept, trip.truth_kept)}});
  }

  Json segment_rows = Json::array();
  for (size_t s = 0; s < segments.size(); ++s) {
    const ContentCounts& c = segments[s];
    const int first = std::max(kWorldSkipFrames, static_cast<int>(s) * kWorldSegmentFrames);
    const int last = std::min(frames, static_cast<int>(s + 1) * kWorldSegmentFrames);
    segment_rows.push_back({{"first_frame", first + 1},
                            {"last_frame", last},
                            {"terrain_tv", c.terrain_tv()},
                            {"terrain_mix_tv", mix_tv(c.model, mix)},
                            {"terrain_mix_ratio", non_grass_ratio_of(c.model, mix)},
                            {"non_grass_ratio", c.non_grass_ratio()},
                            {"another_world_terrain_tv", c.another_world_terrain_tv()},
                            {"structure_share", share(c.model_known, c.model_scored)},
                            {"structure_block_ratio", share(c.model_scored, c.truth_scored)},
                            {"truth_structure_share", share(c.truth_known, c.truth_scored)},
                            {"ground_flow", c.flow_json()},
                            {"structure_flow", c.structure_flow_json()}});
  }
  Json groups = Json::array();
  for (int i = 0; i < kTerrainGroupCount; ++i) {
    groups.push_back(terrain_group_name(static_cast<TerrainGroup>(i)));
  }
  char salt[24];
  std::snprintf(salt, sizeof(salt), "0x%" PRIx64, kAnotherWorldSalt);
  return {
      {"policy", options.policy},
      {"frames_per_seed", frames},
      {"skipped_frames", kWorldSkipFrames},
      {"segment_frames", kWorldSegmentFrames},
      {"groups", groups},
      {"terrain_mix_tv", mix_tv(total.model, mix)},
      {"terrain_mix_ratio", non_grass_ratio_of(total.model, mix)},
      {"game_mix",
       {{"worlds", kTerrainMixWorlds},
        {"first_seed", kTerrainMixFirstSeed},
        {"frames_per_world", std::min(frames, kTerrainMixFrames)},
        {"shares", shares_of(mix)},
        {"non_grass_share", pixels_of(mix) == 0 ? Json(nullptr) : Json(non_grass_share(mix))},
        {"band", mix_band(mix_worlds, options.seeds.size())}}},
      {"terrain_tv", tv_seeds == 0 ? Json(nullptr) : Json(tv_sum / tv_seeds)},
      {"terrain_tv_pooled", total.terrain_tv()},
      {"non_grass_ratio", total.non_grass_ratio()},
      {"non_grass_share", non_grass_share(total.model)},
      {"truth_non_grass_share", non_grass_share(total.truth)},
      {"shares", shares_of(total.model)},
      {"truth_shares", shares_of(total.truth)},
      {"another_world",
       {{"seed_salt", salt},
        {"terrain_tv", tv_seeds == 0 ? Json(nullptr) : Json(other_tv_sum / tv_seeds)},
        {"terrain_tv_pooled", total.another_world_terrain_tv()},
        {"non_grass_ratio", total.another_world_non_grass_ratio()}}},
      {"structure_share", share(total.model_known, total.model_scored)},
      {"structure_blocks", total.model_scored},
      {"truth_structure_blocks", total.truth_scored},
      {"structure_block_ratio", share(total.model_scored, total.truth_scored)},
      {"truth_structure_share", share(total.truth_known, total.truth_scored)},
      {"ground_flow", total.flow_json()},
      {"structure_flow", total.structure_flow_json()},
      {"survey",
       {{"seeds", kStructureSurveySeeds},
        {"frames", survey.frames()},
        {"first_seed", kStructureSurveyFirstSeed},
        {"blocks", survey.size()}}},
      {"walk_frames", walk_frames},
      {"sprite_share", share(sprite_poses, walk_frames)},
      {"sprite_pixel_share",
       walk_frames == 0 ? Json(nullptr) : Json(sprite_pixels / static_cast<double>(walk_frames))},
      {"hud_share", share(hud_readable, walk_frames)},
      {"blocked_steps", blocked},
      {"blocked_still_share", share(blocked_still, blocked)},
      {"moving_steps", moving},
      {"walk_scrolled_share", share(scrolled, moving)},
      {"own_blocked_steps", own.blocked},
      {"own_blocked_still_share", share(own.still, own.blocked)},
      {"own_free_steps", own.free},
      {"own_free_scrolled_share", share(own.scrolled, own.free)},
      {"own_drawn_phase_steps", own.by_drawn_phase},
      {"return_trip_steps", options.world_trip_steps},
      {"return_patch_share", share(trip_total.things_kept, trip_total.things)},
      {"return_patches", trip_total.things},
      {"return_all_patch_share", share(trip_total.kept, trip_total.truth_kept)},
      {"return_all_patches", trip_total.truth_kept},
      {"truth_return_patch_share", share(trip_total.truth_kept, trip_total.patches)},
      {"return_trip_skipped_seeds", trip_skipped},
      {"excluded", "player sprite and HUD"},
      {"segments", segment_rows},
      {"per_seed", per_seed}};
}

}  // namespace wc::eval
