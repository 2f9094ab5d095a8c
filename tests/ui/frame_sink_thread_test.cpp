// The CPU frame sink with a producer thread (the future inference thread) publishing while the
// render thread draws: every rendered frame must be one whole published frame (no tearing) and
// frames must never go backwards.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "ui/frames/headless_renderer.h"
#include "ui/vulkan/context.h"

namespace wc::ui {
namespace {

TEST(CpuFrameSinkThreads, ProducerThreadNeverTearsAFrame) {
  vk::ContextOptions options;
  options.validation = true;
  vk::Context context(options);
  constexpr int kSize = 64;
  HeadlessRenderer renderer(context, kSize, kSize, kSize, kSize);
  FrameSink& sink = renderer.sink();

  std::atomic<bool> stop{false};
  std::thread producer([&] {
    std::vector<uint8_t> frame(kSize * kSize * 4);
    for (uint64_t i = 1; !stop.load(); ++i) {
      // Every pixel of frame i carries i, so a torn frame mixes two values.
      for (size_t p = 0; p < frame.size(); p += 4) {
        frame[p] = static_cast<uint8_t>(i);
        frame[p + 1] = static_cast<uint8_t>(i >> 8);
        frame[p + 2] = static_cast<uint8_t>(i >> 16);
        frame[p + 3] = 255;
      }
      sink.publish(frame.data(), i);
    }
  });

  uint64_t last = 0;
  for (int n = 0; n < 60; ++n) {
    const uint8_t* pixels = renderer.render(PresentSettings{});
    const uint64_t shown = sink.shown_frame_index();
    if (shown == UINT64_MAX) continue;  // nothing published yet
    EXPECT_GE(shown, last);
    last = shown;
    const uint32_t value = pixels[0] | (pixels[1] << 8) | (pixels[2] << 16);
    EXPECT_EQ(value, static_cast<uint32_t>(shown & 0xffffff));
    size_t torn = 0;
    for (size_t p = 0; p < size_t{kSize} * kSize * 4; p += 4) {
      const uint32_t v = pixels[p] | (pixels[p + 1] << 8) | (pixels[p + 2] << 16);
      if (v != value) ++torn;
    }
    EXPECT_EQ(torn, 0u) << "render " << n << " mixes frames";
  }
  stop.store(true);
  producer.join();
  EXPECT_GT(last, 0u);
  EXPECT_EQ(context.validation_errors(), 0u);
}

}  // namespace
}  // namespace wc::ui
