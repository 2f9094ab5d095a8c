// The archetypes study on a tiny random-weight model: the cast as classified, then a row per
// archetype it uses with that archetype's heads made Global; a cast with none plays dense's
// frames; refusals before any run.
#include "engine/eval/archetype_study.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "tests/eval/eval_test_config.h"
#include "tests/eval/study_plot_check.h"

namespace wc::eval {
namespace {

EvalOptions tiny_options() {
  EvalOptions options;
  options.config = testing::eval_tiny_config(32);
  options.seeds = {1000000, 1000001};
  return options;
}

int heads_of(const ArchetypeRow& row, const std::string& type) {
  const auto it = row.heads_by_type.find(type);
  return it == row.heads_by_type.end() ? 0 : it->second;
}

// θ = 0 passes every cheap path a head has, so the cast is mostly Dummy; each later row moves
// exactly its archetype's heads to Global and holds at least the K/V of the cast.
TEST(ArchetypeStudy, EachRowMakesOneArchetypeGlobal) {
  EvalOptions options = tiny_options();
  options.settings["headcast"] = {{"theta_dummy", 0.0},
                                  {"theta_sink", 0.0},
                                  {"theta_spatial", 0.0},
                                  {"theta_spatial_score", -10.0}};
  ArchetypeStudyOptions study;
  study.frames = 3;
  const ArchetypeStudy result = run_archetype_study(options, study);
  ASSERT_GE(result.rows.size(), 2u);
  const int heads = options.config.layers * options.config.heads;
  const ArchetypeRow& cast = result.rows.front();
  EXPECT_TRUE(cast.made_global.empty());
  EXPECT_GT(heads_of(cast, "dummy"), heads / 2);
  for (const ArchetypeRow& row : result.rows) {
    int sum = 0;
    for (const auto& [name, count] : row.heads_by_type) sum += count;
    EXPECT_EQ(sum, heads) << row.made_global;
    EXPECT_GT(row.ms_per_frame, 0.0);
    EXPECT_GT(row.speed_vs_dense, 0.0);
    EXPECT_GE(row.sprite_share, 0.0);
    EXPECT_LE(row.sprite_share, 1.0);
    EXPECT_GE(row.hud_share, 0.0);
    EXPECT_LE(row.hud_share, 1.0);
    if (row.made_global.empty()) continue;
    EXPECT_EQ(heads_of(row, row.made_global), 0) << row.made_global;
    EXPECT_EQ(heads_of(row, "global"), heads_of(cast, "global") + heads_of(cast, row.made_global))
        << row.made_global;
    EXPECT_GE(row.cache_bytes, cast.cache_bytes) << row.made_global;
  }
  // The rows follow the table's order (sink, dummy, spatial), each where a cast uses it.
  std::string order;
  for (const ArchetypeRow& row : result.rows) order += row.made_global + ";";
  EXPECT_NE(order.find(";dummy;"), std::string::npos) << order;
  for (const char* wrong : {"spatial;sink", "dummy;sink", "spatial;dummy"}) {
    EXPECT_EQ(order.find(wrong), std::string::npos) << order;
  }
  EXPECT_LT(cast.cache_bytes, result.dense.cache_bytes);
  EXPECT_GT(result.dense.ms_per_frame, 0.0);

  const nlohmann::json json = result.to_json();
  EXPECT_EQ(json.at("study"), "archetypes");
  EXPECT_EQ(json.at("rows").size(), result.rows.size());
  EXPECT_TRUE(json.at("rows")[0].at("made_global").is_null());
  const std::string table = result.markdown();
  EXPECT_NE(table.find("| as cast |"), std::string::npos) << table;
  EXPECT_NE(table.find("| dummy made global |"), std::string::npos) << table;
  testing::expect_study_plot(result, "archetypes");
}

// θ above every score casts every head Global: there is no archetype to remove, and the cast
// attends as dense does, so on the same seed, keys and noise its frames are dense's.
TEST(ArchetypeStudy, ACastOfGlobalsHasOneRowAndPlaysDensesFrames) {
  EvalOptions options = tiny_options();
  options.seeds = {1000002};
  options.settings["headcast"] = {
      {"theta_dummy", 2.0}, {"theta_sink", 2.0}, {"theta_spatial", 2.0}};
  ArchetypeStudyOptions study;
  study.frames = 2;
  const ArchetypeStudy result = run_archetype_study(options, study);
  ASSERT_EQ(result.rows.size(), 1u);
  EXPECT_EQ(heads_of(result.rows[0], "global"), options.config.layers * options.config.heads);
  EXPECT_GT(result.rows[0].psnr_vs_dense, 60.0);
  EXPECT_DOUBLE_EQ(result.rows[0].sprite_share, result.dense.sprite_share);
}

TEST(ArchetypeStudy, RefusedBeforeAnyRun) {
  EvalOptions options = tiny_options();
  ArchetypeStudyOptions study;
  study.frames = 0;
  try {
    validate(study, options);
    ADD_FAILURE() << "accepted no frames";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("study archetypes: frames"), std::string::npos)
        << e.what();
  }
  options.settings["headcast"] = {{"cast", {{"mix", {0, 0, 0, options.config.heads}}}}};
  try {
    validate(ArchetypeStudyOptions{}, options);
    ADD_FAILURE() << "accepted a forced cast";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("force a cast"), std::string::npos) << e.what();
  }
  options.settings.clear();
  options.seeds.clear();
  EXPECT_THROW(validate(ArchetypeStudyOptions{}, options), Error);
}

}  // namespace
}  // namespace wc::eval
