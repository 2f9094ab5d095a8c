// Checking a checkpoint against the tensors a model expects (names, shapes, dtypes).
#include <set>

#include "engine/core/error.h"
#include "engine/core/safetensors.h"
#include "engine/core/safetensors_internal.h"

namespace wc {

std::vector<std::string> find_spec_mismatches(const Checkpoint& checkpoint,
                                              const std::vector<TensorSpec>& specs) {
  std::vector<std::string> problems;
  std::set<std::string_view> expected;
  for (const TensorSpec& spec : specs) {
    expected.insert(spec.name);
    const TensorView* tensor = checkpoint.find(spec.name);
    if (tensor == nullptr) {
      problems.push_back(checkpoint.path() + ": tensor " + quoted_name(spec.name) +
                         ": missing (the model expects " + std::string(dtype_name(spec.dtype)) +
                         " " + shape_to_string(spec.shape) + ")");
      continue;
    }
    const std::string where = tensor->file + ": tensor " + quoted_name(spec.name) + ": ";
    if (tensor->shape != spec.shape) {
      problems.push_back(where + "shape " + shape_to_string(tensor->shape) + ", expected " +
                         shape_to_string(spec.shape));
    }
    if (tensor->dtype != spec.dtype) {
      problems.push_back(where + "dtype " + std::string(dtype_name(tensor->dtype)) + ", expected " +
                         std::string(dtype_name(spec.dtype)));
    }
  }
  for (const TensorView* tensor : checkpoint.tensors()) {
    if (expected.count(tensor->name) == 0) {
      problems.push_back(tensor->file + ": tensor " + quoted_name(tensor->name) +
                         ": unknown to the model (not in its spec)");
    }
  }
  return problems;
}

void check_spec(const Checkpoint& checkpoint, const std::vector<TensorSpec>& specs) {
  const std::vector<std::string> problems = find_spec_mismatches(checkpoint, specs);
  if (problems.empty()) return;
  std::string message = problems.front();
  if (problems.size() > 1) {
    message += " (and " + std::to_string(problems.size() - 1) + " more problems)";
  }
  throw Error(message);
}

}  // namespace wc
