// World content (DESIGN.md §13): does the model's world still look like the game's? Its terrain
// mix and tile structure on long random walks, per 1 000-frame segment for drift; its sprite
// poses and HUD digits; whether it stands still where the game's walls stop the player; and
// whether a short return trip brings back the same tokens.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/eval/eval_options.h"
#include "engine/eval/terrain_groups.h"

namespace wc::eval {

// The first walk frames left out of the terrain mix and the structure: early frames are mostly
// the seeded view, which the model only has to keep, not to dream.
inline constexpr int kWorldSkipFrames = 200;
// Walk frames per drift segment.
inline constexpr int kWorldSegmentFrames = 1000;

// The salt of the another-world reference (Note [World content]): "another" in ASCII. Its high
// bits lift every seed below 2^48 above 2^54, clear of the held-out eval seeds (around
// 1 000 000) and the structure survey's (from kStructureSurveyFirstSeed = 2 000 000); training
// worlds draw their seeds from the whole 64-bit range, where meeting one is as unlikely as two
// training worlds meeting.
inline constexpr uint64_t kAnotherWorldSalt = 0x616E6F74686572ull;

// The seed of the game's other world on eval seed `seed`: a different world of the same game,
// walked with the same keys.
inline constexpr uint64_t another_world_seed(uint64_t seed) {
  return seed ^ kAnotherWorldSalt;
}

// Note [Game's terrain mix]: past the seeded view a model invents its world, so the terrain of
// its walk on one seed says little against the game's walk on that seed: another world of the
// game on the same keys differs as much (on 8 held-out seeds, terrain TV 0.20 against the truth
// and a non-grass ratio of 0.53; "another_world" below). A world is as the game's when its mix
// is the game's mix, which no handful of walks shows: a lake the walk stays beside fills a whole
// seed's frames. So the game's mix is surveyed from kTerrainMixWorlds worlds (seeds from
// kTerrainMixFirstSeed, clear of the eval's, the structure survey's and another_world_seed's),
// each walked as the eval walks its seeds (eval_actions, the eval's frames up to
// kTerrainMixFrames: the world is the same everywhere past the spawn, so longer walks add only
// time), every frame after kWorldSkipFrames read as the model's are. "terrain_mix_tv" is the
// total-variation distance between the model's histogram pooled over its seeds and the game's
// mix, "terrain_mix_ratio" its non-grass share over the mix's (per segment too). How close the
// game itself comes with as few walks is "game_mix.band": the survey's worlds in samples of as
// many worlds as the eval has seeds, each sample's pooled histogram against the other worlds'
// (its TV's mean and largest, its ratio's range). A model within the band draws a mix the game
// could have drawn on that many walks; the targets (TV <= 0.10, ratio 0.8-1.25) are read
// against the mix, and asking them of 8 seeds asks for no more than the band allows.
inline constexpr int kTerrainMixWorlds = 64;
inline constexpr uint64_t kTerrainMixFirstSeed = 3000000;
inline constexpr int kTerrainMixFrames = 1000;

// Each of the kTerrainMixWorlds worlds' terrain histogram (Note [Game's terrain mix]), walked as
// eval_world walks options' seeds; empty histograms when the walk ends by kWorldSkipFrames.
std::vector<TerrainHistogram> survey_terrain_mix(const EvalOptions& options, int width, int height);

// Note [World content]: per seed, the model and the reference game take the same player-like
// walk (eval_actions, options.world_frames frames). From walk frame kWorldSkipFrames on, every
// pixel outside the HUD and the sprite is put in its terrain group (Note [Terrain groups]):
// "terrain_tv" is the mean over seeds of the total-variation distance between the model's and
// the game's group histograms, "non_grass_ratio" the model's non-grass share over the game's
// (pooled over seeds: 1 is the game's mix, 0 an empty field). "structure_share" is the share of
// the model's scored blocks the game draws too (Note [Tile structure]); a model that draws
// fewer of them than the game shows it in "structure_block_ratio" (model's scored blocks over
// the game's on the same frames; 0 for an empty field, whose "structure_share" is null: it draws
// nothing to score). The same numbers per kWorldSegmentFrames of walk ("segments") show drift.
//
// Past the seeded view a model must invent its ground, and two worlds of the game differ on the
// same keys too. So beside the truth the game also plays another of its worlds
// (another_world_seed) with the same actions, read as the model is: "another_world" holds its
// "terrain_tv", "terrain_tv_pooled" and "non_grass_ratio" against the truth (per seed and per
// segment "another_world_terrain_tv"). It is the floor of the same-seed terrain numbers for any
// model that invents ground the game never showed it: a model scoring near it draws a world as
// game-like as another of the game's own worlds.
//
// Every walk frame is read for the overlays: "sprite_share" is the share of frames whose sprite
// box is one of the game's poses, "hud_share" the share whose HUD digits read as a count
// (overlay_glyphs.h). Steps where a key was pressed but the true camera stayed (a wall, water or
// a tree in the way) are "blocked": "blocked_still_share" is the share of them where the model's
// view did not scroll either (the responsiveness estimator reads a shift under half a camera
// step in both axes: the game's own waves read as a pixel's scroll next to much water), and
// "walk_scrolled_share" the share of the game's moving steps that scrolled the key's way. Both
// judge the model by the game's walls, which it stops showing a few steps off the seeded view.
// The checked pair judges it by its own (Note [Own walls]): of the steps the ground it showed
// before them stops, "own_blocked_still_share" held still; of those it lets through,
// "own_free_scrolled_share" scrolled the key's way ("own_drawn_phase_steps": those read at the
// grid the frame is drawn at, the phases disagreeing). A world that never scrolls holds at every
// wall and fails the free steps; an empty field has no walls to hold ("own_blocked_still_share"
// null).
//
// Return trip in tokens: after one idle block, options.world_trip_steps moves out along a free
// way that never crosses itself (free_trip_path: straight on where it can, turning where walls,
// water or trees are in the way, so that a seed whose spawn has no long straight way is still
// measured; a seed with no way at all is listed in "return_trip_skipped_seeds") and the same way
// back, as in Note [Memory trip]. Each returning frame's 8x8 patches on the screen grid (the
// model's tokens; patches touching the HUD or the sprite are left out) are compared, all pixels
// exact, with the way out's frame at the same camera position. Only patches the game itself
// brings back unchanged are scored (water waves move on; a crystal walked over stays gone), and
// of those only the ones where the model's way out drew something but grass: "return_patch_share"
// is the share of them the model brings back exactly. What a player remembers of a place is its
// lake, its trees, its ruins; a field of grass brought back as grass is no memory, and counting
// it let an empty world score what the world it forgot could not ("return_patch_share" is null
// when the way out drew nothing but grass). "return_all_patch_share" counts every scored patch,
// grass too, and "truth_return_patch_share" is the game's own share of all patches, for context.
//
// Where the world gains and loses ground that is not grass (Note [Ground flow], ground_flow.h):
// "ground_flow" (in total, per seed and per segment) holds the non-grass share of the strip each
// scrolling step brought into view, the model's ("invented_non_grass_share") beside the game's,
// and the share of the carried non-grass pixels that kept their group ("kept_ground_share"),
// so an emptying world says whether it invents too little or lets its ground fade.
//
// Where its broken tiles are made (Note [Structure flow], structure_flow.h): "structure_flow" (in
// total, per seed and per segment) holds, per step, the scored blocks the view's edge completed
// and the share of them the game draws ("edge_structure_share"), the share of the broken ones
// already broken in the half that came in a step before ("edge_broken_first_half_share"), and the
// broken blocks of the carried view a step, all ("carried_broken_per_step") and those the step
// made out of ground that was not broken before ("carried_broken_made_per_step").
//
// With options.keep_frame set, the first seed's walk is handed over as one picture,
// "world_walk_grid": the model's frames on top, the game's below, at walk frames 0, 100, 200, ...
nlohmann::json eval_world(const EvalOptions& options);

}  // namespace wc::eval
