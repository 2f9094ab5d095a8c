// The pieces of Note [Masked sampling]: the uniforms a block's noise gives its draws, how many
// tokens stay masked after each pass, and the draw of one pass.
#pragma once

#include <ATen/ATen.h>

namespace wc::rollout {

// Note [Masked sampling]
// A token model's frame starts with every token masked. Each of K passes runs the model on the
// frame as it stands (t = the share still masked), draws a token for every masked place from
// the model's distribution at a temperature (optionally cut to its top-p mass), and shows some
// of the draws; the rest stay masked for the next pass, none after the last.
//
// Which draws a pass shows: those at the places the model is surest of, a place's sureness
// being its likeliest token's probability, whatever was drawn there. Every place at least
// `sure` sure is shown, then the surest of the others, until floor(U·cos(π/2·k/K)) tokens stay
// masked after pass k (MaskGIT's cosine schedule), U being the count of places the first pass
// was not sure of. Places the model is sure of are independent in effect (one outcome carries
// nearly all the mass), so drawing them together is drawing them jointly: the view that
// scrolled and still ground are shown in the first pass. The unsure ones (the strip that
// scrolls in, the player's pose) are spread over the passes, each drawn knowing the ones shown
// before it, so a new tile's four quarters, a shore and the sprite's four cells agree. A fixed
// count per pass would leave the whole strip for the last pass, drawn place by place at once:
// tiles broken across the 16-pixel grid. With sure = 1 no place is sure, U is every token, and
// this is MaskGIT's fixed schedule.
//
// The choice never looks at the token drawn: ranking by the drawn token's probability (as
// MaskGIT does) keeps a likely draw, grass, and sends an unlikely one, a tree, back to be drawn
// again, so new ground drifts to the mode pass by pass. Chosen by the place, every shown token
// is an exact draw from its distribution given the tokens shown before it.
//
// Draws are never the argmax: the likeliest patch of unseen ground is grass, and taking it
// brings back the empty field the pixel model drew. Every draw comes from the block's noise (a
// standard normal per pixel, read as uniforms through the normal CDF), so a seed and an action
// log replay the same frames, and a CUDA graph can replay a block with no random state of its
// own: every count above is a device tensor. The committing pass then writes the finished
// frame's keys and values, as the pixel sampler's clean pass does.

// Note [Tile passes]
// A pass's unsure places are drawn blind of each other: each from its own distribution given the
// places shown before the pass. Two quarters of one tile drawn blind are two guesses that need
// not agree (water above sand in one tile, a tree's top over a wall's foot), and the view's edge
// brings in two quarters of every tile's half in one step. With tile passes, a pass before the
// last shows an unsure place only where it is the surest unsure place still masked in its tile
// (the 2x2 block of the frame's tile grid; ties to the lower place), so no two quarters of one
// tile are drawn blind of each other but in the last pass. The first pass keeps its cosine count
// among those places; each later pass before the last shows every one of them, so a tile half
// that scrolled in is drawn over two passes, the second quarter knowing the first, and with
// three passes nothing of a strip is left for the last. Sure places are shown in any pass.
//
// Where the frame's grid sits is its tile quarter (Note [Tile quarters]). The first pass runs
// before the frame has scrolled or not, so it takes the committed frame's quarter: a step moves
// the grid across the strip it brings in, never along it, so the strip's tile halves pair the
// same either way. Later passes take the quarter the places shown so far scrolled to (Note
// [Quarter tracking]); a frame whose quarter is not known (−1) draws as without tile passes.

// The uniforms of `passes` draws for each of `tokens` tokens per frame, from `noise`
// ([1, F, C, H, W] standard normal, float32, C·H·W ≥ passes·tokens): [passes, 1, F, tokens].
at::Tensor token_uniforms(const at::Tensor& noise, int passes, int64_t tokens);

// Each place's draw from `probs` ([..., V], any positive mass a place) by inverting its CDF at
// `uniforms` ([...] in [0, 1)): the first token whose cumulative mass passes u times the place's
// total. int64, the shape of `uniforms`.
at::Tensor draw_by_cdf(const at::Tensor& probs, const at::Tensor& uniforms);

// The share of the first pass's unsure draws that stays masked after pass k (0-based) of
// `passes`: cos(π/2·(k+1)/passes), 0 after the last.
double stay_share(int pass, int passes);

// One pass: `tokens` [B, F, N] int64 (value `mask_id` where masked), `logits` [B, F, N, V],
// `uniforms` [B, F, N] in [0, 1). Every masked token is drawn from softmax(logits / temperature)
// (cut to its smallest top set of mass ≥ top_p when top_p < 1) by inverting its CDF at the
// uniform. A place's sureness is its largest probability. Every place at least `sure` sure is
// shown (none when sure = 1), then the surest of the others until floor(unsure·stay_share)
// tokens of each frame stay masked, `unsure` being the first pass's count of masked places not
// sure ([B, F] int64; undefined on the first pass, which counts its own). Ties go to the lower
// place. With `tiles.quarter` defined, a pass before the last (stay_share > 0) shows the unsure
// places of Note [Tile passes].
struct PassTiles {
  at::Tensor quarter;  // [B, F] int64: each frame's top-left quarter, −1 where not known
  int64_t grid_w = 0;  // tokens per row
};
// Places a frame draws before its others (Note [Tile tokens]: a tile model's phase, which says
// whether its window moved) are `first` ([N] bool, optional): shown in the pass that draws them,
// as a sure place is, so the places drawn after them know them.
struct MaskedPass {
  at::Tensor tokens;  // [B, F, N] after the pass
  at::Tensor unsure;  // [B, F] int64: the `unsure` the later passes take
};
MaskedPass masked_pass(const at::Tensor& tokens, const at::Tensor& logits,
                       const at::Tensor& uniforms, int64_t mask_id, double temperature,
                       double top_p, double sure, double stay_share, const at::Tensor& unsure,
                       const PassTiles& tiles = {}, const at::Tensor& first = {});

// Note [Tile passes]: the masked unsure places of `candidate` ([B, F, N] bool) that are the surest
// candidates of their tile by `score` ([B, F, N] double, distinct), the grid given by `tiles`.
at::Tensor surest_in_tile(const at::Tensor& candidate, const at::Tensor& score,
                          const PassTiles& tiles);

}  // namespace wc::rollout
