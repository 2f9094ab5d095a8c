// Note [Strip calibration]: the model's expected terrain mix on the scored strip places against
// the true tokens', by each codebook entry's pixels; places not scored do not count.
#include "engine/train/strip_calibration.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "engine/eval/terrain_groups.h"
#include "engine/game/palette.h"

namespace wc::train {
namespace {

std::array<uint8_t, 3> rgb_of(uint32_t rgba) {
  uint8_t bytes[4];
  std::memcpy(bytes, &rgba, 4);
  return {bytes[0], bytes[1], bytes[2]};
}

uint32_t first_colour_of(eval::TerrainGroup group) {
  for (const eval::PaletteColour& c : eval::game_palette_groups()) {
    if (c.group == group) return c.rgba;
  }
  ADD_FAILURE() << "no palette colour of group " << eval::terrain_group_name(group);
  return 0;
}

// Entry 0 all grass, entry 1 its top half water, entry 2 all sand (2x2 patches).
model::Codebook three_entry_book() {
  model::Codebook book;
  book.patch = 2;
  book.colours = {rgb_of(game::palette::kGrass),
                  rgb_of(first_colour_of(eval::TerrainGroup::kWater)),
                  rgb_of(first_colour_of(eval::TerrainGroup::kSand))};
  book.entries = {{0, 0, 0, 0}, {1, 1, 0, 0}, {2, 2, 2, 2}};
  return book;
}

TEST(StripCalibration, ComparesTheExpectedMixWithTheTrueOne) {
  StripCalibration calibration(three_entry_book(), at::kCPU);
  // Two scored places: one sure of entry 1, one split evenly between entries 0 and 2. A third,
  // unscored place is sure of entry 2 and must not count.
  at::Tensor logits = at::full({1, 1, 3, 3}, -1e4, at::kFloat);
  logits[0][0][0][1] = 0.0;
  logits[0][0][1][0] = 0.0;
  logits[0][0][1][2] = 0.0;
  logits[0][0][2][2] = 0.0;
  const at::Tensor targets = at::tensor({int64_t{2}, int64_t{0}, int64_t{1}}).view({1, 1, 3});
  const at::Tensor scored = at::tensor({1, 1, 0}).to(at::kBool).view({1, 1, 3});
  calibration.add(logits.to(at::kBFloat16), targets, scored);
  const nlohmann::json figures = calibration.take();
  const nlohmann::json& non_grass = figures.at("strip_non_grass");
  const nlohmann::json& water = figures.at("strip_water");
  EXPECT_EQ(non_grass.at("places"), 2);
  EXPECT_NEAR(non_grass.at("model").get<double>(), (0.5 + 0.5) / 2, 1e-3);
  EXPECT_NEAR(non_grass.at("game").get<double>(), (1.0 + 0.0) / 2, 1e-6);
  EXPECT_NEAR(water.at("model").get<double>(), 0.5 / 2, 1e-3);
  EXPECT_NEAR(water.at("game").get<double>(), 0.0, 1e-6);
  // A new window starts empty.
  const nlohmann::json empty = calibration.take();
  EXPECT_EQ(empty.at("strip_non_grass").at("places"), 0);
  EXPECT_TRUE(empty.at("strip_non_grass").at("model").is_null());
}

// A model that predicts the true tokens' own frequencies is calibrated: both figures agree.
TEST(StripCalibration, AModelThatKnowsTheMixAgreesWithTheGame) {
  std::mt19937 random(std::random_device{}());
  std::uniform_real_distribution<float> unit(0.05f, 1.0f);
  const float p[3] = {unit(random), unit(random), unit(random)};
  const float sum = p[0] + p[1] + p[2];
  const int64_t places = 20000;
  const at::Tensor probs = at::tensor({p[0] / sum, p[1] / sum, p[2] / sum});
  const at::Tensor targets = at::multinomial(probs, places, true).view({1, 1, places});
  const at::Tensor logits = probs.log().view({1, 1, 1, 3}).expand({1, 1, places, 3});
  StripCalibration calibration(three_entry_book(), at::kCPU);
  calibration.add(logits, targets, at::ones({1, 1, places}, at::kBool));
  const nlohmann::json figures = calibration.take();
  for (const char* name : {"strip_non_grass", "strip_water"}) {
    EXPECT_NEAR(figures.at(name).at("model").get<double>(),
                figures.at(name).at("game").get<double>(), 0.02)
        << name;
  }
}

}  // namespace
}  // namespace wc::train
