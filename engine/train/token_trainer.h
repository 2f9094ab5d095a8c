// The training loop of a token model (Note [Masked training]): clips from the reference game
// encoded by the model's codebook, masked-token cross-entropy, AdamW, an EMA of the weights,
// resumable checkpoints and the exported playable model with its codebook.
#pragma once

#include <functional>

#include "engine/model/model_config.h"
#include "engine/train/train_config.h"
#include "engine/train/trainer.h"

namespace wc::train {

// train() for a token model's config (model.tokens.active()); the same options and report.
TrainReport train_token_model(const TrainConfig& config, const model::ModelConfig& model_config,
                              const TrainOptions& options,
                              const std::function<void(const StepReport&)>& on_log);

}  // namespace wc::train
