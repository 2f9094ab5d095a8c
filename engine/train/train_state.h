// A training run's resumable state on disk: weights, their EMA, the optimiser's moments and the
// step, as a sharded safetensors checkpoint written to a temporary folder and swapped in whole.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/model/dit.h"
#include "engine/train/adamw.h"

namespace wc::train {

struct TrainProgress {
  int64_t step = 0;      // optimiser steps taken
  double seconds = 0.0;  // training wall time so far, over all sessions
};

// Writes `directory` (replacing an earlier state only once the new one is complete). `dtype`
// "f32" or "bf16" (see TrainConfig::state_dtype).
void save_train_state(const std::string& directory, model::CausalDiTImpl& model,
                      const std::vector<at::Tensor>& ema, AdamW& optimizer,
                      const TrainProgress& progress, const std::string& dtype);

// Reads a state written by save_train_state into the model, EMA and optimiser (which must have
// the same architecture), after recover_directory. Returns false when `directory` holds no state;
// throws wc::Error naming the file and tensor when it is incomplete, of another architecture or not
// finite.
bool load_train_state(const std::string& directory, model::CausalDiTImpl& model,
                      std::vector<at::Tensor>& ema, AdamW& optimizer, TrainProgress* progress);

// The playable model: `weights` (in the model's parameter order) as bf16 shards + config.json in
// `directory`, replaced whole.
void export_model(const std::string& directory, const model::CausalDiTImpl& model,
                  const std::vector<at::Tensor>& weights);

// Replaces `directory` by what `write` puts into a fresh temporary folder beside it, so a reader
// sees the old or the new contents, never a half-written mix, and a process killed at any point
// leaves what recover_directory makes whole (Note [Interrupted replacement]). `after_step`, when
// set, is called after each step of the swap (1 written, 2 old set aside, 3 new in place, 4 old
// removed): tests stop the swap there as a crash would.
void replace_directory(const std::string& directory,
                       const std::function<void(const std::string& temporary)>& write,
                       const std::function<void(int step)>& after_step = {});

// Finishes or undoes a replace_directory that was stopped part-way, so `directory` holds the
// newest complete contents (or is absent when none was ever complete), and removes what the
// swap left beside it. Says what it did in the log; returns whether there was anything to do.
bool recover_directory(const std::string& directory);

}  // namespace wc::train
