// See strip_calibration.h.
#include "engine/train/strip_calibration.h"

#include <c10/core/GradMode.h>

#include <vector>

#include "engine/eval/terrain_groups.h"

namespace wc::train {

StripCalibration::StripCalibration(const model::Codebook& book, at::Device device) {
  std::vector<float> shares(static_cast<size_t>(book.size()) * 2, 0.0f);
  for (int v = 0; v < book.size(); ++v) {
    const std::vector<uint8_t> rgb = book.rgb(v);
    const size_t pixels = rgb.size() / 3;
    size_t non_grass = 0, water = 0;
    for (size_t i = 0; i < pixels; ++i) {
      const eval::TerrainGroup group =
          eval::terrain_group_of(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
      non_grass += group != eval::TerrainGroup::kGrass;
      water += group == eval::TerrainGroup::kWater;
    }
    shares[2 * static_cast<size_t>(v)] = static_cast<float>(non_grass) / pixels;
    shares[2 * static_cast<size_t>(v) + 1] = static_cast<float>(water) / pixels;
  }
  shares_ = at::tensor(shares).view({book.size(), 2}).to(device);
  const auto options = at::TensorOptions().device(device);
  model_sum_ = at::zeros({2}, options);
  game_sum_ = at::zeros({2}, options);
  places_ = at::zeros({}, options.dtype(at::kLong));
}

void StripCalibration::add(const at::Tensor& logits, const at::Tensor& targets,
                           const at::Tensor& scored) {
  const at::NoGradGuard no_grad;
  const at::Tensor flat = scored.reshape({-1});
  const at::Tensor rows = logits.reshape({-1, logits.size(-1)}).index({flat});
  const at::Tensor truth = targets.reshape({-1}).index({flat});
  model_sum_ += at::softmax(rows.to(at::kFloat), -1).mm(shares_).sum(0);
  game_sum_ += shares_.index_select(0, truth).sum(0);
  places_ += flat.sum();
}

nlohmann::json StripCalibration::take() {
  const int64_t places = places_.item<int64_t>();
  const at::Tensor model = model_sum_.cpu(), game = game_sum_.cpu();
  const auto figure = [&](int k) {
    if (places == 0) {
      return nlohmann::json{{"model", nullptr}, {"game", nullptr}, {"places", 0}};
    }
    return nlohmann::json{{"model", model[k].item<double>() / places},
                          {"game", game[k].item<double>() / places},
                          {"places", places}};
  };
  nlohmann::json out{{"strip_non_grass", figure(0)}, {"strip_water", figure(1)}};
  model_sum_.zero_();
  game_sum_.zero_();
  places_.zero_();
  return out;
}

}  // namespace wc::train
