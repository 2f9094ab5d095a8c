// See prompt.h.
#include "engine/model/prompt.h"

#include "engine/core/error.h"
#include "engine/core/safetensors.h"
#include "engine/core/safetensors_torch.h"

namespace wc::model {
namespace {

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

void require_cross_attention(const ModelConfig& config, const std::string& what) {
  if (!config.cross_attention.active()) {
    throw Error(
        config.file.empty() ? config.name : config.file,
        what + ": this model has no cross-attention (no \"cross_attention\" in its config)");
  }
}

}  // namespace

at::Tensor read_prompt(const std::string& path, const ModelConfig& config) {
  require_cross_attention(config, "a prompt (" + path + ")");
  const Checkpoint checkpoint = Checkpoint::open(path);
  const TensorView& view = checkpoint.at("prompt");
  const Shape wanted = {config.cross_attention.tokens, config.cross_attention.width};
  if (view.shape != wanted) {
    throw Error(view.file, "tensor 'prompt': shape " + shape_text(view.shape) + ", the model's " +
                               "cross_attention takes " + shape_text(wanted) + " (tokens, width)");
  }
  if (view.dtype != Dtype::kF32 && view.dtype != Dtype::kBF16 && view.dtype != Dtype::kF16) {
    throw Error(view.file, "tensor 'prompt': dtype " + std::string(dtype_name(view.dtype)) +
                               " (expected F32, BF16 or F16)");
  }
  check_finite(view);
  return to_tensor(view).to(at::kFloat);
}

at::Tensor random_prompt(const ModelConfig& config, uint64_t seed) {
  require_cross_attention(config, "a random prompt");
  at::Generator generator = at::detail::createCPUGenerator(seed);
  return at::randn({config.cross_attention.tokens, config.cross_attention.width}, generator,
                   at::kFloat);
}

}  // namespace wc::model
