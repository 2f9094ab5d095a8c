// Golden tests of the offscreen pipeline: frames rendered through the sink, the present pass and
// readback must equal a CPU nearest-neighbour upscale pixel for pixel, bars included.
#include <gtest/gtest.h>

#include <memory>

#include "engine/rollout/game_source.h"
#include "tests/ui/test_pattern_source.h"
#include "ui/frames/frame_producer.h"
#include "ui/frames/headless_renderer.h"
#include "ui/vulkan/context.h"

namespace wc::ui {
namespace {

vk::Context& validated_context() {
  static vk::Context context([] {
    vk::ContextOptions options;
    options.validation = true;
    return options;
  }());
  return context;
}

struct Mismatch {
  size_t count = 0;
  int first_x = -1;
  int first_y = -1;
};

Mismatch compare(const uint8_t* actual, const std::vector<uint8_t>& expected, int width) {
  Mismatch m;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (actual[i] != expected[i]) {
      if (m.count++ == 0) {
        m.first_x = static_cast<int>((i / 4) % static_cast<size_t>(width));
        m.first_y = static_cast<int>((i / 4) / static_cast<size_t>(width));
      }
    }
  }
  return m;
}

// Renders the source's current frame and checks it against the CPU reference.
void expect_exact(HeadlessRenderer& renderer, const FrameSource& source,
                  const PresentSettings& settings) {
  const uint8_t* pixels = renderer.render(settings);
  const Rect rect = letterbox(source.width(), source.height(), renderer.target_width(),
                              renderer.target_height(), settings.scale_mode);
  uint8_t bar[4];
  for (int c = 0; c < 4; ++c) bar[c] = static_cast<uint8_t>(settings.bar_color[c] * 255.0f + 0.5f);
  const std::vector<uint8_t> expected = testing::reference_present(
      source.rgba(), source.width(), source.height(), renderer.target_width(),
      renderer.target_height(), rect.x, rect.y, rect.width, rect.height, bar);
  const Mismatch m = compare(pixels, expected, renderer.target_width());
  EXPECT_EQ(m.count, 0u) << "first mismatch at (" << m.first_x << ", " << m.first_y << ")";
}

TEST(HeadlessGolden, IntegerScaleWithLetterboxBarsIsPixelExact) {
  vk::Context& context = validated_context();
  testing::TestPatternSource source(40, 30);
  // 130x100 holds a 3x upscale (120x90) with 5-pixel bars on every side.
  HeadlessRenderer renderer(context, 40, 30, 130, 100);
  FrameProducer producer(source, renderer.sink());
  PresentSettings settings;
  settings.bar_color = {0.2f, 0.4f, 0.6f, 1.0f};
  const Rect rect = letterbox(40, 30, 130, 100, ScaleMode::kInteger);
  EXPECT_EQ(rect.x, 5);
  EXPECT_EQ(rect.y, 5);
  EXPECT_EQ(rect.width, 120);
  EXPECT_EQ(rect.height, 90);

  producer.reset(7);
  expect_exact(renderer, source, settings);
  for (Action action : {Action::kRight, Action::kUp, Action::kNone}) {
    producer.step(action);
    expect_exact(renderer, source, settings);
  }
  EXPECT_EQ(renderer.sink().shown_frame_index(), 3u);
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(HeadlessGolden, ReplaysLastFrameWhenNoNewFrameArrives) {
  vk::Context& context = validated_context();
  testing::TestPatternSource source(32, 24);
  HeadlessRenderer renderer(context, 32, 24, 64, 48);
  FrameProducer producer(source, renderer.sink());
  producer.reset(1);
  producer.step(Action::kLeft);
  PresentSettings settings;
  expect_exact(renderer, source, settings);
  // No publish in between: the sampled image keeps the last frame.
  expect_exact(renderer, source, settings);
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(HeadlessGolden, NewestOfSeveralPublishedFramesIsShown) {
  vk::Context& context = validated_context();
  testing::TestPatternSource source(16, 16);
  HeadlessRenderer renderer(context, 16, 16, 32, 32);
  FrameProducer producer(source, renderer.sink());
  producer.reset(3);
  // More frames than slots between two renders: the ring keeps only the newest complete one.
  for (int i = 0; i < 5; ++i) producer.step(Action::kDown);
  expect_exact(renderer, source, PresentSettings{});
  EXPECT_EQ(renderer.sink().shown_frame_index(), 5u);
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(HeadlessGolden, BilinearFitRendersWithoutValidationErrors) {
  vk::Context& context = validated_context();
  testing::TestPatternSource source(40, 30);
  HeadlessRenderer renderer(context, 40, 30, 100, 100);
  FrameProducer producer(source, renderer.sink());
  producer.reset(0);
  PresentSettings settings;
  settings.filter = Filter::kBilinear;
  settings.scale_mode = ScaleMode::kFit;
  const uint8_t* pixels = renderer.render(settings);
  // Fit: 100x75 centred vertically; the rows above it are bar (black).
  EXPECT_EQ(pixels[0], 0);
  EXPECT_EQ(pixels[3], 255);
  const size_t centre = (50u * 100u + 50u) * 4u;
  EXPECT_EQ(pixels[centre + 3], 255);
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(HeadlessGolden, GameFrameIsPixelExact) {
  vk::Context& context = validated_context();
  std::unique_ptr<FrameSource> source = make_game_source(96, 64, 42);
  HeadlessRenderer renderer(context, 96, 64, 200, 200);  // 2x (192x128) with bars
  FrameProducer producer(*source, renderer.sink());
  producer.reset(42);
  expect_exact(renderer, *source, PresentSettings{});
  for (int i = 0; i < 3; ++i) {
    producer.step(Action::kRight);
    expect_exact(renderer, *source, PresentSettings{});
  }
  EXPECT_EQ(context.validation_errors(), 0u);
}

}  // namespace
}  // namespace wc::ui
