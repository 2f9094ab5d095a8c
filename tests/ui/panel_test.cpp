// The panel, its model and the action mailbox without a renderer (ImGui as in example_null):
// the sliders follow the running policy's settings keys, every widget's intent becomes the
// inference command it should, and the whole panel draws for the game and for the model.
#include <gtest/gtest.h>

#include <imgui.h>

#include <cmath>

#include "engine/attention/registry.h"
#include "ui/inference/action_mailbox.h"
#include "ui/window/frame_time_history.h"
#include "ui/window/panel.h"
#include "ui/window/panel_model.h"

namespace wc::ui {
namespace {

using attention::HeadType;
using Kind = InferenceCommand::Kind;

TEST(FrameTimeHistory, RingKeepsNewestSamplesInPlotOrder) {
  FrameTimeHistory history(4);
  EXPECT_EQ(history.size(), 0);
  EXPECT_EQ(history.percentile(50.0), 0.0);
  for (int i = 1; i <= 6; ++i) history.push(static_cast<float>(i));
  EXPECT_EQ(history.size(), 4);
  // Holds 3, 4, 5, 6; PlotLines starts reading at offset().
  const int offset = history.offset();
  EXPECT_EQ(history.data()[offset], 3.0f);
  EXPECT_EQ(history.data()[(offset + 3) % 4], 6.0f);
  EXPECT_DOUBLE_EQ(history.percentile(50.0), 4.5);
  EXPECT_DOUBLE_EQ(history.mean(), 4.5);
  EXPECT_EQ(history.max(), 6.0f);
}

TEST(ActionMailbox, NewestActionWinsAndATapIsNeverLost) {
  ActionMailbox box;
  EXPECT_EQ(box.take(), Action::kNone);
  box.offer(Action::kLeft);
  box.offer(Action::kUp);
  EXPECT_EQ(box.take(), Action::kUp);  // the newest, not a backlog
  EXPECT_EQ(box.take(), Action::kUp);  // still held
  box.offer(Action::kRight);           // tapped between two generated frames...
  box.offer(Action::kNone);            // ...and released
  EXPECT_EQ(box.take(), Action::kRight);
  EXPECT_EQ(box.take(), Action::kNone);
}

// A snapshot as the model source reports it: 3 layers x 4 heads of a headcast-like policy.
LiveStats model_stats(const nlohmann::json& settings, const std::string& policy = "headcast") {
  LiveStats s;
  s.source_name = "model:test";
  s.has_policy = true;
  s.policy = policy;
  s.policy_names = {"dense", "headcast", "tempcache"};
  s.settings = settings;
  s.geometry = {3, 4, 2, 16, 16, {"dense", "sink", "dummy", "spatial", "global", "neighbour"}, {}};
  const HeadType types[] = {HeadType::kSink, HeadType::kDummy, HeadType::kSpatial,
                            HeadType::kGlobal};
  s.run.policy.heads.assign(3, std::vector<attention::HeadStats>(4));
  for (auto& layer : s.run.policy.heads) {
    for (int h = 0; h < 4; ++h) {
      layer[static_cast<size_t>(h)].type = types[h];
      layer[static_cast<size_t>(h)].scores = {0.9f, 0.8f, 0.7f, 0.6f};
    }
  }
  for (HeadType t : types) {
    auto& type = s.run.policy.per_type[static_cast<size_t>(t)];
    type.heads = 3;
    type.cached_tokens = 3 * 256;
    type.cached_bytes = 3 * 256 * 512;
  }
  s.run.policy.classified = true;
  return s;
}

const SliderSpec& find(const std::vector<SliderSpec>& sliders, const std::string& label) {
  for (const SliderSpec& s : sliders) {
    if (s.label == label) return s;
  }
  throw std::runtime_error("no slider " + label);
}

TEST(PanelModel, SlidersFollowTheRunningPolicysKeys) {
  const nlohmann::json headcast = {{"window", 6},
                                   {"theta_dummy", 0.9},
                                   {"theta_sink", 0.95},
                                   {"theta_spatial", 0.95},
                                   {"theta_spatial_score", 0.755},
                                   {"gamma", 5.0},
                                   {"radius", 2},
                                   {"cell", 8},
                                   {"cast", nullptr}};
  const auto sliders = PanelModel::sliders(model_stats(headcast));
  std::vector<std::string> labels;
  for (const SliderSpec& s : sliders) labels.push_back(s.label);
  EXPECT_EQ(labels,
            (std::vector<std::string>{"theta", "theta_sc", "gamma", "r", "cell", "window"}));
  const SliderSpec& theta = find(sliders, "theta");
  EXPECT_EQ(theta.keys, (std::vector<std::string>{"theta_dummy", "theta_sink", "theta_spatial"}));
  EXPECT_DOUBLE_EQ(theta.value, 0.95);
  const SliderSpec& window = find(sliders, "window");
  EXPECT_TRUE(window.integer);
  EXPECT_DOUBLE_EQ(window.value, 3.0);  // 6 frames = 3 blocks of 2 frames
  EXPECT_DOUBLE_EQ(find(sliders, "cell").max, 16.0);

  const nlohmann::json tempcache = {{"tau", 0.9}, {"budget", 768}, {"window", 0}};
  const auto temp = PanelModel::sliders(model_stats(tempcache, "tempcache"));
  EXPECT_EQ(temp.size(), 3u);
  EXPECT_DOUBLE_EQ(find(temp, "budget").value, 3.0);  // 768 tokens = 3 frames of 16 x 16
  EXPECT_DOUBLE_EQ(find(temp, "tau").value, 0.9);

  LiveStats game;
  EXPECT_TRUE(PanelModel::sliders(game).empty());
}

TEST(PanelModel, AnnsaPoliciesGetTheirSliders) {
  attention::ModelShape shape;
  shape.geometry = attention::BlockGeometry{1, 16, 16};
  shape.head_dim = 32;
  for (const char* name : {"annsa", "fast-ar"}) {
    SCOPED_TRACE(name);
    const auto policy = attention::create_policy(name, shape, nlohmann::json::object());
    const auto sliders = PanelModel::sliders(model_stats(policy->settings(), name));
    EXPECT_DOUBLE_EQ(find(sliders, "ann bits").value, 6.0);
    EXPECT_DOUBLE_EQ(find(sliders, "ann r").value, 1.0);
    EXPECT_DOUBLE_EQ(find(sliders, "ann tile").value, 128.0);
    EXPECT_TRUE(find(sliders, "ann bits").integer);
    // What the slider sends, the policy takes.
    PanelModel model(7, "/tmp");
    model.set_slider(find(sliders, "ann bits"), 8.0);
    const std::vector<InferenceCommand> commands = model.take_commands();
    ASSERT_EQ(commands.size(), 1u);
    policy->configure(commands[0].settings);
    EXPECT_EQ(policy->settings().at("ann_bits"), 8);
  }
}

TEST(PanelModel, SlidersBecomeConfigureCommandsInSettingsUnits) {
  const nlohmann::json settings = {{"theta_dummy", 0.9},   {"theta_sink", 0.9},
                                   {"theta_spatial", 0.9}, {"window", 6},
                                   {"budget", 512},        {"tau", 0.9}};
  const auto sliders = PanelModel::sliders(model_stats(settings));
  PanelModel model(7, "/tmp");
  model.set_slider(find(sliders, "theta"), 0.5);
  model.set_slider(find(sliders, "window"), 4.0);  // blocks -> 8 frames
  model.set_slider(find(sliders, "budget"), 2.0);  // frames -> 512 tokens
  model.set_slider(find(sliders, "tau"), 7.0);     // clamped to the slider's range
  const auto commands = model.take_commands();
  ASSERT_EQ(commands.size(), 4u);
  for (const auto& c : commands) EXPECT_EQ(c.kind, Kind::kConfigure);
  EXPECT_EQ(commands[0].settings,
            (nlohmann::json{{"theta_dummy", 0.5}, {"theta_sink", 0.5}, {"theta_spatial", 0.5}}));
  EXPECT_EQ(commands[1].settings, (nlohmann::json{{"window", 8}}));
  EXPECT_EQ(commands[2].settings, (nlohmann::json{{"budget", 512}}));
  EXPECT_EQ(commands[3].settings, (nlohmann::json{{"tau", 1.0}}));
  EXPECT_TRUE(model.take_commands().empty());
}

TEST(PanelModel, FrameRateBecomesACommandWithinRange) {
  PanelModel model(7, "/tmp");
  model.set_frame_rate(24.0);
  model.set_frame_rate(-3.0);
  model.set_frame_rate(1e6);
  const auto commands = model.take_commands();
  ASSERT_EQ(commands.size(), 3u);
  for (const auto& c : commands) EXPECT_EQ(c.kind, Kind::kSetFrameRate);
  EXPECT_EQ(commands[0].value, 24.0);
  EXPECT_EQ(commands[1].value, 0.0);
  EXPECT_EQ(commands[2].value, 240.0);
}

TEST(PanelModel, PolicySelectorRemembersEachPolicysLastSettings) {
  PanelModel model(3, "/tmp");
  model.observe(model_stats({{"theta_sink", 0.5}}, "headcast"));
  model.select_policy("headcast");  // already running: nothing to do
  model.select_policy("tempcache");
  model.observe(model_stats({{"tau", 0.7}}, "tempcache"));
  model.select_policy("headcast");
  model.reclassify();
  model.toggle_pause();
  model.single_step();
  model.reset();
  const auto c = model.take_commands();
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[0].kind, Kind::kSwitchPolicy);
  EXPECT_EQ(c[0].name, "tempcache");
  EXPECT_EQ(c[0].settings, nlohmann::json::object());  // its defaults the first time
  EXPECT_EQ(c[1].kind, Kind::kSwitchPolicy);
  EXPECT_EQ(c[1].name, "headcast");
  EXPECT_EQ(c[1].settings, (nlohmann::json{{"theta_sink", 0.5}}));
  EXPECT_EQ(c[2].kind, Kind::kReclassify);
  EXPECT_EQ(c[3].kind, Kind::kTogglePause);
  EXPECT_EQ(c[4].kind, Kind::kSingleStep);
  EXPECT_EQ(c[5].kind, Kind::kReset);
  EXPECT_EQ(c[5].seed, 3u);
}

// Note [Cast preview]: the heads each threshold would cast, counted from the stored scores by
// the rule written out here per head; nothing for other sliders or before the cast.
TEST(PanelModel, CastPreviewCountsTheHeadsAThresholdWouldCast) {
  LiveStats stats = model_stats({{"theta_dummy", 0.95},
                                 {"theta_sink", 0.95},
                                 {"theta_spatial", 0.95},
                                 {"theta_spatial_score", 0.755},
                                 {"gamma", 5.0}});
  // Per layer: a Dummy (S_dummy 0.99), a Sink (S_sink 0.97), a Spatial (M_sp 0.96, S_sp 0.8),
  // a Global (all low) and a head never scored, cast Global.
  using attention::HeadScores;
  const std::vector<std::pair<HeadScores, HeadType>> heads = {
      {HeadScores{0.5f, 0.99f, 0.5f, 0.5f}, HeadType::kDummy},
      {HeadScores{0.97f, 0.5f, 0.5f, 0.5f}, HeadType::kSink},
      {HeadScores{0.3f, 0.3f, 0.96f, 0.8f}, HeadType::kSpatial},
      {HeadScores{0.1f, 0.1f, 0.1f, 0.1f}, HeadType::kGlobal},
      {HeadScores{}, HeadType::kGlobal}};
  for (auto& layer : stats.run.policy.heads) {
    layer.clear();
    for (const auto& [scores, type] : heads) layer.push_back({type, scores});
  }
  const auto sliders = PanelModel::sliders(stats);
  const auto find = [&](const std::string& label) {
    for (const SliderSpec& s : sliders) {
      if (s.label == label) return s;
    }
    ADD_FAILURE() << "no slider " << label;
    return SliderSpec{};
  };
  const SliderSpec theta = find("theta"), theta_sc = find("theta_sc"), gamma = find("gamma");
  stats.run.policy.classified = false;
  EXPECT_FALSE(PanelModel::cast_preview(stats, theta, 0.95)) << "not cast yet";
  stats.run.policy.classified = true;
  const auto counts = [&](const SliderSpec& slider, double value) {
    const auto c = PanelModel::cast_preview(stats, slider, value);
    EXPECT_TRUE(c.has_value());
    return c.value_or(PanelModel::TypeCounts{});
  };
  const auto n = [](const PanelModel::TypeCounts& c, HeadType t) {
    return c[static_cast<size_t>(t)];
  };
  PanelModel::TypeCounts c = counts(theta, 0.95);  // the cast as it stands, 3 layers
  EXPECT_EQ(n(c, HeadType::kDummy), 3);
  EXPECT_EQ(n(c, HeadType::kSink), 3);
  EXPECT_EQ(n(c, HeadType::kSpatial), 3);
  EXPECT_EQ(n(c, HeadType::kGlobal), 6);
  c = counts(theta, 0.965);  // the Spatial head falls to Global
  EXPECT_EQ(n(c, HeadType::kSink), 3);
  EXPECT_EQ(n(c, HeadType::kSpatial), 0);
  EXPECT_EQ(n(c, HeadType::kGlobal), 9);
  c = counts(theta, 0.98);  // and the Sink head
  EXPECT_EQ(n(c, HeadType::kDummy), 3);
  EXPECT_EQ(n(c, HeadType::kSink), 0);
  EXPECT_EQ(n(c, HeadType::kGlobal), 12);
  c = counts(theta, 0.4);  // Dummy is asked first: the Sink head's S_dummy 0.5 reaches it
  EXPECT_EQ(n(c, HeadType::kDummy), 6);
  EXPECT_EQ(n(c, HeadType::kSink), 0);
  EXPECT_EQ(n(c, HeadType::kSpatial), 3);
  EXPECT_EQ(n(c, HeadType::kGlobal), 6);
  c = counts(theta_sc, 0.85);  // S_sp 0.8 no longer enough
  EXPECT_EQ(n(c, HeadType::kSpatial), 0);
  EXPECT_EQ(n(c, HeadType::kSink), 3);
  EXPECT_FALSE(PanelModel::cast_preview(stats, gamma, 1.0)) << "gamma needs the evidence";
}

// Note [Cast preview]: a held threshold sends nothing until let go, then one configure command
// with the held value; letting go again sends nothing.
TEST(PanelModel, AHeldThresholdIsSentOnceWhenLetGo) {
  const LiveStats stats =
      model_stats({{"theta_dummy", 0.95}, {"theta_sink", 0.95}, {"theta_spatial", 0.95}});
  const SliderSpec theta = PanelModel::sliders(stats).front();
  ASSERT_EQ(theta.label, "theta");
  PanelModel model(0, ".");
  EXPECT_FALSE(model.held_value(theta));
  model.hold_slider(theta, 0.9);
  model.hold_slider(theta, 0.8);
  model.hold_slider(theta, 7.0);  // clamped to the slider's range
  EXPECT_EQ(model.held_value(theta), 1.0);
  model.hold_slider(theta, 0.85);
  EXPECT_TRUE(model.take_commands().empty());
  model.release_slider(theta);
  const auto c = model.take_commands();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].kind, Kind::kConfigure);
  EXPECT_EQ(c[0].settings,
            (nlohmann::json{{"theta_dummy", 0.85}, {"theta_sink", 0.85}, {"theta_spatial", 0.85}}));
  EXPECT_FALSE(model.held_value(theta));
  model.release_slider(theta);
  EXPECT_TRUE(model.take_commands().empty());
}

// Note [Worst-token scores]: the checkbox becomes a configure command of the cast's scoring.
TEST(PanelModel, WorstTokenBecomesAConfigureCommand) {
  PanelModel model(0, ".");
  model.set_worst_token(true);
  model.set_worst_token(false);
  const auto c = model.take_commands();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].kind, Kind::kConfigure);
  EXPECT_EQ(c[0].settings, (nlohmann::json{{"worst_token", true}}));
  EXPECT_EQ(c[1].settings, (nlohmann::json{{"worst_token", false}}));
}

TEST(PanelModel, PlaySettingsBecomeACommand) {
  PanelModel model(0, ".");
  model.configure_play({{"temperature", 0.25}});
  const auto c = model.take_commands();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].kind, Kind::kConfigurePlay);
  EXPECT_EQ(c[0].settings, (nlohmann::json{{"temperature", 0.25}}));
}

TEST(PanelModel, RecordStartsInAFreshFolderAndStops) {
  PanelModel model(0, "/tmp/wc_panel_model_test");
  model.toggle_recording(false);
  model.toggle_recording(true);
  const auto c = model.take_commands();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].kind, Kind::kStartRecording);
  EXPECT_EQ(c[0].name, "/tmp/wc_panel_model_test/worldcast_record_000");
  EXPECT_EQ(c[1].kind, Kind::kStopRecording);
}

TEST(PanelModel, HistoriesSampleOncePerGeneratedFrame) {
  PanelModel model(0, ".");
  LiveStats s = model_stats({});
  for (int rendered = 0; rendered < 30; ++rendered) {
    s.frames_produced = static_cast<uint64_t>(rendered / 3);  // the model is 3x slower
    s.produce_ms = 48.0;
    s.run.model_ms = 45.0;
    model.observe(s);
    model.observe_frame(16.0, 2.0);
  }
  EXPECT_EQ(model.produce_times().size(), 10);
  EXPECT_EQ(model.frame_times().size(), 30);
  EXPECT_NEAR(model.generated_fps(), 1000.0 / 48.0, 1.0);
  EXPECT_EQ(model.cache_history(HeadType::kSpatial).size(), 10);
  EXPECT_NEAR(model.cache_history_max(), 3 * 256 * 512 / 1e6, 1e-4);
  EXPECT_EQ(model.cache_history(HeadType::kDense).max(), 0.0f);
}

class PanelDraw : public ::testing::Test {
 protected:
  void SetUp() override {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1280.0f, 800.0f);
    io.DeltaTime = 1.0f / 60.0f;
    unsigned char* pixels = nullptr;
    int width = 0;
    int height = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
  }
  void TearDown() override { ImGui::DestroyContext(); }

  int draw(const LiveStats* stats, PanelModel& model) {
    PanelView view;
    view.frame_width = 128;
    view.frame_height = 128;
    view.device_name = "test";
    for (int frame = 0; frame < 2; ++frame) {
      ImGui::NewFrame();
      const PanelRequests requests = draw_panel(view, stats, model);
      EXPECT_FALSE(requests.screenshot);
      EXPECT_FALSE(requests.filter_changed);
      ImGui::Render();
    }
    return ImGui::GetDrawData()->TotalVtxCount;
  }
};

TEST_F(PanelDraw, GameSourceAndBeforeTheFirstSnapshot) {
  PanelModel model(0, ".");
  EXPECT_GT(draw(nullptr, model), 100);
  LiveStats game;
  game.source_name = "game";
  for (int i = 0; i < 50; ++i) {
    game.frames_produced = static_cast<uint64_t>(i);
    model.observe(game);
    model.observe_frame(16.0f + static_cast<float>(i % 5), 1.0);
  }
  EXPECT_GT(draw(&game, model), 100);
  EXPECT_TRUE(model.take_commands().empty());  // drawing alone asks for nothing
}

TEST_F(PanelDraw, ModelSourceDrawsTheHeadMap) {
  PanelModel model(0, ".");
  const LiveStats stats = model_stats({{"theta_sink", 0.9}, {"window", 6}});
  model.observe(stats);
  const int three_layers = draw(&stats, model);
  LiveStats six_layers = stats;  // twice the heads: one more filled cell each
  six_layers.run.policy.heads.insert(six_layers.run.policy.heads.end(),
                                     stats.run.policy.heads.begin(), stats.run.policy.heads.end());
  EXPECT_GE(draw(&six_layers, model), three_layers + 12 * 4);
  EXPECT_TRUE(model.take_commands().empty());
}

// Note [Play settings]: a slider for each play setting the model has and reports a value of.
TEST_F(PanelDraw, PlaySlidersForTheSettingsTheModelHas) {
  PanelModel model(0, ".");
  LiveStats stats = model_stats({{"theta_sink", 0.9}, {"window", 6}});
  model.observe(stats);
  const int without = draw(&stats, model);
  stats.geometry.play = {{"passes", "passes", "unmasking passes", true, 1, 8},
                         {"temperature", "token t", "how boldly", false, 0.05, 2.0}};
  EXPECT_EQ(draw(&stats, model), without);  // no values yet: nothing to show
  stats.run.play = {{"passes", 3}};
  const int one = draw(&stats, model);
  EXPECT_GT(one, without);
  stats.run.play["temperature"] = 1.0;
  EXPECT_GT(draw(&stats, model), one);
  EXPECT_TRUE(model.take_commands().empty());
}

// Note [Worst-token scores]: the checkbox is drawn for a policy whose settings carry the key.
TEST_F(PanelDraw, WorstTokenCheckboxOnlyForACastingPolicy) {
  PanelModel model(0, ".");
  LiveStats stats = model_stats({{"theta_sink", 0.9}, {"window", 6}});
  model.observe(stats);
  const int without = draw(&stats, model);
  stats.settings["worst_token"] = true;
  EXPECT_GT(draw(&stats, model), without);
  EXPECT_TRUE(model.take_commands().empty());
}

// Note [Re-cast agreement]: shown beside Re-classify once a re-cast has been decided.
TEST_F(PanelDraw, RecastAgreementIsShownOnceDecided) {
  PanelModel model(0, ".");
  LiveStats stats = model_stats({{"theta_sink", 0.9}, {"window", 6}});
  model.observe(stats);
  const int without = draw(&stats, model);
  stats.run.policy.recast_agreement = 0.75;
  EXPECT_GT(draw(&stats, model), without);
  EXPECT_TRUE(model.take_commands().empty());
}

}  // namespace
}  // namespace wc::ui
