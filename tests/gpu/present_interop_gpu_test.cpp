// The CUDA frame path on the GPU machine, headless (offscreen target + readback), with the
// validation layer: the convert kernel against decode_rgba, the Session's frames through the
// CUDA path against the CPU path for the same seed and actions, and the two-way semaphore
// ordering under load (producer far ahead of the display, and behind it on the GPU).
// Built only with WORLDCAST_CUDA; skipped without a CUDA device.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/rollout/decode.h"
#include "engine/rollout/session.h"
#include "engine/rollout/session_state.h"
#include "ui/frames/cpu_frame_sink.h"
#include "ui/frames/cuda_frame_sink.h"
#include "ui/frames/frame_path.h"
#include "ui/frames/headless_renderer.h"
#include "ui/frames/source_publish.h"
#include "ui/vulkan/context.h"

namespace wc::ui {
namespace {

#define REQUIRE_CUDA()                                               \
  if (!torch::cuda::is_available()) {                                \
    GTEST_SKIP() << "no CUDA device on this machine (CPU LibTorch)"; \
  }

vk::Context make_context() {
  vk::ContextOptions options;
  options.validation = true;  // any validation error fails the test
  configure_context(FramePath::kCuda, 0, &options);
  return vk::Context(options);
}

std::unique_ptr<FrameSink> cuda_sink(vk::Context& context, int width, int height) {
  FrameSinkChoice choice = make_frame_sink(FramePath::kCuda, context, width, height, 0);
  EXPECT_EQ(choice.path, FramePath::kCuda) << choice.fallback_reason;
  return std::move(choice.sink);
}

std::vector<uint8_t> bytes_of(const at::Tensor& rgba) {
  const at::Tensor cpu = rgba.to(at::kCPU).contiguous();
  return std::vector<uint8_t>(cpu.data_ptr<uint8_t>(), cpu.data_ptr<uint8_t>() + cpu.numel());
}

std::vector<uint8_t> shown(HeadlessRenderer& renderer) {
  const uint8_t* pixels = renderer.render(PresentSettings{});
  return std::vector<uint8_t>(
      pixels, pixels + static_cast<size_t>(renderer.target_width()) * renderer.target_height() * 4);
}

size_t mismatches(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return std::max(a.size(), b.size());
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

TEST(CudaFramePath, ConvertKernelMatchesDecodeRgba) {
  REQUIRE_CUDA();
  vk::Context context = make_context();
  constexpr int kW = 67, kH = 45;  // not multiples of the 32x8 thread block
  HeadlessRenderer renderer(context, cuda_sink(context, kW, kH), kW, kH);
  ASSERT_TRUE(renderer.sink().accepts_device_frames());
  at::manual_seed(5);
  // Values past the clamp, and exact .5 ties of the quantiser ((k + 0.5) / 127.5 - 1).
  at::Tensor values = at::rand({3, kH, kW}, at::kCUDA) * 2.4 - 1.2;
  const at::Tensor ties =
      (at::randint(0, 255, {kH, kW}, at::kCUDA).to(at::kFloat) + 0.5) / 127.5 - 1;
  values.select(0, 1).copy_(ties);
  uint64_t index = 0;
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const at::Tensor frame = values.to(dtype);
    renderer.sink().publish_device(device_frame_of(frame), ++index);
    EXPECT_EQ(mismatches(shown(renderer), bytes_of(rollout::decode_rgba(frame.unsqueeze(0)))), 0u)
        << dtype;
    // Strided: every other column of a wider frame (column stride 2).
    const at::Tensor wide = at::rand({3, kH, 2 * kW}, at::kCUDA).to(dtype) * 2 - 1;
    const at::Tensor strided = wide.slice(2, 0, 2 * kW, 2);
    ASSERT_EQ(strided.stride(2), 2);
    renderer.sink().publish_device(device_frame_of(strided), ++index);
    EXPECT_EQ(mismatches(shown(renderer), bytes_of(rollout::decode_rgba(strided.unsqueeze(0)))), 0u)
        << dtype << " strided";
  }
  // Host bytes take the same ring (the reference game on this path).
  std::vector<uint8_t> host(static_cast<size_t>(kW) * kH * 4);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>(i * 13);
  renderer.sink().publish(host.data(), ++index);
  EXPECT_EQ(mismatches(shown(renderer), host), 0u);
  EXPECT_EQ(renderer.sink().shown_frame_index(), index);
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(CudaFramePath, SessionFramesArePixelIdenticalToTheCpuPath) {
  REQUIRE_CUDA();
  const model::ModelConfig config = model::load_model_config(std::string(WORLDCAST_SOURCE_DIR) +
                                                             "/assets/configs/game-small.json");
  auto session = rollout::Session::create(config, "", "dense", nlohmann::json::object(), 21,
                                          at::Device(at::kCUDA, 0));
  const int w = session->width(), h = session->height();
  vk::Context context = make_context();
  HeadlessRenderer cuda(context, cuda_sink(context, w, h), w, h);
  HeadlessRenderer cpu(context, std::make_unique<CpuFrameSink>(context, w, h), w, h);
  // The CUDA path needs no host copy (host frames off); the CPU path makes one on demand.
  ASSERT_TRUE(route_frames_to_device(*session, cuda.sink()));
  ASSERT_FALSE(publishes_device_frames(*session, cpu.sink()));

  const std::vector<Action> script = {Action::kNone, Action::kRight, Action::kRight, Action::kUp,
                                      Action::kLeft, Action::kDown,  Action::kNone,  Action::kUp};
  for (size_t i = 0; i < 2 * script.size(); ++i) {
    if (i > 0) session->step(script[i % script.size()]);
    publish_source_frame(*session, cuda.sink());  // device route: the kernel, no host copy
    if (i > 0) {  // (the seed frame was decoded at creation, before host frames were turned off)
      EXPECT_EQ(session->stats().decode_ms, 0.0) << "frame " << i << " was decoded on the host";
    }
    publish_source_frame(*session, cpu.sink());  // bytes route: host copy + decode_rgba
    const std::vector<uint8_t> a = shown(cuda), b = shown(cpu);
    EXPECT_EQ(mismatches(a, b), 0u) << "frame " << i;
    EXPECT_EQ(cuda.sink().shown_frame_index(), session->frame_index());
  }
  // The block hash computed on the device equals the hash of the host copy.
  EXPECT_EQ(rollout::hash_block(session->last_block_on_device()),
            rollout::hash_block(session->last_block()));
  EXPECT_EQ(context.validation_errors(), 0u);
}

// Frame i carries i in R, G, B (low to high byte) in every pixel: a torn or stale copy shows.
at::Tensor frame_carrying(uint64_t i, int w, int h) {
  at::Tensor frame = at::empty({3, h, w}, at::TensorOptions().device(at::kCUDA));
  for (int c = 0; c < 3; ++c) {
    frame.select(0, c).fill_(static_cast<double>((i >> (8 * c)) & 255) / 127.5 - 1.0);
  }
  return frame;
}

struct Check {
  uint64_t renders = 0, torn = 0, wrong = 0, backwards = 0, last = 0;
};

void check_render(HeadlessRenderer& renderer, Check* check) {
  const uint8_t* pixels = renderer.render(PresentSettings{});
  const uint64_t index = renderer.sink().shown_frame_index();
  if (index == UINT64_MAX) return;
  ++check->renders;
  if (index < check->last) ++check->backwards;
  check->last = index;
  const size_t n = static_cast<size_t>(renderer.target_width()) * renderer.target_height();
  const auto rgb = [](const uint8_t* px) {
    return static_cast<uint32_t>(px[0] | (px[1] << 8) | (px[2] << 16));
  };
  const uint32_t first = rgb(pixels);
  if (first != (index & 0xffffff)) ++check->wrong;
  for (size_t p = 0; p < n; ++p) {
    if (rgb(pixels + 4 * p) != first) {
      ++check->torn;
      break;
    }
  }
}

// The producer publishes as fast as it can while the display is slow: CUDA must wait (on the
// GPU) for the renderer's copies before reusing a slot, or a copy reads a half-written frame.
TEST(CudaFramePath, ProducerFarAheadOfTheDisplayNeverTearsAFrame) {
  REQUIRE_CUDA();
  constexpr int kW = 1280, kH = 720;
  vk::Context context = make_context();
  HeadlessRenderer renderer(context, cuda_sink(context, kW, kH), kW, kH);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> published{0};
  std::thread producer([&] {
    c10::cuda::CUDAStreamGuard guard(at::cuda::getStreamFromPool(false, 0));
    for (uint64_t i = 1; !stop.load(); ++i) {
      const at::Tensor frame = frame_carrying(i, kW, kH);
      renderer.sink().publish_device(device_frame_of(frame), i);
      published.store(i);
    }
    at::cuda::getCurrentCUDAStream().synchronize();
  });
  Check check;
  for (int n = 0; n < 60; ++n) {
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
    check_render(renderer, &check);
  }
  stop.store(true);
  producer.join();
  EXPECT_GT(published.load(), 60u) << "the producer should outrun the display";
  EXPECT_GT(check.renders, 30u);
  EXPECT_EQ(check.torn, 0u);
  EXPECT_EQ(check.wrong, 0u);
  EXPECT_EQ(check.backwards, 0u);
  EXPECT_EQ(context.validation_errors(), 0u);
}

// The producer's frames are computed late on the GPU (long work queued before each one) while
// publish returns at once: the renderer's copy must wait for CUDA's signal, or it reads a slot
// still holding an older frame (its pixels then disagree with shown_frame_index).
TEST(CudaFramePath, ProducerBehindOnTheGpuMakesTheCopyWait) {
  REQUIRE_CUDA();
  constexpr int kW = 640, kH = 360;
  vk::Context context = make_context();
  HeadlessRenderer renderer(context, cuda_sink(context, kW, kH), kW, kH);
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    c10::cuda::CUDAStreamGuard guard(at::cuda::getStreamFromPool(false, 0));
    const at::Tensor a = at::randn({2048, 2048}, at::kCUDA);
    for (uint64_t i = 1; !stop.load() && i < 400; ++i) {
      at::Tensor busy = a;
      for (int k = 0; k < 6; ++k) busy = at::matmul(busy, a).tanh_();  // ~ms of GPU work
      // The frame depends on the busy work, so its values exist only once that work is done.
      const at::Tensor frame = frame_carrying(i, kW, kH) + busy.sum() * 0.0;
      renderer.sink().publish_device(device_frame_of(frame), i);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    at::cuda::getCurrentCUDAStream().synchronize();
  });
  // Render until 60 frames were shown: the producer thread's first frame can take a while
  // (CUDA and cuBLAS set-up), and renders before it show nothing.
  Check check;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (check.renders < 60 && std::chrono::steady_clock::now() < deadline) {
    check_render(renderer, &check);
  }
  stop.store(true);
  producer.join();
  EXPECT_GE(check.renders, 60u);
  EXPECT_EQ(check.torn, 0u);
  EXPECT_EQ(check.wrong, 0u);
  EXPECT_EQ(check.backwards, 0u);
  EXPECT_EQ(context.validation_errors(), 0u);
}

}  // namespace
}  // namespace wc::ui
