// See token_trainer.h.
#include "engine/train/token_trainer.h"

#include <c10/core/DispatchKeySet.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <torch/cuda.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/core/timing.h"
#include "engine/model/dit.h"
#include "engine/model/tile_tokenizer.h"
#include "engine/model/tokenizer.h"
#include "engine/model/weights.h"
#include "engine/rollout/kernel_trace.h"
#include "engine/train/clip_stream.h"
#include "engine/train/drawn_context.h"
#include "engine/train/overlay_mask.h"
#include "engine/train/strip_calibration.h"
#include "engine/train/token_batch.h"
#include "engine/train/token_rollout.h"
#include "engine/train/train_loop.h"
#include "engine/train/train_state.h"

namespace wc::train {

namespace fs = std::filesystem;

// Set apart from the batch's own seed, so the play's draws are not the mask's.
constexpr uint64_t kOwnPlaySeed = 0x6f776e706c6179ULL;
// Likewise for the draws of Note [Drawn context].
constexpr uint64_t kDrawnSeed = 0x647261776eULL;
constexpr uint64_t kDrawnQuartersSeed = 0x7175617274ULL;  // "quart"

namespace {

// Whether --init names a model folder whose config has no tile quarters where `model_config`
// has them (Note [Tile quarters]): the model then grows from it.
bool grows_tile_quarters(const model::ModelConfig& model_config, const std::string& init) {
  if (model_config.tile_quarters.empty() || init.empty()) return false;
  const fs::path config_file = fs::path(init) / "config.json";
  if (!fs::is_directory(init) || !fs::exists(config_file)) return false;
  return model::load_model_config(config_file.string()).tile_quarters.empty();
}

// Every tensor of the model in `dir` copied into `model`, whose config is the folder's with tile
// quarters added; the quarter vectors start at zero, so the grown model plays as the one in
// `dir` until it learns them.
void load_adding_tile_quarters(model::CausalDiTImpl& model, const std::string& dir) {
  const std::string config_file = (fs::path(dir) / "config.json").string();
  model::CausalDiT source(model::load_model_config(config_file));
  model::load_weights(source, dir);
  const auto trained = source->named_parameters(/*recurse=*/true);
  const at::NoGradGuard no_grad;
  for (auto& item : model.named_parameters(/*recurse=*/true)) {
    at::Tensor p = item.value();
    if (item.key() == "tile_quarters.weight") {
      p.zero_();
      continue;
    }
    const at::Tensor* found = trained.find(item.key());
    if (found == nullptr || found->sizes() != p.sizes()) {
      throw Error(config_file, "tensor '" + item.key() +
                                   "': the training config's model differs here, and only its "
                                   "tile quarters may be new");
    }
    p.copy_(*found);
  }
}

// Note [Step phases]: the first step of each logging window is timed phase by phase, the device
// synchronised at every boundary, so the log says where a step's time goes: the data wait
// ("clips"), the encode, the batch, the forward pass with its loss, the backward pass, and the
// optimizer (the gradient clip, the AdamW update and the EMA). The other steps run
// unsynchronised; one synchronised step in a window costs its queue's overlap.
class StepPhases {
 public:
  explicit StepPhases(at::Device device) : device_(device) {}
  // Starts timing when `timed`; every mark until the next begin is then a phase.
  void begin(bool timed) {
    timed_ = timed;
    if (!timed_) return;
    sync();
    watch_.restart();
  }
  void mark(const char* phase) {
    if (!timed_) return;
    sync();
    ms_[phase] = ms_.value(phase, 0.0) + watch_.elapsed_ms();
    watch_.restart();
  }
  // The last timed step's phases in milliseconds ({} before any), and forgets them.
  nlohmann::json take() { return std::exchange(ms_, nlohmann::json::object()); }

 private:
  void sync() const {
    if (device_.is_cuda()) torch::cuda::synchronize();
  }
  at::Device device_;
  bool timed_ = false;
  Stopwatch watch_;
  nlohmann::json ms_ = nlohmann::json::object();
};

// Note [Tile tokens]: a batch's tokens, the ground whole from the game's ground windows; the sink
// frame encoded from its pixels alone, as play encodes it (the tiles it hides are the mask).
at::Tensor encode_tile_clips(const model::TileTokenizer& tokenizer, const ClipBatch& clips,
                             at::Device device, at::Tensor& misses) {
  const at::Tensor frames = clips.frames.to(device);
  const at::Tensor quarters = clips.quarters.to(device);
  at::Tensor tokens =
      tokenizer.encode_with_ground(frames, quarters, clips.ground.to(device), &misses);
  tokens.select(1, 0).copy_(
      tokenizer.encode(frames.slice(1, 0, 1), quarters.slice(1, 0, 1)).select(1, 0));
  return tokens;
}

// Note [Tile tokens]: what only a patch model trains with, refused for a tile model.
void refuse_patch_only(const TrainConfig& config, const model::ModelConfig& model_config) {
  const auto refuse = [&](bool used, const std::string& field) {
    if (used) {
      throw Error(config.file, "field '" + field + "': not for a tile model (" + model_config.file +
                                   " has a tile book)");
    }
  };
  refuse(config.tokens.own_share > 0.0, "tokens.own_share");
  refuse(config.tokens.drawn_share > 0.0, "tokens.drawn_share");
  refuse(config.tokens.drawn_quarters_share > 0.0, "tokens.drawn_quarters_share");
}

}  // namespace

TrainReport train_token_model(const TrainConfig& config, const model::ModelConfig& model_config,
                              const TrainOptions& options,
                              const std::function<void(const StepReport&)>& on_log) {
  if (!config.has_tokens) {
    throw Error(config.file, "field 'tokens': required to train a token model (" +
                                 model_config.file + " has \"tokens\")");
  }
  if (options.init_new_head) {
    throw Error("train",
                "--new-head is for pixel models; a token model's head is its codebook's logits");
  }
  if (config.noise.dropped_action >= model_config.num_actions) {
    throw Error(config.file,
                "field 'noise.dropped_action': must be below the model's num_actions (" +
                    std::to_string(model_config.num_actions) + ")");
  }
  const bool tiles = model_config.tokens.tiles();
  if (tiles) refuse_patch_only(config, model_config);
  if (config.tokens.drawn_quarters_share > 0.0 && model_config.tile_quarters.empty()) {
    throw Error(config.file,
                "field 'tokens.drawn_quarters_share': needs a model with tile quarters (" +
                    model_config.file + " has no \"tile_quarters\")");
  }
  const fs::path out(options.out_dir);
  const std::string state_dir = (out / "state").string();
  const std::string model_dir = (out / "model").string();
  fs::create_directories(out);

  TrainedWeights weights(model_config, config, options.device);
  if (grows_tile_quarters(model_config, options.init_from)) {
    weights.start(
        state_dir, options, [&] { load_adding_tile_quarters(*weights.model, options.init_from); },
        " (tile quarters added at zero)");
  } else {
    weights.start(state_dir, options);
  }
  TrainProgress& progress = weights.progress;
  TrainReport report;
  report.first_step = progress.step;
  report.model_dir = model_dir;

  std::optional<model::Tokenizer> tokenizer;
  std::optional<model::TileTokenizer> tile_tokenizer;
  at::Tensor overlay_cells;  // the places TokenSpec::overlay_weight applies to
  TilePlaces tile_places;
  if (tiles) {
    tile_tokenizer.emplace(*model_config.tokens.tile_book, options.device);
    overlay_cells = tile_tokenizer->overlay();
    tile_places.scored = tile_tokenizer->scored();
    tile_places.ground = overlay_cells.logical_not() & tile_places.scored;
  } else {
    tokenizer.emplace(*model_config.tokens.codebook, options.device);
    // The cells the sprite or the HUD touch.
    const int patch = model_config.patch_h;
    overlay_cells =
        overlay_mask(config.clips.width, config.clips.height)
            .view({config.clips.height / patch, patch, config.clips.width / patch, patch})
            .any(3)
            .any(1)
            .to(options.device);
  }
  // Note [Own token context]: the steps the model's own walls allow.
  std::optional<OwnStepReader> own_steps;
  if (config.tokens.own_share > 0.0) {
    own_steps.emplace(*model_config.tokens.codebook, config.clips.width, config.clips.height);
  }
  // Note [Strip calibration]: what the model expects to invent where the view is new.
  std::optional<StripCalibration> strip_calibration;
  if (!tiles) strip_calibration.emplace(*model_config.tokens.codebook, options.device);
  const int64_t target = options.max_steps > 0 ? options.max_steps : config.steps;
  ClipSpec clip_spec = config.clips;
  clip_spec.ground = tiles;
  ClipStream stream(clip_spec, config.batch, config.seed, progress.step, config.data_workers);
  MixedPrecision precision(options.device);
  std::ofstream log_file = open_training_log((out / "log.jsonl").string(), progress.step);

  Stopwatch call_time, since_checkpoint, window_time;
  const double seconds_before = progress.seconds;
  int loss_count = 0;
  int64_t window_clips = 0;
  const auto scalar = at::TensorOptions().device(options.device);
  at::Tensor loss_sum = at::zeros({}, scalar);
  at::Tensor miss_sum = at::zeros({}, scalar.dtype(at::kLong));
  // Note [Drawn context]: carried places drawn, and those whose draw is not the game's token.
  at::Tensor drawn_changed_sum = at::zeros({}, scalar.dtype(at::kLong));
  at::Tensor drawn_carried_sum = at::zeros({}, scalar.dtype(at::kLong));
  int64_t window_patches = 0;
  double window_wait_ms = 0.0;
  const auto save = [&] {
    progress.seconds = seconds_before + call_time.elapsed_ms() / 1000.0;
    weights.save(state_dir, model_dir, config);
    since_checkpoint.restart();
  };

  StepPhases phases(options.device);
  const int64_t traced_step = options.trace_file.empty() ? -1 : progress.step + 3;
  rollout::KernelTrace trace;  // train() refused a trace this build cannot record
  while ((target <= 0 || progress.step < target) &&
         (options.minutes <= 0.0 || call_time.elapsed_ms() < options.minutes * 60000.0)) {
    const int64_t step = progress.step + 1;
    if (step == traced_step) trace.start();
    phases.begin(step % config.log_every == 1 % config.log_every);
    Stopwatch wait_time;
    const ClipBatch clips = stream.next();
    window_wait_ms += wait_time.elapsed_ms();
    phases.mark("clips");
    at::Tensor tokens, misses;
    {
      // Note [Patch tokens]: the encode's distances are exact in float32, never under autocast.
      const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
      if (tiles) {
        tokens = encode_tile_clips(*tile_tokenizer, clips, options.device, misses);
      } else {
        tokens = tokenizer->encode(clips.frames.to(options.device), &misses);
      }
    }
    miss_sum += misses;
    window_patches += tokens.numel();
    phases.mark("encode");
    const at::Tensor actions = clips.actions.to(options.device);
    const at::Tensor positions = clips.positions.to(options.device);
    // Note [Own token context]: the first rows' context is the model's own play; Note [Drawn
    // context]: the next rows' carries its one-step draws.
    const int64_t played_rows = std::llround(config.tokens.own_share * config.batch);
    const int64_t drawn_rows = std::min<int64_t>(
        std::llround(config.tokens.drawn_share * config.batch), config.batch - played_rows);
    OwnContext own;
    const bool has_quarters = !model_config.tile_quarters.empty();
    const at::Tensor quarters = has_quarters ? clips.quarters.to(options.device) : at::Tensor();
    at::Tensor played_quarters;
    if (played_rows > 0) {
      const auto first = [&](const at::Tensor& x) { return x.slice(0, 0, played_rows); };
      const auto rest = [&](const at::Tensor& x) { return x.slice(0, played_rows); };
      const at::Tensor played =
          play_token_clips(*weights.model, first(tokens), first(actions), first(positions),
                           /*seed_frames=*/1, step_seed(config.seed ^ kOwnPlaySeed, step),
                           has_quarters ? first(quarters) : at::Tensor(), &played_quarters);
      const at::Tensor steps = own_steps->steps(played, first(clips.actions));
      const OwnTargets targets = own_token_targets(first(tokens), played, steps, overlay_cells);
      own.rows = at::arange(config.batch, actions.options()) < played_rows;
      own.played = own.rows;
      own.context = at::cat({played, rest(tokens)}, 0);
      own.targets = at::cat({targets.tokens, rest(tokens)}, 0);
      own.scored =
          at::cat({targets.scored, at::ones_like(rest(tokens), targets.scored.options())}, 0);
    }
    if (drawn_rows > 0) {
      const at::Tensor row = at::arange(config.batch, actions.options());
      const at::Tensor chosen = (row >= played_rows) & (row < played_rows + drawn_rows);
      const at::Tensor carried = scrolled_in(tokens).logical_not();
      const at::Tensor context = played_rows > 0 ? own.context : tokens;
      const at::Tensor drawn =
          drawn_context(*weights.model, tokens, actions, positions, quarters, chosen, carried,
                        config.tokens.drawn_temperature, step_seed(config.seed ^ kDrawnSeed, step));
      own.context = at::where(chosen.view({-1, 1, 1, 1}), drawn, context);
      if (played_rows == 0) {
        own.targets = tokens;
        own.scored = at::ones_like(tokens, tokens.options().dtype(at::kBool));
      }
      own.rows = row < played_rows + drawn_rows;
      own.played = row < played_rows;
      const at::Tensor changed = chosen.view({-1, 1, 1, 1}) & carried & (drawn != tokens);
      drawn_changed_sum += changed.sum();
      drawn_carried_sum += (chosen.view({-1, 1, 1, 1}) & carried).slice(1, 1).sum();
    }
    if (tiles) {
      tile_places.strip = tile_strip(
          clips.origins.to(options.device), model_config.tokens.tile_book->ground_rows(),
          model_config.tokens.tile_book->ground_cols(), model_config.tokens.tile_book->grid_h());
    }
    TokenBatch batch = make_token_batch(
        tokens, actions, positions, config.tokens, model_config.tokens.vocab,
        config.noise.action_dropout, config.noise.dropped_action, step_seed(config.seed, step),
        overlay_cells, played_rows + drawn_rows > 0 ? &own : nullptr,
        tiles ? &tile_places : nullptr);
    if (has_quarters) {
      // Note [Quarter tracking]: a played clip's context carries the quarters its own play made.
      const at::Tensor context_quarters =
          played_rows > 0 ? at::cat({played_quarters, quarters.slice(0, played_rows)}, 0)
                          : quarters;
      // Note [Drawn quarters]: a share of the masked frames know their own.
      at::Tensor known;
      if (config.tokens.drawn_quarters_share > 0.0) {
        at::Generator gen =
            at::detail::createCPUGenerator(step_seed(config.seed ^ kDrawnQuartersSeed, step));
        known =
            at::rand({config.batch, static_cast<int64_t>(batch.noisy.size())}, gen,
                     at::TensorOptions().dtype(at::kFloat)) < config.tokens.drawn_quarters_share;
      }
      batch.input.quarters = stream_quarters(context_quarters, batch.noisy, known);
    }
    phases.mark("batch");
    const at::Tensor logits = weights.model->forward_stream(batch.input, batch.stream);
    const at::Tensor loss = masked_token_loss(logits, batch.targets, batch.weights,
                                              tiles ? tile_tokenizer->allowed() : at::Tensor());
    if (strip_calibration) strip_calibration->add(logits, batch.targets, batch.new_ground);
    phases.mark("forward");
    const double lr = learning_rate_at(config, step);
    weights.update(loss, step, lr, config, precision, [&] { phases.mark("backward"); });
    phases.mark("optimizer");
    if (step == traced_step) trace.stop_and_save(options.trace_file);
    loss_sum += loss.detach();
    ++loss_count;
    window_clips += config.batch;

    if (step % config.log_every == 0 || step == target) {
      StepReport r;
      r.step = step;
      r.loss = loss_sum.item<double>() / std::max(1, loss_count);
      r.learning_rate = lr;
      r.clips_per_second = window_clips / std::max(1e-9, window_time.elapsed_ms() / 1000.0);
      r.seconds = seconds_before + call_time.elapsed_ms() / 1000.0;
      r.data_wait_share = window_wait_ms / std::max(1e-9, window_time.elapsed_ms());
      const double miss_share =
          static_cast<double>(miss_sum.item<int64_t>()) / std::max<int64_t>(1, window_patches);
      if (!std::isfinite(r.loss)) {
        throw Error(state_dir,
                    "training diverged: loss is not finite at step " + std::to_string(step));
      }
      report.last_loss = r.loss;
      report.clips_per_second = r.clips_per_second;
      nlohmann::json extra =
          strip_calibration ? strip_calibration->take() : nlohmann::json::object();
      extra["codebook_miss_share"] = miss_share;
      extra["step_ms"] = phases.take();
      if (config.tokens.drawn_share > 0.0) {
        const int64_t carried = drawn_carried_sum.item<int64_t>();
        extra["drawn_changed_share"] =
            carried > 0 ? nlohmann::json(static_cast<double>(drawn_changed_sum.item<int64_t>()) /
                                         static_cast<double>(carried))
                        : nlohmann::json(nullptr);
        drawn_changed_sum.zero_();
        drawn_carried_sum.zero_();
      }
      write_log_line(log_file, r, extra);
      if (options.progress_bar) {
        const double left =
            options.minutes > 0 ? options.minutes - call_time.elapsed_ms() / 60000.0 : -1.0;
        print_bar(r, target, left);
      }
      if (on_log) on_log(r);
      loss_sum.zero_();
      miss_sum.zero_();
      loss_count = 0;
      window_clips = 0;
      window_patches = 0;
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
