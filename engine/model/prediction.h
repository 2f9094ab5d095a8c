// What the DiT's output means: the velocity itself, or a correction to an estimate of the clean
// frame from the frame before the block (Note [Previous-frame skip]). Both the sampler and the
// trainer turn the output into the velocity here, so everything downstream sees velocities.
#pragma once

#include <ATen/ATen.h>

#include "engine/model/model_config.h"

namespace wc::model {

// Note [Previous-frame skip]
// Most of a frame of the game is the frame before it: still when idle (only the waves drift),
// shifted by one token when the camera scrolls (Note [One patch per step]). A plain velocity
// model must rebuild every pixel through attention and a residual stream no wider than a patch
// (the bundled model: 192 = 8·8·3), so each frame came out a slightly blurred copy of the last
// and the blur compounded. With the skip, the clean frame x0 is estimated first from what is
// known, the noisy frame x_t = (1 − t)·x0 + t·ε and the previous frame r, by the posterior mean
// under the prior x0 ~ N(r, s²) (s: `prediction.spread`):
//   a = 1 − t,  D = a²s² + t²,  k = a·s² / D,  x̂0 = r + k·(x_t − a·r) + c·out,  c = s·t / √D,
// where c, the posterior's standard deviation, scales the network's output `out` so that its
// target is of unit size at every level (the preconditioning of Karras et al.'s EDM, with the
// previous frame as the prior's mean). At t = 1 the estimate is r itself, at t → 0 it is x_t, and
// a zero output copies the previous frame exactly: the network only carries what changed. The
// velocity follows as v = (x_t − x̂0) / t, so the sampler, guidance (affine in the output) and the
// training loss stay as they were; the loss on v weighs the output's error by s / √D, between 1
// (t → 0) and s (t = 1), with no blow-up at small t. Every frame of a block takes the frame before
// the block as r: the block's own frames are denoised together, so none is known before another.

// Note [Moved reference]
// The skip alone serves a still camera: when the player walks, the whole world moves one step
// (Note [One patch per step]) and the previous frame as it is is the wrong prior for nearly every
// pixel, so the network had to rebuild the frame, and a model trained with the skip mostly stood
// still (19.5% of its frames moved as commanded, against 51.9% without the skip). With
// `prediction.move_pixels` m > 0 the reference is chosen per pixel, by the network, among the
// previous frame as it is and moved m pixels each way, the way a video codec compensates motion:
//   r(p) = Σ_j w_j(p) · prev(p + o_j),  o = {0, (−m, 0), (m, 0), (0, −m), (0, m)} (rows, columns),
// w = softmax over the five logits the network puts out per pixel after the frame's channels.
// Past the border the previous frame's edge pixel repeats. Each pixel choosing on its own lets
// the world move while the centred player and the HUD stay, and a wall that blocks a move keeps
// the frame still. The choice is learned with the rest, end to end through the loss on v; no
// action is wired to a move. A zero head (`worldcast train --new-head`) starts from the uniform
// mix, so the trainer starts the "as it is" logit ahead (a copy, as with the plain skip).

// Note [Painted pixels]
// A moved reference can only show what the previous frame showed. Ground that scrolls in at the
// edge is new, and the correction that has to draw it is trained on squared error, so it draws
// the mean of what could be there: plain grass, which the snap keeps. Some 16 steps into a walk
// the view was an empty field, where neither a player nor the responsiveness estimator could see
// the world scroll (without paints, 98% of the first quarter's steps scrolled as commanded, 70%
// of the rest). With `prediction.paint` each colour of the model's palette (Note [Palette snap]) is
// one more choice after the five moves, "paint this colour", and the choice among the 5 + K is a
// per-pixel categorical distribution trained by its likelihood (Note [Choice likelihood] in
// engine/train/choice_likelihood.h). With `move_choice: "sample"` play draws new content from it
// instead of taking the argmax, in two parts (Note [Choice draw]): the pixel is painted with the
// paints' total probability, else it takes its likeliest move; a painted pixel's colour is drawn
// among the paints. New ground then gets grass, tufts and shore in the proportions the model
// believes, not their mean. Moves are never drawn: which way the world moves follows from the
// key, and the first painted model, drawing among all 31 choices, left copies of the sprite
// behind it where a pixel's move was unsure. The draws are independent per pixel, so what the
// model is unsure of comes out speckled, which the next frames copy and scroll like any ground.

// Note [New ground]
// Drawn everywhere, paints cost what the argmax model did well: idle frames redrew the waves and
// the HUD digits the model was unsure of (idle fidelity fell from 34 to 22-25 dB), and training
// the paints with the rest of the network brought back the sprite's trail. Yet the
// only pixels nothing can show are those a move brings in from past the frame's border: the
// bundled model moves some 93% of a walking frame's pixels one step, the 8-pixel strip at the
// leading edge among them, and there its reference is the border repeated, which the correction
// turns into the mean of what could come in, plain grass. With `move_choice: "new_ground"` each
// pixel takes its likeliest move, as with "sharpest", and a pixel whose likeliest move reaches
// past the border is painted instead, its colour drawn from the softmax of the paint logits alone
// (shaped by Note [Choice temperature] among the paints). A painted pixel is its colour: the
// correction there, trained to turn a repeated border into grass, is left out. Everything else
// plays exactly as the sharpest choice does, so idle frames, the sprite and the HUD are the
// model's as they were, and the paint logits can be trained alone on top of a frozen model
// (`"learn": "new_ground"`, Note [New ground likelihood] in engine/train/new_ground.h). The
// draws are per pixel by default: grass then comes with tufts as scattered single pixels, and
// where the model is unsure between grass and water the strip is a mix of both.

// Note [Uncovered ground]
// Ten thousand frames of play turned every world into a field of grass with a column of sprite
// copies above the player, and a sprite that flickered at rest (all of the idle probe's change
// at the end lay in the sprite's 24 x 24 pixels). Walking, the ground behind the
// sprite comes out from under it: those pixels' likeliest move is the scroll, but their source
// is the sprite, which stays, so the scroll copies the sprite's edge into the world, and the
// correction does not always erase it. Past the border the source is unknown; behind the sprite
// (or the HUD) it is known to be the wrong thing. With `prediction.uncovered_ground` both are new
// ground, found from the model's own moves, not the game's overlays: a pixel that moves is
// uncovered when its source q is past the border, or stays while, moved the same way, it would
// have shown another colour (the previous frame differs at q and one more step on). The colour
// test matters: in plain grass every move shows the same colour, the likeliest moves of
// neighbours disagree at random, and a rule without it ("the source moves otherwise") paints
// speckle all over a walk. Idle frames stay as they are: no pixel moves.

// Note [Stay bias]
// The sprite decays at rest and on the move within a few hundred frames of play:
// pixels at its edge take the scroll when they should stay, so grass creeps into its head and its
// edge is copied into the world. Where a pixel's likeliest move wins narrowly, staying is the
// cheaper mistake: in plain ground every move shows the same colour, and on the screen-fixed
// sprite and HUD staying is right. `prediction.stay_bias` adds b to the logit of "as it is" before
// the likeliest move is taken ("sharpest" and "new_ground"), a prior in favour of staying, for play
// only (training's gradient pass mixes). b = 0 is off.

// The move logits ([B, F, >= 5, H, W]) as float32, with `stay_bias` added to "as it is" (Note
// [Stay bias]); never writes into `logits`.
at::Tensor with_stay_bias(const at::Tensor& logits, double stay_bias);

// Note [Choice draw]
// A sampled choice takes its two uniforms per pixel (paint or move; which paint) from the block's
// own starting noise (channels 0 and 1, through the normal CDF: `choice_draw`), not from a
// generator of its own. A rollout is then a function of its seed as before: recordings replay,
// eval repeats, and a recorded CUDA graph, whose noise is an input, replays the same draws.
// Drawn per pixel, a strip whose content the model does not know comes out as speckle of every
// colour it might hold. With `prediction.draw_per_patch` the pixels of a patch share their
// uniforms, so each takes the same quantile of its own distribution: where those agree (new
// ground of unknown kind) the patch is painted as one block of water, sand or grass, which the
// next frames go on drawing as ground of that kind.

// Note [Choice temperature]
// Drawn from the softmax as it is, the paints turn frames into speckle: each pixel of new ground
// draws from all 26 colours, the rare ones too, and the next frame copies and scrolls the speckle
// (a painted model: responsiveness 100%, idle fidelity 21.8 dB, where the argmax gave 34). Sampling
// language models meets the same tail; the two usual cures apply per pixel: a temperature below 1
// sharpens the softmax (`prediction.choice_temperature`), and a floor leaves out every choice less
// likely than a share of the likeliest (`prediction.choice_floor`, "min-p"). Both reshape the
// logits before the draw; neither changes the argmax or training.

// The logits a sampled choice is drawn from ([B, F, J, H, W], float32): divided by `temperature`,
// then −inf for every choice whose probability is below `floor` times the likeliest's.
at::Tensor shaped_logits(const at::Tensor& logits, double temperature, double floor);

// What a choice needs besides the previous frame and the logits.
struct ChoiceInputs {
  at::Tensor paint;  // [K, C] the palette's colours, float32 (Note [Painted pixels]); or undefined
  at::Tensor draw;   // [B, F, 2, H, W] two uniforms in [0, 1] per pixel, for MoveChoice::kSample
};

// Each pixel's two uniforms for a sampled choice, from standard normal `noise` [B, F, C, H, W]
// with C ≥ 2 (Note [Choice draw]): Φ of channels 0 and 1, float32 [B, F, 2, H, W], each cell of
// `cell_h` x `cell_w` pixels sharing its first pixel's.
at::Tensor choice_draw(const at::Tensor& noise, int cell_h = 1, int cell_w = 1);

// The draw a model config asks for: per pixel, or per patch (`prediction.draw_per_patch`).
at::Tensor choice_draw_for(const PredictionConfig& prediction, int patch_h, int patch_w,
                           const at::Tensor& noise);

// The velocity of `output` ([B, F, C', H, W], the network's; C' = C plus a moved reference's
// logits) for the noisy frames `x_t` at levels `t` ([B, F]) given `reference` (the frame before
// each frame's block, like x_t). Without the skip `output` is returned as it is (the other
// arguments may then be undefined). The arithmetic is float32; the result has `output`'s dtype
// and x_t's channels. `choice` carries the paint colours and draws the config's choice needs.
at::Tensor velocity_from_output(const PredictionConfig& prediction, const at::Tensor& output,
                                const at::Tensor& x_t, const at::Tensor& t,
                                const at::Tensor& reference, const ChoiceInputs& choice = {});

// Note [Sharpest move]
// The softmax mix is what training needs (a gradient for every choice), but where the choice is
// unsure it blends moved copies of the frame, a blur that the next frame copies and blurs again.
// With `prediction.move_choice: "sharpest"` each pixel takes its likeliest choice alone (the
// argmax, ties to the first: "as it is"), so a frame is always made of the previous frame's own
// pixels plus the correction. On the moves model after 1 150 steps this lifted responsiveness
// from 32.4% to 45.9% of moving steps and idle fidelity from 16.6 to 16.8 dB (CPU, 2 seeds).
// Training's gradient pass always mixes; the own rollout plays the config's choice, as play does.

// The reference that `logits` ([B, F, 5 + K, H, W]) choose from `previous` ([B, F, C, H, W]) and
// the K paint colours of `choice.paint`, float32: the softmax mix, each pixel's argmax choice, or
// a choice drawn with `choice.draw` (Notes [Moved reference], [Sharpest move], [Painted pixels]);
// for new ground, `uncovered_ground` paints uncovered ground too (Note [Uncovered ground]).
using MoveChoice = PredictionConfig::MoveChoice;
at::Tensor moved_reference(const at::Tensor& previous, const at::Tensor& logits, int move_pixels,
                           MoveChoice how = MoveChoice::kMix, const ChoiceInputs& choice = {},
                           bool uncovered_ground = false);

// Each pixel's chosen index among the 5 + K choices ([B, F, H, W], int64): the argmax, or with a
// draw (Note [Painted pixels]) a paint with the paints' total probability, by inverse CDF among
// them, and otherwise the likeliest move; or for new ground (Note [New ground]) the likeliest
// move, and where it reaches past the border (moves of `move_pixels`; given the previous frame
// `uncovered_in`, also on uncovered ground) a paint drawn among the paints alone.
// Given `known_in` ([B, F, 5, H, W] bool, known_sources of a remembered reference), new ground is
// where the likeliest move reads a source that is not known (Note [Remembered ground]).
at::Tensor choice_index(const at::Tensor& logits, MoveChoice how, const at::Tensor& draw,
                        int move_pixels = 0, const at::Tensor& uncovered_in = {},
                        const at::Tensor& known_in = {});

// The pixels whose likeliest move (of `move_logits` [B, F, >= 5, H, W], the first five are the
// moves) takes them from past the frame's border: the ground a scroll brings in ([B, F, H, W]
// bool; Note [New ground]). Given the frame the moves read, `previous` ([B, F, C, H, W]), also
// the ground a still thing uncovers (Note [Uncovered ground]).
// Given `known` ([B, F, 5, H, W] bool, known_sources of a remembered reference) instead, the
// pixels whose likeliest move reads a source nothing shows (Note [Remembered ground]).
at::Tensor new_ground_pixels(const at::Tensor& move_logits, int move_pixels,
                             const at::Tensor& previous = {}, const at::Tensor& known = {});

// Note [Remembered ground]
// Walk away and back, and the model draws the ground that scrolls in as new: it cannot see what
// it drew there before, which left the frame long ago and the context after it (without memory
// the bundled weights' return trip reads 24.5 dB; ten thousand frames turn every world into a
// grass field). Play can
// remember it (rollout::WorldMemory, engine/rollout/world_memory.h): the ground each scroll
// pushes out of view, kept by its place in the world the model's own scrolls define. A block's
// reference then comes as a "remembered reference", [B, F, C, H + 2m, W + 2m] for moves of m
// pixels: the frame before the block in the middle, and in the m-pixel ring around it the ground
// remembered there, NaN where nothing is. A move reads the ring where it is remembered and the
// border repeated elsewhere, as before; new ground (Note [New ground]) is only where the
// likeliest move reads a source nothing shows; and a pixel whose move reads a remembered one
// takes it as it is, with no correction, as a painted pixel takes its colour (the correction
// at the border was trained to turn a repeated border into grass). With nothing remembered this
// plays exactly as the plain reference. Moves are still the network's own: memory only answers
// what lies past the border, never where the world goes.

// Whether `reference` is a remembered reference for the noisy frames `x_t` (its last two dims
// 2·move_pixels larger; false when they equal x_t's). Throws for any other size.
bool is_remembered_reference(const at::Tensor& reference, const at::Tensor& x_t, int move_pixels);

// The frame before the block in the middle of a remembered reference.
at::Tensor remembered_middle(const at::Tensor& reference, int move_pixels);

// The five moved views of a remembered reference ([B, F, 5, C, H, W], float32): the ring where it
// is remembered, the middle's border repeated where it is not (as move_choices).
at::Tensor remembered_move_choices(const at::Tensor& reference, int move_pixels);

// For each pixel and move, whether the source it reads is known: inside the frame, or a
// remembered pixel of the ring ([B, F, 5, H, W] bool).
at::Tensor known_sources(const at::Tensor& reference, int move_pixels);

// Note [Straight-through moves]
// Training mixes the choices (every choice needs a gradient) while play takes the sharpest, so the
// correction learns to fix a blurred mix that play never shows it. With the straight-through
// estimator (Bengio et al. 2013) the forward pass uses the sharpest choice, as play does, and the
// backward pass takes the mix's gradient: r = sharp + (mix − stop_gradient(mix)). Opt-in for
// training (`loss.straight_through_moves`).
at::Tensor straight_through_reference(const at::Tensor& previous, const at::Tensor& logits,
                                      int move_pixels, const ChoiceInputs& choice = {});

// The previous frame as it is and moved `move_pixels` each way ([B, F, 5, C, H, W]), in the order
// of the logits, the border's pixels repeated.
at::Tensor move_choices(const at::Tensor& previous, int move_pixels);

// The skip's reference for a block at play time: the last of the frames before it (`before`,
// [B, F', C, H, W]) repeated for each of the block's `frames_per_block` frames.
at::Tensor block_reference(const at::Tensor& before, int frames_per_block);

// The skip's reference for the noisy frames of a training clip: `frames` [B, F, ...] are the
// clip's clean frames, the noisy ones are frames fpb.. F − 1; each gets the clean frame before
// its block. Returns [B, F − fpb, ...].
at::Tensor previous_frame_reference(const at::Tensor& frames, int frames_per_block);

}  // namespace wc::model
