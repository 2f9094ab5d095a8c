// See trainer.h.
#include <ATen/core/grad_mode.h>

#include "engine/train/trainer.h"

#include <ATen/autocast_mode.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/version.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/core/timing.h"
#include "engine/model/dit.h"
#include "engine/model/model_config.h"
#include "engine/model/palette.h"
#include "engine/model/prediction.h"
#include "engine/model/weights.h"
#include "engine/train/adamw.h"
#include "engine/train/choice_likelihood.h"
#include "engine/train/clip_stream.h"
#include "engine/train/consistent_target.h"
#include "engine/train/motion_weight.h"
#include "engine/train/new_ground.h"
#include "engine/train/overlay_damage.h"
#include "engine/train/own_rollout.h"
#include "engine/train/teacher_forcing.h"
#include "engine/train/token_trainer.h"
#include "engine/train/train_loop.h"
#include "engine/train/train_state.h"

namespace wc::train {
namespace {

namespace fs = std::filesystem;

// Mixed into a step's seed for the overlay damage's draws, so they are not the batch's.
constexpr uint64_t kOverlayDamageSeed = 0x5D1E5EEDull;

// How the gradient pass treats a moved reference's choice (Note [Moved reference]).
struct ChoiceTraining {
  bool straight_through = false;  // Note [Straight-through moves]
  bool by_likelihood = false;     // Note [Choice likelihood]
  at::Tensor paint;               // the paint colours (Note [Painted pixels]), or undefined
};

// What the gradient pass needs of a moved reference beyond the velocity.
struct ChoiceOutputs {
  at::Tensor chosen;     // the softmax mix of the five moves (Note [Reference loss])
  at::Tensor logits;     // [B, F, 5 + K, H, W] (Note [Choice likelihood])
  at::Tensor reference;  // the frame before each noisy frame's block
};

// The network's output for the noisy frames of `batch` as a velocity (Note [Previous-frame
// skip]), float32, with the frame before each block in the batch's history as the reference.
// With a moved reference and `outputs` given, it receives what the choice losses need.
at::Tensor noisy_velocity(model::CausalDiTImpl& model, const TeacherForcingBatch& batch,
                          const at::Tensor& mask, const ChoiceTraining& how,
                          ChoiceOutputs* outputs = nullptr) {
  const model::ModelConfig& config = model.config();
  const at::Tensor output = model.forward_masked(batch.input, mask).slice(1, batch.noisy_first);
  const at::Tensor reference =
      config.prediction.previous_frame_skip
          ? model::previous_frame_reference(batch.history, config.frames_per_block)
          : at::Tensor();
  const at::Tensor logits = output.slice(2, config.channels);
  const model::ChoiceInputs choice{how.paint, at::Tensor()};
  if (outputs != nullptr && config.prediction.move_pixels > 0) {
    // With paint choices the reference loss scores the moves' own softmax (Note [Choice
    // likelihood]): it goes on teaching which move explains a pixel, and leaves the paints alone.
    outputs->chosen =
        model::moved_reference(reference, logits.slice(2, 0, model::PredictionConfig::kMoves),
                               config.prediction.move_pixels);
    outputs->logits = logits;
    outputs->reference = reference;
  }
  const at::Tensor x_t = batch.input.frames.slice(1, batch.noisy_first);
  const at::Tensor t = batch.input.t.slice(1, batch.noisy_first);
  model::PredictionConfig prediction = config.prediction;
  if ((how.straight_through || how.by_likelihood) && prediction.move_pixels > 0) {
    // The plain skip around the chosen frame: the same arithmetic (Note [Moved reference]).
    // Learning by likelihood, the velocity sees the likeliest choice as given.
    const at::Tensor moved =
        how.by_likelihood
            ? model::moved_reference(reference, logits.detach(), prediction.move_pixels,
                                     model::MoveChoice::kSharpest, choice)
            : model::straight_through_reference(reference, logits, prediction.move_pixels, choice);
    prediction.move_pixels = 0;
    prediction.paint_colours = 0;
    return model::velocity_from_output(
        prediction, output.slice(2, 0, config.channels).to(at::kFloat), x_t, t, moved);
  }
  // Otherwise the gradient pass mixes the choices whatever play does (Note [Sharpest move]).
  prediction.move_choice = model::MoveChoice::kMix;
  return model::velocity_from_output(prediction, output.to(at::kFloat), x_t, t, reference, choice);
}

// The model's own history for the clips batch.own_context chose ([B, F − fpb, ...]; other rows
// are unused): played by the model (Note [Own rollout]) or predicted in one gradient-free pass,
// x̂0 = x_t − t·v (Note [Own context]).
at::Tensor own_history(model::CausalDiTImpl& model, const TeacherForcingBatch& batch,
                       const at::Tensor& mask, bool rollout, const ChoiceTraining& how) {
  at::NoGradGuard no_grad;
  const at::Tensor x_t = batch.input.frames.slice(1, batch.noisy_first);
  if (rollout) {
    const at::Tensor rows = batch.own_context.nonzero().flatten().to(x_t.device());
    at::Tensor noise = at::randn(x_t.sizes(), x_t.options()).index_select(0, rows);
    at::Tensor lead_eps;
    if (batch.lead_actions.defined()) {
      // Drawn after the run's noise, so the run's draws are those of a clip without a lead.
      std::vector<int64_t> lead_size = x_t.sizes().vec();
      lead_size[0] = rows.size(0);
      lead_size[1] = batch.lead_actions.size(1);
      const at::Tensor lead_noise = at::randn(lead_size, x_t.options());
      lead_eps = at::randn(lead_size, x_t.options());
      noise = at::cat({lead_noise, noise}, 1);
    }
    return at::zeros_like(x_t).index_copy_(0, rows,
                                           own_rollout(model, batch, rows, noise, lead_eps));
  }
  const at::Tensor t = batch.input.t.slice(1, batch.noisy_first);
  return x_t - t.view({t.size(0), t.size(1), 1, 1, 1}) * noisy_velocity(model, batch, mask, how);
}

// Start the "as it is" choice of a moved reference this far ahead of the four moves: the
// softmax then gives it e^2 / (e^2 + 4) ≈ 65%, so a fresh head leans to a copy of the previous
// frame, as the plain skip's zero head is one, while the moves keep a gradient worth following
// (at 93% the choice hardly moved: Note [Reference loss]).
constexpr double kStillLogitStart = 2.0;

// Copies every trained tensor of the model in `dir` into `model`, through a model of the
// checkpoint's own config (`from`), since the head may differ. The output head's projection is
// left to `set_head` (its name, the trained tensor or null, the model's); every other tensor must
// be there with the same shape, and `what_may_differ` says in the error what could.
void copy_trained_layers(
    model::CausalDiTImpl& model, const std::string& dir, const model::ModelConfig& from,
    const std::function<void(const std::string&, const at::Tensor*, at::Tensor&)>& set_head,
    const std::string& what_may_differ) {
  const std::string config_file = (fs::path(dir) / "config.json").string();
  model::CausalDiT source(from);
  model::load_weights(source, dir);
  const auto trained = source->named_parameters(/*recurse=*/true);
  at::NoGradGuard no_grad;
  for (auto& item : model.named_parameters(/*recurse=*/true)) {
    at::Tensor p = item.value();
    const at::Tensor* found = trained.find(item.key());
    if (item.key().rfind("head.proj.", 0) == 0) {
      set_head(item.key(), found, p);
      continue;
    }
    if (found == nullptr || found->sizes() != p.sizes()) {
      throw Error(config_file, "tensor '" + item.key() +
                                   "': the training config's model differs here, and only " +
                                   what_may_differ + " may be new");
    }
    p.copy_(*found);
  }
}

// A new output head over the trained layers of the model in `dir` (TrainOptions::init_new_head).
void load_with_new_head(model::CausalDiTImpl& model, const std::string& dir) {
  const std::string config_file = (fs::path(dir) / "config.json").string();
  copy_trained_layers(
      model, dir, model::load_model_config(config_file),
      [](const std::string&, const at::Tensor*, at::Tensor& head) { head.zero_(); },
      "the output head");
  const model::ModelConfig& c = model.config();
  if (c.prediction.move_pixels > 0) {
    // The head's outputs per token are [output channels, patch rows, patch columns]; the first
    // logit, "as it is", is output channel `channels`.
    at::NoGradGuard no_grad;
    const int64_t per_channel = int64_t{c.patch_t} * c.patch_h * c.patch_w;
    model.head->proj->bias.slice(0, c.channels * per_channel, (c.channels + 1) * per_channel)
        .fill_(kStillLogitStart);
  }
}

// Where a grown head's paint logits start: far below a trained "as it is" logit, so the grown
// model plays as the model it grew from until training makes a paint likely.
constexpr double kPaintLogitStart = -8.0;

// The trained model in `dir` with the paint choices of `model`'s config added to its output head
// (TrainOptions::init_grown_head): the head's rows are [output channels, patch pixels], so the
// checkpoint's rows are the first ones and the paint logits' rows follow.
void load_with_grown_head(model::CausalDiTImpl& model, const std::string& dir) {
  const std::string config_file = (fs::path(dir) / "config.json").string();
  const model::ModelConfig from_config = model::load_model_config(config_file);
  const model::ModelConfig& c = model.config();
  if (c.prediction.paint_colours == 0 || from_config.prediction.paint_colours != 0 ||
      from_config.prediction.move_pixels != c.prediction.move_pixels ||
      from_config.channels != c.channels) {
    throw Error(config_file,
                "field 'prediction': growing the head adds paint choices to a model with the "
                "same moves and no paint (Note [Painted pixels])");
  }
  const std::string what_may_differ = "the head's paint choices";
  const auto grow = [&](const std::string& name, const at::Tensor* trained, at::Tensor& head) {
    if (trained == nullptr || trained->size(0) >= head.size(0) ||
        trained->sizes().slice(1) != head.sizes().slice(1)) {
      throw Error(config_file, "tensor '" + name +
                                   "': the training config's model differs here, and only " +
                                   what_may_differ + " may be new");
    }
    const int64_t kept = trained->size(0);
    head.slice(0, 0, kept).copy_(*trained);
    head.slice(0, kept).fill_(name == "head.proj.bias" ? kPaintLogitStart : 0.0);
  };
  copy_trained_layers(model, dir, from_config, grow, what_may_differ);
}

// The loss of a step that learns every weight: the velocity's squared error, optionally motion
// weighted, plus the choice losses the config asks for.
at::Tensor full_loss(model::CausalDiTImpl& model, const TeacherForcingBatch& batch,
                     const ClipBatch& clips, const at::Tensor& mask, const ChoiceTraining& choices,
                     const TrainConfig& config, const at::Tensor& clean_noisy,
                     const at::Tensor& overlay) {
  const model::ModelConfig& model_config = model.config();
  ChoiceOutputs chosen;
  const at::Tensor noisy = noisy_velocity(model, batch, mask, choices, &chosen);
  at::Tensor weight =
      config.loss.motion_weight > 0.0
          ? motion_weights(batch.clean, clips.positions, model_config.frames_per_block, config.loss)
          : at::Tensor();
  if (config.loss.overlay_weight > 0.0) {
    // Note [Overlay repair]: [1, 1, 1, H, W], broadcast over clips, frames and channels.
    const at::Tensor inside = (1.0 + config.loss.overlay_weight * overlay.to(at::kFloat))
                                  .view({1, 1, 1, overlay.size(0), overlay.size(1)});
    weight = weight.defined() ? weight * inside : inside;
  }
  at::Tensor loss = weighted_squared_error(noisy, batch.target, weight);
  if (chosen.chosen.defined() && config.loss.reference_weight > 0.0) {
    // Note [Reference loss]
    loss = loss + config.loss.reference_weight *
                      weighted_squared_error(chosen.chosen, clean_noisy, weight);
  }
  if (chosen.logits.defined() && config.loss.choice_weight > 0.0) {
    loss = loss + config.loss.choice_weight *
                      choice_likelihood_loss(chosen.logits, chosen.reference, clean_noisy,
                                             choices.paint, model_config.prediction.move_pixels);
  }
  return loss;
}

}  // namespace

void init_training_weights(model::CausalDiTImpl& model, uint64_t seed) {
  model::CausalDiT holder(std::shared_ptr<model::CausalDiTImpl>(&model, [](auto*) {}));
  model::init_random_weights(holder, seed);
  at::NoGradGuard no_grad;
  for (auto& item : model.named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    at::Tensor p = item.value();
    const bool gate_path = name.rfind("time_proj.", 0) == 0 ||
                           name.find(".modulation") != std::string::npos ||
                           name.rfind("head.proj.", 0) == 0 || name == "head.modulation";
    if (gate_path) p.zero_();
    if (name.find("norm_") != std::string::npos) p.fill_(1.0);
  }
}

TrainReport train(const TrainConfig& config, const TrainOptions& options,
                  const std::function<void(const StepReport&)>& on_log) {
  if (options.out_dir.empty()) throw Error("train", "an output folder is required");
  if ((options.init_new_head || options.init_grown_head) && options.init_from.empty()) {
    throw Error("train", "a new output head needs weights to start from (--init)");
  }
  const model::ModelConfig model_config = model::load_model_config(config.model_config);
  if (config.clips.width != model_config.frame.width ||
      config.clips.height != model_config.frame.height) {
    throw Error(config.file, "field 'clips': frame size differs from the model config's frame");
  }
  if (model_config.tokens.active()) return train_token_model(config, model_config, options, on_log);
  if (config.has_tokens) {
    throw Error(config.file, "field 'tokens': only for a token model (" + model_config.file +
                                 " has no \"tokens\")");
  }
  if (config.clips.width != model_config.frame.width ||
      config.clips.height != model_config.frame.height) {
    throw Error(config.file, "field 'clips': frame size differs from the model config's frame");
  }
  if (config.clips.frames % model_config.frames_per_block != 0 ||
      config.clips.frames < 2 * model_config.frames_per_block) {
    throw Error(
        config.file,
        "field 'clips.frames': must be a multiple of frames_per_block, at least two blocks");
  }
  // What needs a moved reference (Note [Moved reference]): the losses on its choice, and the
  // overlay damage, which is made of its moves.
  for (const auto& [used, field] :
       {std::pair{config.loss.straight_through_moves, "loss.straight_through_moves"},
        {config.loss.reference_weight > 0.0, "loss.reference_weight"},
        {config.loss.choice_weight > 0.0, "loss.choice_weight"},
        {config.loss.consistent_target, "loss.own_target"},
        {config.noise.overlay_damage_share > 0.0, "noise.overlay_damage_share"}}) {
    if (used && model_config.prediction.move_pixels == 0) {
      throw Error(config.file, std::string("field '") + field +
                                   "': needs a model with a moved reference "
                                   "(prediction.move_pixels)");
    }
  }
  // The sprite and HUD of the clips' frames (Note [Consistent target]), on the CPU.
  const at::Tensor overlay_cpu = overlay_mask(config.clips.width, config.clips.height);
  if (config.loss.consistent_target) {
    // Note [Consistent target]: it moves the model's own frames, one frame per block.
    if (model_config.frames_per_block != 1) {
      throw Error(config.file, "field 'loss.own_target': needs one frame per block");
    }
    if (config.noise.own_context_share <= 0.0) {
      throw Error(config.file,
                  "field 'loss.own_target': needs clips with the model's own history "
                  "(noise.own_context_share)");
    }
    // A frame so small that the sprite and HUD cover it leaves no pixel to the model's own
    // frame: the target would silently be the game's everywhere.
    if (overlay_cpu.all().item<bool>()) {
      throw Error(config.file,
                  "field 'loss.own_target': the player sprite and HUD cover every "
                  "pixel of a " +
                      std::to_string(config.clips.width) + "x" +
                      std::to_string(config.clips.height) +
                      " frame, so no pixel can take the model's own frame");
    }
  }
  if (config.noise.dropped_action >= model_config.num_actions) {
    throw Error(config.file,
                "field 'noise.dropped_action': must be below the model's num_actions (" +
                    std::to_string(model_config.num_actions) + ")");
  }
  const fs::path out(options.out_dir);
  const std::string state_dir = (out / "state").string();
  const std::string model_dir = (out / "model").string();
  fs::create_directories(out);

  TrainedWeights weights(model_config, config, options.device);
  weights.start(
      state_dir, options,
      [&] {
        if (options.init_new_head) {
          load_with_new_head(*weights.model, options.init_from);
        } else if (options.init_grown_head) {
          load_with_grown_head(*weights.model, options.init_from);
        } else {
          model::load_weights(weights.model, options.init_from);
        }
      },
      options.init_new_head     ? " (output head zeroed)"
      : options.init_grown_head ? " (paint choices added to the head)"
                                : "");
  model::CausalDiT& model = weights.model;
  const std::vector<at::Tensor>& params = weights.params;
  TrainProgress& progress = weights.progress;
  // Note [New ground likelihood]: the paint rows learn, every other weight stays as loaded.
  std::unique_ptr<FrozenWeights> frozen;
  if (config.learn == TrainConfig::Learn::kNewGround) {
    if (options.init_from.empty() && progress.step == 0) {
      throw Error(config.file,
                  "field 'learn': \"new_ground\" trains the paints of a trained "
                  "model: start from its weights (--init DIR --grow-head)");
    }
    frozen = std::make_unique<FrozenWeights>(*model, params);
  }
  TrainReport report;
  report.first_step = progress.step;
  report.model_dir = model_dir;

  const int64_t target = options.max_steps > 0 ? options.max_steps : config.steps;
  const int grid_h = model_config.grid_h(model_config.frame),
            grid_w = model_config.grid_w(model_config.frame);
  const int tokens_per_frame = grid_h * grid_w;
  ChoiceTraining choices;
  choices.straight_through = config.loss.straight_through_moves;
  choices.by_likelihood = config.loss.choice_weight > 0.0;
  if (model_config.prediction.paint_colours > 0) {
    choices.paint = model::palette_tensor(model_config.palette, options.device);
  }
  ClipStream stream(config.clips, config.batch, config.seed, progress.step, config.data_workers);
  MixedPrecision precision(options.device);
  std::ofstream log_file = open_training_log((out / "log.jsonl").string(), progress.step);

  Stopwatch call_time;
  Stopwatch since_checkpoint;
  Stopwatch window_time;
  const double seconds_before = progress.seconds;
  double loss_sum = 0.0;
  int loss_count = 0;
  int64_t window_clips = 0;
  at::Tensor loss_accumulator = at::zeros({}, at::TensorOptions().device(options.device));
  double window_wait_ms = 0.0;
  // One mask for the whole run: every batch has the same clip length and frame size.
  const at::Tensor overlay = overlay_cpu.to(options.device);
  const at::Tensor mask =
      two_stream_mask(config.clips.frames, tokens_per_frame, model_config.frames_per_block)
          .to(options.device);
  const auto save = [&] {
    progress.seconds = seconds_before + call_time.elapsed_ms() / 1000.0;
    weights.save(state_dir, model_dir, config);
    since_checkpoint.restart();
  };

  while ((target <= 0 || progress.step < target) &&
         (options.minutes <= 0.0 || call_time.elapsed_ms() < options.minutes * 60000.0)) {
    Stopwatch wait_time;
    const ClipBatch clips = stream.next();
    window_wait_ms += wait_time.elapsed_ms();
    const int64_t step = progress.step + 1;
    TeacherForcingBatch batch = make_teacher_forcing_batch(
        clips, config.noise, tokens_per_frame, model_config.frames_per_block,
        step_seed(config.seed, step), options.device);
    const bool own_clips = batch.own_context.any().item<bool>();
    if (own_clips) {
      use_own_context(batch,
                      own_history(*model, batch, mask, config.noise.own_context_rollout, choices),
                      batch.own_context, model_config.frames_per_block);
    }
    if (config.noise.overlay_damage_share > 0.0) {
      // Note [Overlay repair]: on top of whichever history the clip has.
      use_history(batch,
                  damage_overlays(batch.history, overlay, model_config.prediction.move_pixels,
                                  config.noise.overlay_damage_share, model_config.frames_per_block,
                                  step_seed(config.seed, step) ^ kOverlayDamageSeed)
                      .history);
    }
    if (own_clips) {
      if (config.loss.consistent_target) {
        use_consistent_target(
            batch,
            consistent_frames(batch.clean, batch.history,
                              batch.input.positions.slice(1, 0, batch.noisy_first),
                              batch.own_context, overlay, model_config.prediction.move_pixels,
                              config.loss.uncovered_from_game));
      }
    }
    const at::Tensor clean_noisy = batch.clean.slice(1, model_config.frames_per_block);
    at::Tensor loss;
    if (frozen) {
      const at::Tensor output =
          model->forward_masked(batch.input, mask).slice(1, batch.noisy_first);
      loss = new_ground_loss(
          output.slice(2, model_config.channels), clean_noisy, choices.paint,
          model_config.prediction.move_pixels,
          model_config.prediction.uncovered_ground
              ? model::previous_frame_reference(batch.history, model_config.frames_per_block)
              : at::Tensor());
    } else {
      loss = full_loss(*model, batch, clips, mask, choices, config, clean_noisy, overlay);
    }
    const double lr = learning_rate_at(config, step);
    weights.update(loss, step, lr, config, precision, [&] {
      if (frozen) frozen->mask_gradients();
    });
    if (frozen) frozen->restore(params, weights.ema);
    loss_accumulator += loss.detach();
    ++loss_count;
    window_clips += config.batch;

    if (step % config.log_every == 0 || step == target) {
      loss_sum = loss_accumulator.item<double>();
      loss_accumulator.zero_();
      StepReport r;
      r.step = step;
      r.loss = loss_sum / std::max(1, loss_count);
      r.learning_rate = lr;
      r.clips_per_second = window_clips / std::max(1e-9, window_time.elapsed_ms() / 1000.0);
      r.seconds = seconds_before + call_time.elapsed_ms() / 1000.0;
      r.data_wait_share = window_wait_ms / std::max(1e-9, window_time.elapsed_ms());
      if (!std::isfinite(r.loss))
        throw Error(state_dir,
                    "training diverged: loss is not finite at step " + std::to_string(step));
      report.last_loss = r.loss;
      report.clips_per_second = r.clips_per_second;
      write_log_line(log_file, r);
      if (options.progress_bar) {
        const double left =
            options.minutes > 0 ? options.minutes - call_time.elapsed_ms() / 60000.0 : -1.0;
        print_bar(r, target, left);
      }
      if (on_log) on_log(r);
      loss_count = 0;
      window_clips = 0;
      window_wait_ms = 0.0;
      window_time.restart();
    }
    if (since_checkpoint.elapsed_ms() >= config.checkpoint_minutes * 60000.0) save();
  }
  if (options.progress_bar) std::fputs("\n", stderr);
  save();
  report.steps = progress.step;
  report.seconds = progress.seconds;
  log_info("train: step " + std::to_string(progress.step) + ", " +
           std::to_string(progress.seconds / 60.0) + " min in all; model in " + model_dir);
  return report;
}

}  // namespace wc::train
