// The pieces of Note [Masked sampling]: how many tokens stay masked after each pass, the draw of
// one pass, and the uniforms a block's noise gives its draws.
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace wc::rollout {

// Note [Masked sampling]
// A token model's frame starts with every token masked. Each of K passes runs the model on the
// frame as it stands (t = the share still masked), draws a token for every masked place from
// the model's distribution at a temperature (optionally cut to its top-p mass), and keeps the
// draws it is most sure of (the drawn token's probability): after pass k, floor(N·cos(π/2·k/K))
// tokens stay masked (MaskGIT's cosine schedule), none after the last. What the frame already
// shows (the view that scrolled, still ground) is certain and is kept first; the strip that
// scrolls in is the least certain and is drawn last, knowing its neighbours, so a new tile's
// four quarters and a shore agree. Draws are never the argmax: the likeliest patch of unseen
// ground is grass, and taking it brings back the empty field the pixel model drew. Every
// draw comes from the block's noise (a standard normal per pixel, read as uniforms through the
// normal CDF), so a seed and an action log replay the same frames, and a CUDA graph can replay
// a block with no random state of its own. The committing pass then writes the finished
// frame's keys and values, as the pixel sampler's clean pass does.

// Tokens still masked after each pass: counts[0] = tokens, counts[passes] = 0, strictly
// decreasing.
std::vector<int64_t> masked_counts(int64_t tokens, int passes);

// The uniforms of `passes` draws for each of `tokens` tokens per frame, from `noise`
// ([1, F, C, H, W] standard normal, float32, C·H·W ≥ passes·tokens): [passes, 1, F, tokens].
at::Tensor token_uniforms(const at::Tensor& noise, int passes, int64_t tokens);

// One pass: `tokens` [B, F, N] int64 (value `mask_id` where masked), `logits` [B, F, N, V],
// `uniforms` [B, F, N] in [0, 1). Every masked token is drawn from softmax(logits / temperature)
// (cut to its smallest top set of mass ≥ top_p when top_p < 1) by inverting its CDF at the
// uniform; then all but `stay_masked` of each frame's tokens are shown: those already shown and
// the most probable draws. Returns the new [B, F, N].
at::Tensor masked_pass(const at::Tensor& tokens, const at::Tensor& logits, const at::Tensor& uniforms,
                       int64_t mask_id, double temperature, double top_p, int64_t stay_masked);

}  // namespace wc::rollout
