// Settings of the dense and headcast policies: parsing and validation of their JSON keys, and the
// forced casts ("mix" / "layers") expanded to one head type per layer and head.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "engine/attention/ann/ann_settings.h"
#include "engine/attention/attention_policy.h"
#include "engine/attention/headcast/head_type.h"

namespace wc::attention {

// How the spatial path cuts a frame's [h, w] grid into cells. See Note [Spatial cells].
enum class CellMode : uint8_t { kDivisor, kRagged, kRounded };

// What classification restricts a Spatial candidate to. See Note [Spatial proxy].
enum class SpatialProxyKind : uint8_t { kNeighbourhood, kCells };

// CastThresholds and the cast rule live in head_type.h (the panel reads them without LibTorch).

// Note [Paper defaults]
// Every setting HeadCast takes defaults to the paper's: θ_d = θ_s = θ_sp = 0.95, θ_sc = 0.755,
// γ = 5, classification at maximum noise once the window (7 blocks: the sink and 6 rolling)
// first fills, the (2r+1)² neighbourhood with r = 2 as the Spatial proxy, and 10x10 cells with
// the remainder rounded into them ("rounded", Note [Spatial cells]). So a run that names nothing
// is the method as published, and a table says which of these it changed. A model config carries
// the settings measured better on that model ("policies", Note [Model policy settings]): the
// bundled token model scores by the worst token with no Spatial head; the pixel models keep the
// "cells" proxy (Note [Spatial proxy]) and "divisor" cells they were measured with.
struct CastSettings {
  int64_t window = 0;  // frames, sink block included; 0 = unbounded
  CastThresholds thresholds;
  // The paper's defaults (Note [Paper defaults]): its neighbourhood proxy and 10x10 cells with
  // the remainder rounded into them; a model config may name its own.
  SpatialProxyKind spatial_proxy = SpatialProxyKind::kNeighbourhood;  // Note [Spatial proxy]
  int radius = 2;  // classification's spatial neighbourhood (tokens), for kNeighbourhood
  int cell = 10;   // deployed spatial cell edge (tokens)
  CellMode cell_mode = CellMode::kRounded;
  int64_t classify_block = -1;  // -1: the first block whose history holds `window` frames
  int classify_step = 0;        // denoising step of that block (0 = max noise)
  // Note [Every-step evidence]: a head's evidence from one step stands for all of them when the
  // steps attend alike (a flow model's noise levels); a token model's passes do not (the first
  // sees a frame of masks, the commit a clean frame), and a head that only needs the sink and
  // the current frame at one pass may need the last frame at another. With this set, the
  // classifying block measures every step from classify_step on, the clean pass included, and
  // each score keeps its worst value, so a head is cast cheap only if it is cheap at every step.
  bool classify_every_step = false;
  int64_t query_sample = 512;  // query rows used for classification, 0 = all
  uint64_t seed = 0;
  nlohmann::json cast;  // null (classify online) or a validated {"mix"} / {"layers"}
  // FAST-AR's AnnSA on the Global heads (Note [AnnSA tiles]): each of their queries attends to the
  // history keys of its own and nearby buckets and to the whole current block, with `ann` (the
  // ann_* keys). The heads' cache is unchanged; their attention is not replayed from a CUDA graph.
  bool global_ann = false;
  AnnSettings ann;
};

// Note [Worst-token scores]
// The paper scores a Sink or Dummy candidate by the mean cosine of its restricted output with the
// full one over the block's tokens, and a Spatial candidate by the mean and the 5th percentile. A
// mean over a frame cannot see a small object: the game's player sprite covers 4 of a token
// frame's 256 tokens and the HUD 10, so a head whose cheaper path is exact everywhere but there
// scores above 0.99, and the 5th percentile leaves out the worst 12 tokens. A pixel model's error
// there is a little blur; a token model draws a token from its distribution, so a wrong output at
// the sprite is a wrong pose, and the frames after it copy the break. With `worst_token` each
// path's score is its worst token's cosine (for Spatial in place of P5); the thresholds and gamma
// keep their meaning. Measured on the token model's earlier weights (CPU, one walk of 200 frames,
// window 7, sprite whole / HUD whole): the paper's scores 17.5 % / 13.5 %; every head Global
// 96.5 % / 95 %; Sink and Dummy by their worst token with no Spatial head 97 % / 97.5 %; but with
// Spatial heads, scored either way, 6.5 % / 96 %: a Spatial head sees only its own cell of each
// frame, the sprite sits where four 8×8 cells meet, and the scroll carries every cell's edge from
// its neighbour's. So the token model's config turns worst_token on and Spatial off (theta_spatial
// above any cosine); the default stays the paper's.

// The defaults for a model: window = 7 blocks (sink block + 6 rolling blocks).
CastSettings default_cast_settings(const ModelShape& shape);

// `base` with the keys of `json` applied; throws wc::Error naming the offending key for unknown
// keys, wrong types and out-of-range values. `where` prefixes the messages ("headcast settings").
CastSettings apply_cast_settings(CastSettings base, const nlohmann::json& json,
                                 const ModelShape& shape, const char* where);
nlohmann::json cast_settings_json(const CastSettings& settings);

// The dense policy's only key: "window" (frames, 0 = unbounded, else at least one block).
int64_t parse_window_setting(const nlohmann::json& value, const BlockGeometry& geometry,
                             int64_t min_frames, const char* where);

// A forced cast as [layer][head] types, or nullopt when `settings.cast` is null. "mix" assigns
// its counts to heads in a seeded random order per layer (so gather costs are realistic).
std::optional<std::vector<std::vector<HeadType>>> forced_cast(const CastSettings& settings,
                                                              const ModelShape& shape);

// The block at which online classification happens when warm-up started at `warmup_start`.
int64_t classification_block(const CastSettings& settings, const BlockGeometry& geometry,
                             int64_t warmup_start);

}  // namespace wc::attention
