// See weights.h. Checkpoint tensors are validated as a whole before the first copy, so a bad
// file never leaves a half-loaded model.
#include "engine/model/weights.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>

#include <cmath>
#include <map>

#include "engine/core/error.h"
#include "engine/core/safetensors_torch.h"

namespace wc::model {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void init_random_weights(CausalDiT& model, uint64_t seed) {
  torch::NoGradGuard no_grad;
  at::Generator generator = at::detail::createCPUGenerator(seed);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(model->config().hidden));
  for (auto& item : model->named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    at::Tensor& param = item.value();
    at::Tensor values = at::randn(param.sizes(), generator, at::kFloat);
    if (ends_with(name, "norm_q.weight") || ends_with(name, "norm_k.weight") ||
        ends_with(name, "norm3.weight")) {
      values = 1.0 + 0.1 * values;
    } else if (ends_with(name, "modulation") || name == "action_embed.weight") {
      values *= inv_sqrt_d;
    } else if (ends_with(name, ".bias")) {
      values *= 0.02;
    } else {  // linear weights [out, in]
      values /= std::sqrt(static_cast<double>(param.size(1)));
    }
    param.copy_(values);
  }
}

void check_weights(const Checkpoint& checkpoint, const ModelConfig& config) {
  // Every config has this tensor; its dtype is the checkpoint's.
  const TensorView* probe = checkpoint.find("time_embed.fc1.weight");
  if (!probe) throw Error(checkpoint.path(), "tensor 'time_embed.fc1.weight': missing");
  const Dtype dtype = probe->dtype;
  if (dtype != Dtype::kF32 && dtype != Dtype::kBF16 && dtype != Dtype::kF16) {
    throw Error(probe->file, "tensor 'time_embed.fc1.weight': dtype " +
                                 std::string(dtype_name(dtype)) + " (expected F32, BF16 or F16)");
  }
  check_spec(checkpoint, model_tensor_specs(config, dtype));
}

void load_weights(CausalDiT& model, const std::string& path) {
  const Checkpoint checkpoint = Checkpoint::open(path);
  check_weights(checkpoint, model->config());
  check_finite(checkpoint);

  torch::NoGradGuard no_grad;
  for (auto& item : model->named_parameters(/*recurse=*/true)) {
    const TensorView& view = checkpoint.at(item.key());
    item.value().copy_(to_tensor(view));
  }
}

void save_weights(const CausalDiT& model, const std::string& directory, Dtype dtype,
                  uint64_t max_shard_bytes) {
  if (!is_floating(dtype)) throw Error(directory, "weights must be saved in a floating dtype");
  TensorMap tensors;
  for (const auto& item : model->named_parameters(/*recurse=*/true)) {
    tensors[item.key()] = item.value().detach().to(at::kCPU, to_scalar_type(dtype));
  }
  ShardOptions options;
  options.max_shard_bytes = max_shard_bytes;
  const Metadata metadata{{"format", "worldcast-dit"},
                          {"config", model_config_to_json(model->config()).dump()}};
  write_sharded_checkpoint(directory, tensors, metadata, options);
}

}  // namespace wc::model
