// The frame-path factory: `--frame-path` parsing and defaults, the CUDA request falling back to
// the CPU sink with a reason where CUDA cannot run (this CPU build, lavapipe), frames published
// through the chosen sink arriving pixel-exact, and which route a source's frames take.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/rollout/session.h"
#include "tests/model/model_test_util.h"
#include "tests/ui/test_pattern_source.h"
#include "ui/frames/frame_path.h"
#include "ui/frames/headless_renderer.h"
#include "ui/frames/source_publish.h"
#include "ui/vulkan/context.h"

namespace wc::ui {
namespace {

using ::testing::HasSubstr;

// Renders the newest published frame 1:1 (nearest), which the golden tests show is exact.
std::vector<uint8_t> shown(HeadlessRenderer& renderer) {
  const uint8_t* pixels = renderer.render(PresentSettings{});
  return std::vector<uint8_t>(
      pixels, pixels + static_cast<size_t>(renderer.target_width()) * renderer.target_height() * 4);
}

std::vector<uint8_t> frame_of(const FrameSource& source) {
  return std::vector<uint8_t>(
      source.rgba(), source.rgba() + static_cast<size_t>(source.width()) * source.height() * 4);
}

TEST(FramePath, ParsesNamesAndDefaults) {
  EXPECT_EQ(parse_frame_path("cuda"), FramePath::kCuda);
  EXPECT_EQ(parse_frame_path("cpu"), FramePath::kCpu);
  EXPECT_EQ(parse_frame_path("gpu"), std::nullopt);
  EXPECT_EQ(parse_frame_path(""), std::nullopt);
  EXPECT_STREQ(frame_path_name(FramePath::kCuda), "cuda");
  EXPECT_STREQ(frame_path_name(FramePath::kCpu), "cpu");
  EXPECT_EQ(default_frame_path(false), FramePath::kCpu);
  EXPECT_EQ(default_frame_path(true), cuda_frame_path_built() ? FramePath::kCuda : FramePath::kCpu);
  EXPECT_EQ(resolve_frame_path("cpu", true), FramePath::kCpu);
  EXPECT_EQ(resolve_frame_path("cuda", false), FramePath::kCuda);
  EXPECT_EQ(resolve_frame_path("", false), FramePath::kCpu);
  EXPECT_THAT(wc::testing::error_of([] { resolve_frame_path("vulkan", true); }),
              HasSubstr("--frame-path: expected cuda or cpu, got 'vulkan'"));
}

TEST(FramePath, CudaRequestFallsBackToTheCpuSinkWithAReason) {
  vk::ContextOptions options;
  options.validation = true;
  configure_context(FramePath::kCuda, 0, &options);
  EXPECT_TRUE(options.external_interop);
  vk::Context context(options);
  FrameSinkChoice choice = make_frame_sink(FramePath::kCuda, context, 24, 16);
  ASSERT_NE(choice.sink, nullptr);
  if (!cuda_frame_path_built()) {
    EXPECT_EQ(choice.path, FramePath::kCpu);
    EXPECT_THAT(choice.fallback_reason, HasSubstr("WORLDCAST_CUDA"));
    EXPECT_FALSE(choice.sink->accepts_device_frames());
  } else if (choice.path == FramePath::kCpu) {
    EXPECT_NE(choice.fallback_reason, "");  // e.g. lavapipe: no semaphore export
  } else {
    EXPECT_EQ(choice.fallback_reason, "");
    EXPECT_TRUE(choice.sink->accepts_device_frames());
  }
  EXPECT_EQ(choice.sink->width(), 24);
  EXPECT_EQ(choice.sink->height(), 16);

  // Whatever was built, frames arrive exactly.
  HeadlessRenderer renderer(context, std::move(choice.sink), 24, 16);
  testing::TestPatternSource source(24, 16);
  for (Action action : {Action::kNone, Action::kRight, Action::kDown}) {
    source.step(action);
    publish_source_frame(source, renderer.sink());
    EXPECT_EQ(shown(renderer), frame_of(source));
    EXPECT_EQ(renderer.sink().shown_frame_index(), source.frame_index());
  }
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(FramePath, CpuRequestNeverTriesCuda) {
  vk::ContextOptions options;
  options.validation = true;
  configure_context(FramePath::kCpu, 0, &options);
  EXPECT_FALSE(options.external_interop);
  EXPECT_FALSE(options.device_uuid.has_value());
  vk::Context context(options);
  const FrameSinkChoice choice = make_frame_sink(FramePath::kCpu, context, 8, 8);
  EXPECT_EQ(choice.path, FramePath::kCpu);
  EXPECT_EQ(choice.fallback_reason, "");
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(FramePath, SessionOnTheCpuPublishesBytesLazilyDecoded) {
  vk::ContextOptions options;
  options.validation = true;
  vk::Context context(options);
  wc::testing::register_full_history_policy();
  auto session = rollout::Session::create(wc::testing::tiny_config(), "", "test_full_history",
                                          nlohmann::json::object(), 5, at::kCPU);
  session->set_host_frames(false);  // what the CUDA path sets; bytes are then made on demand
  HeadlessRenderer renderer(context, session->width(), session->height(), session->width(),
                            session->height());
  EXPECT_FALSE(publishes_device_frames(*session, renderer.sink()));
  EXPECT_FALSE(route_frames_to_device(*session, renderer.sink()));
  for (Action action : {Action::kRight, Action::kUp}) {
    session->step(action);
    publish_source_frame(*session, renderer.sink());
    EXPECT_EQ(shown(renderer), frame_of(*session));
  }
  EXPECT_THROW(device_frame_of(session->frame_on_device()), Error);  // not CUDA memory
  EXPECT_THROW(renderer.sink().publish_device(DeviceFrame{}, 0), Error);
  EXPECT_EQ(context.validation_errors(), 0u);
}

}  // namespace
}  // namespace wc::ui
