// See token_rollout.h.
#include "engine/train/token_rollout.h"

#include <ATen/core/grad_mode.h>

#include <limits>

#include <ATen/Parallel.h>

#include "engine/attention/sdpa.h"
#include "engine/eval/own_walls.h"
#include "engine/eval/terrain_groups.h"
#include "engine/eval/tile_structure.h"
#include "engine/game/game.h"
#include "engine/model/tile_quarters.h"
#include "engine/model/tokenizer.h"
#include "engine/rollout/token_sampler.h"
#include "engine/train/token_batch.h"

namespace wc::train {

at::Tensor CachedTokenForward::run(const at::Tensor& frame, const at::Tensor& t,
                                   const at::Tensor& actions, const at::Tensor& positions,
                                   const at::Tensor& quarters, bool commit) {
  const size_t layers = model_.config().layers;
  if (keys_.empty()) {
    keys_.resize(layers);
    values_.resize(layers);
  }
  const model::AttendFn attend = [&](int layer, const at::Tensor& q, const at::Tensor& k,
                                     const at::Tensor& v) {
    const size_t l = static_cast<size_t>(layer);
    const at::Tensor keys = keys_[l].defined() ? at::cat({keys_[l], k}, 2) : k;
    const at::Tensor values = values_[l].defined() ? at::cat({values_[l], v}, 2) : v;
    if (commit) {
      keys_[l] = keys;
      values_[l] = values;
    }
    return attention::attention(q, keys, values);
  };
  model::FrameBatch batch{frame, t, actions, 0, positions};
  batch.quarters = quarters;
  const at::Tensor out = model_.forward(batch, attend, /*with_head=*/!commit);
  if (commit) ++frames_;
  return out;
}

at::Tensor CachedTokenForward::logits(const at::Tensor& frame, const at::Tensor& t,
                                      const at::Tensor& actions, const at::Tensor& positions,
                                      const at::Tensor& quarters) {
  return run(frame, t, actions, positions, quarters, /*commit=*/false);
}

void CachedTokenForward::commit(const at::Tensor& frame, const at::Tensor& actions,
                                const at::Tensor& positions, const at::Tensor& quarters) {
  const at::Tensor t = at::zeros({frame.size(0), 1}, at::TensorOptions().device(frame.device()));
  run(frame, t, actions, positions, quarters, /*commit=*/true);
}

at::Tensor play_token_clips(model::CausalDiTImpl& model, const at::Tensor& truth,
                            const at::Tensor& actions, const at::Tensor& positions, int seed_frames,
                            uint64_t seed, const at::Tensor& quarters,
                            at::Tensor* played_quarters) {
  const at::NoGradGuard no_grad;
  const model::TokenConfig& sampler = model.config().tokens;
  const int64_t b = truth.size(0), f = truth.size(1), h = truth.size(2), w = truth.size(3);
  const int64_t n = h * w, mask_id = sampler.vocab;
  TORCH_CHECK(seed_frames >= 1 && seed_frames <= f, "play_token_clips: ", seed_frames,
              " seed frames of a ", f, "-frame clip");
  at::Generator gen = at::detail::createCPUGenerator(seed);
  CachedTokenForward forward(model);
  TORCH_CHECK(!quarters.defined() || quarters.sizes() == at::IntArrayRef({b, f}),
              "play_token_clips: quarters must be [", b, ", ", f, "], got ", quarters.sizes());
  std::vector<at::Tensor> played, followed;
  const auto frame_of = [](const at::Tensor& x, int64_t i) { return x.slice(1, i, i + 1); };
  for (int64_t i = 0; i < f; ++i) {
    at::Tensor frame;
    if (i < seed_frames) {
      frame = frame_of(truth, i);
    } else {
      const at::Tensor uniforms =
          at::rand({sampler.passes, b, 1, n}, gen, at::TensorOptions().dtype(at::kFloat))
              .clamp_max(1.0 - 1e-7)
              .to(truth.device());
      at::Tensor tokens = at::full({b, 1, n}, mask_id, truth.options());
      at::Tensor unsure;
      for (int k = 0; k < sampler.passes; ++k) {
        const at::Tensor t = (tokens == mask_id).to(at::kFloat).mean(-1);
        // Notes [Drawn quarters], [Tile passes]: after the first pass, the quarters the shown
        // places scrolled to.
        const at::Tensor scrolled_quarter =
            k > 0 && (sampler.drawn_quarters || sampler.tile_passes) && quarters.defined()
                ? model::follow_quarters(followed.back().squeeze(1), played.back().squeeze(1),
                                         tokens.view({b, 1, h, w}))
                : at::Tensor();
        const at::Tensor logits = forward.logits(
            tokens.view({b, 1, h, w}), t, frame_of(actions, i), frame_of(positions, i),
            sampler.drawn_quarters ? scrolled_quarter : at::Tensor());
        // Note [Tile passes]: the first pass takes the frame before's grid.
        rollout::PassTiles tiles;
        if (sampler.tile_passes && quarters.defined()) {
          tiles.quarter = scrolled_quarter.defined() ? scrolled_quarter : followed.back();
          tiles.grid_w = w;
        }
        rollout::MaskedPass pass = rollout::masked_pass(
            tokens, logits, uniforms.select(0, k), mask_id, sampler.temperature, sampler.top_p,
            sampler.sure, rollout::stay_share(k, sampler.passes), unsure, tiles);
        tokens = std::move(pass.tokens);
        unsure = std::move(pass.unsure);
      }
      frame = tokens.view({b, 1, h, w});
    }
    // Note [Quarter tracking]: the seed frames' quarters are the game's, a drawn frame's follow
    // from the frame before and the shift its tokens made.
    at::Tensor quarter;
    if (quarters.defined()) {
      quarter = i < seed_frames ? frame_of(quarters, i).to(at::kLong)
                                : model::follow_quarters(followed.back().squeeze(1),
                                                         played.back().squeeze(1), frame);
      followed.push_back(quarter);
    }
    played.push_back(frame);
    if (i + 1 < f) forward.commit(frame, frame_of(actions, i), frame_of(positions, i), quarter);
  }
  if (played_quarters != nullptr) {
    *played_quarters = followed.empty() ? at::Tensor() : at::cat(followed, 1);
  }
  return at::cat(played, 1);
}

OwnTargets own_token_targets(const at::Tensor& truth, const at::Tensor& own,
                             const at::Tensor& steps, const at::Tensor& overlay_cells) {
  const at::NoGradGuard no_grad;
  const int64_t b = truth.size(0), f = truth.size(1), h = truth.size(2), w = truth.size(3);
  const int64_t n = h * w;
  TORCH_CHECK(own.sizes() == truth.sizes(), "own_token_targets: the played clips are ", own.sizes(),
              ", the game's ", truth.sizes());
  TORCH_CHECK(
      steps.dim() == 2 && steps.size(0) == b && steps.size(1) == std::max<int64_t>(0, f - 1),
      "own_token_targets: steps must be [", b, ", ", f - 1, "], got ", steps.sizes());
  OwnTargets out;
  out.tokens = truth.clone();
  out.scored = at::ones({b, f, h, w}, truth.options().dtype(at::kBool));
  if (f < 2) return out;
  const at::Device device = truth.device();
  const at::Tensor overlay = overlay_cells.to(device, at::kBool);
  const at::Tensor before = own.slice(1, 0, f - 1);
  const at::Tensor game_before = truth.slice(1, 0, f - 1);
  const at::Tensor now = truth.slice(1, 1);
  const at::Tensor agrees = before == game_before;   // [B, F − 1, h, w]
  const at::Tensor game_shift = step_shifts(truth);  // [B, F − 1]
  const at::Tensor shift = steps.to(device);
  const at::Tensor same_step = (shift == game_shift).view({b, f - 1, 1, 1});
  // Under each frame's step: every cell's source one step back, clamped into the frame (for a
  // cell of the strip the step brought into view, the edge cell it continues), and which cells
  // are the model's ground moved (inside the frame, neither cell under the sprite or the HUD).
  // The game's own step moves its frame, to read what the step made of each patch.
  at::Tensor moved = before.clone(), game_moved = game_before.clone(),
             source_agrees = agrees.clone();
  at::Tensor inside = at::zeros_like(agrees), ground = at::zeros_like(agrees);
  at::Tensor game_ground = at::zeros_like(agrees);
  const auto index = at::TensorOptions().dtype(at::kLong).device(device);
  for (int s = 0; s < 5; ++s) {
    const int dy = kStepShifts[s][0], dx = kStepShifts[s][1];
    const at::Tensor ys = at::arange(h, index) + dy, xs = at::arange(w, index) + dx;
    const at::Tensor in = ((ys >= 0) & (ys < h)).view({h, 1}) & ((xs >= 0) & (xs < w)).view({1, w});
    const at::Tensor sy = ys.clamp(0, h - 1), sx = xs.clamp(0, w - 1);
    const auto source = [&](const at::Tensor& x) {
      return x.index_select(2, sy).index_select(3, sx);
    };
    const at::Tensor source_overlay = overlay.index_select(0, sy).index_select(1, sx);
    const at::Tensor cells = (in & ~overlay & ~source_overlay).expand_as(ground);
    const at::Tensor here = (shift == s).view({b, f - 1, 1, 1});
    moved = at::where(here, source(before), moved);
    source_agrees = at::where(here, source(agrees), source_agrees);
    inside = at::where(here, in.expand_as(inside), inside);
    ground = at::where(here, cells, ground);
    const at::Tensor game_here = (game_shift == s).view({b, f - 1, 1, 1});
    game_moved = at::where(game_here, source(game_before), game_moved);
    game_ground = at::where(game_here, cells, game_ground);
  }
  // Where the model's step is not the game's, no place continues the game's frame.
  source_agrees = source_agrees & same_step;
  // What the step made of each patch of ground in the game's frame (the waves drift a pixel
  // every few frames, render.h): the game's successor of the model's patch, where the game's
  // frame shows that patch on its ground and always makes the same of it.
  const auto flat = [&](const at::Tensor& x) { return x.reshape({b, f - 1, n}); };
  const at::Tensor seen =
      flat(game_moved).unsqueeze(2) == flat(moved).unsqueeze(3);  // [.., own, game]
  const at::Tensor shows = seen & flat(game_ground).unsqueeze(2);
  const at::Tensor next = flat(now).unsqueeze(2).expand_as(shows);
  const at::Tensor largest = at::where(shows, next, at::full({}, -1, next.options())).amax(-1);
  const at::Tensor smallest =
      at::where(shows, next, at::full({}, std::numeric_limits<int64_t>::max(), next.options()))
          .amin(-1);
  const at::Tensor known = (shows.any(-1) & (largest == smallest)).view({b, f - 1, h, w});
  const at::Tensor successor = largest.view({b, f - 1, h, w});
  // A step that changed none of the game's ground leaves every patch as it was.
  const at::Tensor still =
      ((game_moved == now) | ~game_ground).flatten(2).all(-1).view({b, f - 1, 1, 1});
  // The model's ground: the game's where the source agrees, else its successor or, on a still
  // step, itself; unscored when neither is known. The strip and the overlay cells: the game's,
  // scored where the model's cells they continue agree.
  const at::Tensor own_ground = at::where(known, successor, moved);
  const at::Tensor ground_scored = source_agrees | known | still;
  const at::Tensor tokens = at::where(ground & ~source_agrees, own_ground, now);
  const at::Tensor scored = at::where(
      ground, ground_scored, at::where(inside, source_agrees & agrees & same_step, source_agrees));
  // An unscored place shows what the model drew there, as play would.
  out.tokens.slice(1, 1).copy_(at::where(scored, tokens, own.slice(1, 1)));
  out.scored.slice(1, 1).copy_(scored);
  return out;
}

struct OwnStepReader::State {
  model::Tokenizer tokenizer;
  int width, height;
  std::vector<game::PixelRect> overlays;
  eval::TileBlockSurvey survey;
};

OwnStepReader::OwnStepReader(const model::Codebook& book, int width, int height)
    : state_(std::make_shared<const State>(State{model::Tokenizer(book, at::kCPU), width, height,
                                                 game::screen_overlays(width, height),
                                                 eval::survey_tile_blocks(width, height)})) {}

at::Tensor OwnStepReader::steps(const at::Tensor& frames, const at::Tensor& actions) const {
  const at::NoGradGuard no_grad;
  const State& st = *state_;
  const int64_t b = frames.size(0), f = frames.size(1);
  at::Tensor out =
      at::zeros({b, std::max<int64_t>(0, f - 1)}, at::TensorOptions().dtype(at::kLong));
  if (f < 2) return out.to(frames.device());
  // The frames each step starts from, as the RGBA bytes a player sees.
  const at::Tensor before = st.tokenizer.decode(frames.slice(1, 0, f - 1).to(at::kCPU), at::kFloat);
  const at::Tensor rgb = ((before + 1.0) * 127.5).round_().clamp_(0, 255).to(at::kByte);
  const at::Tensor rgba =
      at::cat({rgb, at::full({b, f - 1, 1, st.height, st.width}, 255, rgb.options())}, 2)
          .permute({0, 1, 3, 4, 2})
          .contiguous();
  const at::Tensor keys = actions.to(at::kCPU, at::kLong).contiguous();
  const int64_t* key = keys.data_ptr<int64_t>();
  int64_t* step = out.data_ptr<int64_t>();
  const int64_t frame_bytes = int64_t{st.width} * st.height * 4;
  at::parallel_for(0, b * (f - 1), 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t row = k / (f - 1), i = k % (f - 1) + 1;  // frame i, from frame i − 1
      const int64_t a = key[row * f + i];
      if (a < 1 || a > 4) continue;  // none, or the dropped-action token: standing
      const auto move = static_cast<game::Action>(a);
      const std::vector<eval::TerrainGroup> groups =
          eval::terrain_groups(rgba.data_ptr<uint8_t>() + k * frame_bytes, st.width, st.height);
      // Note [Own walls]: all four grid phases; the drawn one only when they disagree.
      int blocked = 0;
      for (const eval::GridPhase phase : eval::kGridPhases) {
        blocked += eval::step_blocked_at(groups, st.width, st.height, phase, move, st.overlays);
      }
      if (blocked == 1 || blocked == 2 || blocked == 3) {
        const eval::GridPhase drawn =
            eval::best_structure(groups, st.width, st.height, st.overlays, st.survey).phase;
        blocked = eval::step_blocked_at(groups, st.width, st.height, drawn, move, st.overlays);
      }
      // The key's index in kStepShifts is the key's own (up, down, left, right).
      step[k] = blocked > 0 ? 0 : a;
    }
  });
  return out.to(frames.device());
}

}  // namespace wc::train
