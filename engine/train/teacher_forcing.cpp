// See teacher_forcing.h.
#include "engine/train/teacher_forcing.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

namespace wc::train {

// Note [Two-stream teacher forcing]
// At play time a block is denoised against clean (committed) history. Plain diffusion forcing
// over one stream gives each frame a history at random noise levels instead. We put the clip
// twice in one sequence: the context stream (clean, or lightly re-noised) with a block-causal
// mask, which is exactly what the clean pass commits, and the noisy stream, each block at its own
// level, attending to the context of earlier blocks and to itself. Both copies of a frame carry
// the frame's absolute position, so every noisy block sees what inference shows it, and one
// forward trains all blocks of the clip. The first block (the sink, seeded from real frames at
// play time) is never denoised, so it has no noisy copy.
at::Tensor two_stream_mask(int frames, int tokens_per_frame, int frames_per_block) {
  const int noisy = frames - frames_per_block;
  const auto block_of = [&](int sequence_index) {
    const int frame = sequence_index < frames ? sequence_index : sequence_index - noisy;
    return frame / frames_per_block;
  };
  const int total = frames + noisy;
  at::Tensor frame_mask = at::zeros({total, total}, at::kBool);
  auto m = frame_mask.accessor<bool, 2>();
  for (int i = 0; i < total; ++i) {
    const bool i_noisy = i >= frames;
    for (int j = 0; j < total; ++j) {
      const bool j_noisy = j >= frames;
      const int bi = block_of(i), bj = block_of(j);
      if (!i_noisy)
        m[i][j] = !j_noisy && bj <= bi;
      else
        m[i][j] = j_noisy ? bi == bj : bj < bi;
    }
  }
  return frame_mask.repeat_interleave(tokens_per_frame, 0).repeat_interleave(tokens_per_frame, 1);
}

at::Tensor renoise(const at::Tensor& history, const at::Tensor& level, const at::Tensor& eps) {
  return (1 - level) * history + level * eps;
}

TeacherForcingBatch make_teacher_forcing_batch(const ClipBatch& clips, const NoiseSpec& noise,
                                               int tokens_per_frame, int frames_per_block,
                                               uint64_t seed, at::Device device) {
  const int64_t b = clips.frames.size(0), f = clips.frames.size(1);
  const int64_t fpb = frames_per_block;
  const int64_t noisy = f - fpb;
  const int64_t blocks = noisy / fpb;
  const auto cpu = at::TensorOptions().dtype(at::kFloat);
  // The small per-frame draws come from a CPU generator, the big noise tensors are drawn where
  // they are used (the default generator of `device`, seeded here) so no host work scales with
  // the frame size.
  at::Generator generator = at::detail::createCPUGenerator(seed);
  at::manual_seed(seed);

  // Noise levels per noisy block: sampler levels or uniform.
  const at::Tensor uniform = at::rand({b, blocks}, generator, cpu);
  const at::Tensor pick = at::randint(static_cast<int64_t>(noise.schedule_levels.size()),
                                      {b, blocks}, generator, at::TensorOptions().dtype(at::kLong));
  const at::Tensor levels =
      at::tensor(noise.schedule_levels, cpu).index_select(0, pick.flatten()).view({b, blocks});
  const at::Tensor use_schedule = at::rand({b, blocks}, generator, cpu) < noise.schedule_share;
  const at::Tensor t = at::where(use_schedule, levels, uniform).repeat_interleave(fpb, 1);

  // Context levels: zero, or one small level per clip.
  const at::Tensor noised_clip = at::rand({b, 1}, generator, cpu) < noise.context_noise_share;
  const at::Tensor c =
      at::where(noised_clip, at::rand({b, 1}, generator, cpu) * noise.max_context_noise,
                at::zeros({b, 1}, cpu))
          .expand({b, f})
          .contiguous();

  const at::Tensor dropped = at::rand({b, f}, generator, cpu) < noise.action_dropout;
  const at::Tensor actions =
      at::where(dropped, at::full({b, f}, noise.dropped_action, at::kLong), clips.actions);

  // Drawn last, so the draws above are those of configs without it.
  const at::Tensor own = at::rand({b}, generator, cpu) < noise.own_context_share;

  const at::Tensor x0 = clips.frames.to(device);  // [B, F, C, H, W]
  const at::Tensor x0_noisy = x0.slice(1, fpb);
  const at::Tensor eps_context = at::randn(x0.sizes(), x0.options());
  const at::Tensor eps = at::randn(x0_noisy.sizes(), x0.options());
  const auto level = [&](const at::Tensor& per_frame) {
    return per_frame.to(device).view({per_frame.size(0), per_frame.size(1), 1, 1, 1});
  };
  const at::Tensor context = renoise(x0, level(c), eps_context);
  const at::Tensor noisy_frames = (1 - level(t)) * x0_noisy + level(t) * eps;

  TeacherForcingBatch out;
  out.input.frames = at::cat({context, noisy_frames}, 1);
  out.input.t = at::cat({c, t}, 1).to(device);
  out.input.actions = at::cat({actions, actions.slice(1, fpb)}, 1).to(device);
  out.input.positions = at::cat({clips.positions, clips.positions.slice(1, fpb)}, 1).to(device);
  out.target = eps - x0_noisy;
  out.clean = x0;
  out.noisy_first = static_cast<int>(f);
  out.history = x0;
  out.context_level = level(c);
  out.context_eps = eps_context;
  out.own_context = own;
  return out;
}

void use_own_context(TeacherForcingBatch& batch, const at::Tensor& predicted, const at::Tensor& own,
                     int frames_per_block) {
  const at::Tensor sink = batch.history.slice(1, 0, frames_per_block);
  const at::Tensor history =
      at::where(own.to(batch.history.device()).view({-1, 1, 1, 1, 1}),
                at::cat({sink, predicted.to(batch.history.dtype())}, 1), batch.history);
  use_history(batch, history);
}

void use_history(TeacherForcingBatch& batch, const at::Tensor& history) {
  const at::Tensor context = renoise(history, batch.context_level, batch.context_eps);
  batch.input.frames = at::cat({context, batch.input.frames.slice(1, batch.noisy_first)}, 1);
  batch.history = history;
}

}  // namespace wc::train
