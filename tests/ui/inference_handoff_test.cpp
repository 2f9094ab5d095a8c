// The inference/render hand-off (DESIGN.md §4) with real threads, the real CPU frame sink and
// the offscreen renderer on lavapipe; built with the tsan preset, ThreadSanitizer checks every
// access on both sides. The render loop offers actions, sends commands and reads snapshots
// while the inference thread produces as fast as it can.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/ui/counter_source.h"
#include "ui/frames/headless_renderer.h"
#include "ui/inference/inference_thread.h"
#include "ui/vulkan/context.h"

// lavapipe and the Vulkan validation layer are not built with TSan: their own synchronisation
// (futexes and atomics in uninstrumented code) is invisible to it, so their internal frees and
// mutex/condvar teardown would be reported as races. A report whose stacks stay out of those two
// libraries still fails the test (checked by removing a lock in StatsMailbox). TSan builds only
// read this.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libvulkan_lvp.so\nrace:libVkLayer_khronos_validation.so\n";
}

namespace wc::ui {
namespace {

using testing::CounterSource;
constexpr int kSize = 32;
constexpr double kWait = 60.0;  // seconds; generous for TSan on a loaded machine

vk::ContextOptions validated() {
  vk::ContextOptions options;
  options.validation = true;
  return options;
}

// Every pixel of the rendered (1:1, nearest) target must say the same frame and action.
void expect_whole_frame(const uint8_t* pixels, uint64_t shown, int render) {
  const uint32_t index = CounterSource::index_of(pixels);
  EXPECT_EQ(index, static_cast<uint32_t>(shown & 0xffff)) << "render " << render;
  size_t torn = 0;
  for (size_t p = 0; p < size_t{kSize} * kSize * 4; p += 4) {
    if (CounterSource::index_of(pixels + p) != index || pixels[p + 2] != pixels[2]) ++torn;
  }
  EXPECT_EQ(torn, 0u) << "render " << render << " mixes frames";
}

TEST(InferenceHandoff, RenderLoopNeverWaitsAndNeverTearsAFrame) {
  vk::Context context(validated());
  HeadlessRenderer renderer(context, kSize, kSize, kSize, kSize);
  CounterSource source(kSize, kSize);
  InferenceOptions options;
  options.paced = false;  // as fast as it goes: the most contention
  options.script = {Action::kUp, Action::kUp, Action::kDown};
  InferenceThread inference(source, renderer.sink(), nullptr, options);
  inference.start();

  uint64_t last_shown = 0;
  uint64_t last_produced = 0;
  for (int n = 0; n < 120; ++n) {
    inference.offer_action(n % 40 < 20 ? Action::kRight : Action::kLeft);
    if (n % 30 == 29) inference.send(InferenceCommand::reclassify());  // rejected: no policy
    const std::shared_ptr<const LiveStats> stats = inference.stats();
    const uint8_t* pixels = renderer.render(PresentSettings{});
    inference.frame_presented();
    const uint64_t shown = renderer.sink().shown_frame_index();
    if (shown == UINT64_MAX) continue;
    EXPECT_GE(shown, last_shown);
    last_shown = shown;
    expect_whole_frame(pixels, shown, n);
    if (stats) {
      EXPECT_GE(stats->frames_produced, last_produced);
      last_produced = stats->frames_produced;
      EXPECT_EQ(stats->source_name, "counter");
      EXPECT_FALSE(stats->has_policy);
    }
  }
  // The rejected re-classify reaches the stats between blocks, so wait for it as well as for the
  // frames: on a fast machine the render loop can end before the command has been applied.
  ASSERT_TRUE(inference.wait_for(
      [](const LiveStats& s) {
        return s.frames_produced > 50 && s.error.find("no policy") != std::string::npos;
      },
      kWait));
  const auto stats = inference.stats();
  // The script ran first, then the offered actions were consumed.
  EXPECT_EQ(stats->action_counts[static_cast<size_t>(Action::kUp)], 2u);
  EXPECT_EQ(stats->action_counts[static_cast<size_t>(Action::kDown)], 1u);
  EXPECT_GT(stats->action_counts[static_cast<size_t>(Action::kRight)] +
                stats->action_counts[static_cast<size_t>(Action::kLeft)],
            0u);
  EXPECT_NE(stats->error.find("no policy"), std::string::npos) << stats->error;
  inference.stop();
  EXPECT_GT(last_shown, 0u);
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(InferenceHandoff, PauseStepResetThroughCommands) {
  vk::Context context(validated());
  HeadlessRenderer renderer(context, kSize, kSize, kSize, kSize);
  CounterSource source(kSize, kSize);
  InferenceOptions options;
  options.paced = false;
  InferenceThread inference(source, renderer.sink(), nullptr, options);
  inference.start();
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.frames_produced >= 5; }, kWait));

  inference.send(InferenceCommand::toggle_pause());
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.paused; }, kWait));
  const uint64_t paused_at = inference.stats()->frames_produced;
  for (int n = 0; n < 5; ++n) {  // the renderer keeps presenting the last frame
    renderer.render(PresentSettings{});
    inference.frame_presented();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(inference.stats()->frames_produced, paused_at);

  inference.offer_action(Action::kDown);
  inference.send(InferenceCommand::single_step());
  ASSERT_TRUE(inference.wait_for(
      [&](const LiveStats& s) { return s.frames_produced == paused_at + 1; }, kWait));
  EXPECT_EQ(inference.stats()->action, Action::kDown);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(inference.stats()->frames_produced, paused_at + 1);  // exactly one
  const uint8_t* pixels = renderer.render(PresentSettings{});
  EXPECT_EQ(CounterSource::action_of(pixels), Action::kDown);
  EXPECT_EQ(renderer.sink().shown_frame_index(), inference.stats()->frame_index);

  inference.send(InferenceCommand::reset(9));
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.frame_index == 0; }, kWait));
  inference.send(InferenceCommand::toggle_pause());
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return !s.paused && s.frame_index >= 3; },
                                 kWait));
  inference.stop();
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(InferenceHandoff, PacedSourceWaitsForPresentedFrames) {
  vk::Context context(validated());
  HeadlessRenderer renderer(context, kSize, kSize, kSize, kSize);
  CounterSource source(kSize, kSize);
  InferenceOptions options;
  options.paced = true;
  InferenceThread inference(source, renderer.sink(), nullptr, options);
  inference.start();
  // One credit to start with: one frame, then nothing until the renderer presents.
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.frames_produced == 1; }, kWait));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(inference.stats()->frames_produced, 1u);
  for (int n = 0; n < 10; ++n) {
    renderer.render(PresentSettings{});
    inference.frame_presented();
    const uint64_t expected = static_cast<uint64_t>(n) + 2;
    ASSERT_TRUE(inference.wait_for(
        [&](const LiveStats& s) { return s.frames_produced == expected; }, kWait));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(inference.stats()->frames_produced, 11u);  // never ahead of the display
  inference.stop();
  EXPECT_EQ(context.validation_errors(), 0u);
}

// Renders and reports presented frames as fast as it can for `ms` milliseconds.
struct PresentBurst {
  int presented = 0;
  double seconds = 0.0;
};
PresentBurst present_for(HeadlessRenderer& renderer, InferenceThread& inference, int ms) {
  PresentBurst burst;
  const auto first = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - first < std::chrono::milliseconds(ms)) {
    renderer.render(PresentSettings{});
    inference.frame_presented();
    ++burst.presented;
  }
  burst.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - first).count();
  return burst;
}

// With a frame rate (Note [Game frame rate]) presented frames no longer pay for frames one to
// one: a display presenting as fast as it can gets no more frames than the clock allows.
TEST(InferenceHandoff, PacedAtARateNeverRunsAheadOfTheClock) {
  vk::Context context(validated());
  HeadlessRenderer renderer(context, kSize, kSize, kSize, kSize);
  CounterSource source(kSize, kSize);
  InferenceOptions options;
  options.paced = true;
  options.frame_rate = 20.0;
  InferenceThread inference(source, renderer.sink(), nullptr, options);
  inference.start();
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.frames_produced == 1; }, kWait));
  const PresentBurst burst = present_for(renderer, inference, 400);
  // The thread catches up with the credits it was given, then waits.
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.frames_produced >= 2; }, kWait));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const uint64_t produced = inference.stats()->frames_produced;
  // The start credit, the first presented frame's, then one per 1/20 s.
  EXPECT_LE(produced, 2u + static_cast<uint64_t>(burst.seconds * options.frame_rate))
      << burst.presented;
  EXPECT_LT(produced, static_cast<uint64_t>(burst.presented));
  inference.stop();
  EXPECT_EQ(context.validation_errors(), 0u);
}

// The panel's frames/s slider: a command changes the rate while playing; a bad rate is refused
// with the error shown and the old rate kept.
TEST(InferenceHandoff, FrameRateChangesWhilePlaying) {
  vk::Context context(validated());
  HeadlessRenderer renderer(context, kSize, kSize, kSize, kSize);
  CounterSource source(kSize, kSize);
  InferenceOptions options;
  options.paced = true;  // one frame per presented frame to begin with
  InferenceThread inference(source, renderer.sink(), nullptr, options);
  inference.start();
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.frames_produced == 1; }, kWait));
  inference.send(InferenceCommand::set_frame_rate(-1.0));
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return !s.error.empty(); }, kWait));
  EXPECT_EQ(inference.stats()->frame_rate, 0.0);
  inference.send(InferenceCommand::set_frame_rate(10.0));
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.frame_rate == 10.0; }, kWait));
  const uint64_t before = inference.stats()->frames_produced;
  const PresentBurst burst = present_for(renderer, inference, 300);
  ASSERT_TRUE(
      inference.wait_for([&](const LiveStats& s) { return s.frames_produced > before; }, kWait));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const uint64_t produced = inference.stats()->frames_produced - before;
  // The first presented frame at the new rate earns one at once, then one per 1/10 s.
  EXPECT_LE(produced, 1u + static_cast<uint64_t>(burst.seconds * 10.0)) << burst.presented;
  inference.stop();
  EXPECT_EQ(context.validation_errors(), 0u);
}

}  // namespace
}  // namespace wc::ui
