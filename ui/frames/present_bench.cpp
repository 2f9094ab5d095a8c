// See present_bench.h. One Vulkan context for the whole run; per size, both paths present the
// same synthetic device frames through the real sinks, one frame at a time.
#include "ui/frames/present_bench.h"

#include <torch/cuda.h>

#include <cstring>
#include <memory>

#include "engine/core/error.h"
#include "engine/core/timing.h"
#include "engine/rollout/decode.h"
#include "ui/frames/frame_path.h"
#include "ui/frames/headless_renderer.h"
#include "ui/frames/source_publish.h"
#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"
#include "ui/vulkan/submit.h"

namespace wc::ui {
namespace {

// Records one sink upload into its own command buffer and waits for it: the frame is in the
// sampled image when this returns.
class UploadSubmitter {
 public:
  explicit UploadSubmitter(vk::Context& context) : context_(context) {
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = context.queue_family();
    vk::check(vkCreateCommandPool(context.device(), &pool, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    alloc.commandPool = pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    vk::check(vkAllocateCommandBuffers(context.device(), &alloc, &cmd_),
              "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    vk::check(vkCreateFence(context.device(), &fence, nullptr, &fence_), "vkCreateFence");
  }
  ~UploadSubmitter() {
    vkDeviceWaitIdle(context_.device());
    vkDestroyFence(context_.device(), fence_, nullptr);
    vkDestroyCommandPool(context_.device(), pool_, nullptr);
  }
  UploadSubmitter(const UploadSubmitter&) = delete;
  UploadSubmitter& operator=(const UploadSubmitter&) = delete;

  void upload(FrameSink& sink) {
    vk::check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk::check(vkBeginCommandBuffer(cmd_, &begin), "vkBeginCommandBuffer");
    vk::SubmitSync sync;
    if (!sink.record_upload(cmd_, &sync)) throw Error("bench present", "no new frame to upload");
    vk::check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    vk::submit(context_.queue(), cmd_, sync, fence_);
    vk::check(vkWaitForFences(context_.device(), 1, &fence_, VK_TRUE, UINT64_MAX),
              "vkWaitForFences");
    vk::check(vkResetFences(context_.device(), 1, &fence_), "vkResetFences");
  }

 private:
  vk::Context& context_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
};

void sync_device(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

PresentBenchRow measure(vk::Context& context, FramePath path, std::unique_ptr<FrameSink> sink,
                        const std::vector<at::Tensor>& frames, const PresentBenchOptions& options,
                        FrameSize2D size) {
  HeadlessRenderer renderer(context, std::move(sink), size.width, size.height);
  FrameSink& target = renderer.sink();
  UploadSubmitter submitter(context);
  PresentBenchRow row;
  row.path = frame_path_name(path);
  row.size = size;
  row.frames = options.frames;
  row.device_to_host = path == FramePath::kCpu && options.device.is_cuda();
  std::vector<double> publish_ms, present_ms;
  const int total = options.warmup + options.frames;
  for (int i = 0; i < total; ++i) {
    const at::Tensor& frame = frames[static_cast<size_t>(i) % frames.size()];
    sync_device(options.device);  // the frame is complete: presentation starts now
    Stopwatch watch;
    if (path == FramePath::kCuda) {
      target.publish_device(device_frame_of(frame), static_cast<uint64_t>(i));
    } else {
      const at::Tensor rgba = rollout::decode_rgba(frame.unsqueeze(0));  // on the host
      target.publish(rgba.data_ptr<uint8_t>(), static_cast<uint64_t>(i));
    }
    const double published = watch.elapsed_ms();
    submitter.upload(target);
    const double presented = watch.elapsed_ms();
    if (i >= options.warmup) {
      publish_ms.push_back(published);
      present_ms.push_back(presented);
    }
  }
  row.publish_ms_p50 = median(publish_ms);
  row.publish_ms_p99 = percentile(publish_ms, 99.0);
  row.present_ms_p50 = median(present_ms);
  row.present_ms_p99 = percentile(present_ms, 99.0);

  // The image now holds the last frame: draw it 1:1 and compare with the reference decode.
  const at::Tensor& last = frames[static_cast<size_t>(total - 1) % frames.size()];
  const at::Tensor expected = rollout::decode_rgba(last.unsqueeze(0));
  const uint8_t* pixels = renderer.render(PresentSettings{});
  row.pixels_match =
      std::memcmp(pixels, expected.data_ptr<uint8_t>(), static_cast<size_t>(expected.numel())) == 0;
  return row;
}

}  // namespace

PresentBenchReport run_present_bench(const PresentBenchOptions& options,
                                     const std::function<void(const PresentBenchRow&)>& on_row) {
  if (options.sizes.empty()) throw Error("bench present", "no frame sizes given");
  if (options.frames < 1 || options.warmup < 0) {
    throw Error("bench present", "--frames must be >= 1 and --warmup >= 0");
  }
  if (options.dtype != at::kBFloat16 && options.dtype != at::kFloat) {
    throw Error("bench present", "frames must be bf16 or f32");
  }
  const bool cuda = options.device.is_cuda();
  const int cuda_device = cuda && options.device.has_index() ? options.device.index() : 0;
  vk::ContextOptions context_options;
  context_options.validation = options.validate;
  configure_context(cuda ? FramePath::kCuda : FramePath::kCpu, cuda_device, &context_options);
  vk::Context context(context_options);

  PresentBenchReport report;
  report.vulkan_device = context.device_name();
  if (!cuda)
    report.cuda_unavailable = "the frames are on the CPU (the CUDA path needs --device cuda)";
  const at::Device device = cuda ? at::Device(at::kCUDA, cuda_device) : at::Device(at::kCPU);
  for (const FrameSize2D& size : options.sizes) {
    if (size.width <= 0 || size.height <= 0) throw Error("bench present", "bad frame size");
    // A few different frames (never zeros, past the clamp range too), made before timing.
    at::manual_seed(7);
    std::vector<at::Tensor> frames;
    for (int k = 0; k < 4; ++k) {
      frames.push_back(
          (at::rand({3, size.height, size.width}, at::TensorOptions().device(device)) * 2.2 - 1.1)
              .to(options.dtype));
    }
    for (FramePath path : {FramePath::kCuda, FramePath::kCpu}) {
      if (path == FramePath::kCuda && !cuda) continue;
      FrameSinkChoice choice = make_frame_sink(path, context, size.width, size.height, cuda_device);
      if (choice.path != path) {
        report.cuda_unavailable = choice.fallback_reason;
        continue;
      }
      report.rows.push_back(measure(context, path, std::move(choice.sink), frames, options, size));
      if (on_row) on_row(report.rows.back());
    }
  }
  if (options.validate && context.validation_errors() > 0) {
    throw Error("bench present", std::to_string(context.validation_errors()) +
                                     " Vulkan validation errors (see the log)");
  }
  return report;
}

nlohmann::json present_bench_json(const PresentBenchOptions& options,
                                  const PresentBenchReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const PresentBenchRow& row : report.rows) {
    rows.push_back({{"path", row.path},
                    {"width", row.size.width},
                    {"height", row.size.height},
                    {"frames", row.frames},
                    {"publish_ms_p50", row.publish_ms_p50},
                    {"publish_ms_p99", row.publish_ms_p99},
                    {"present_ms_p50", row.present_ms_p50},
                    {"present_ms_p99", row.present_ms_p99},
                    {"device_to_host", row.device_to_host},
                    {"pixels_match", row.pixels_match}});
  }
  return {{"bench", "present"},
          {"vulkan_device", report.vulkan_device},
          {"frame_device", options.device.str()},
          {"dtype", options.dtype == at::kBFloat16 ? "bf16" : "f32"},
          {"warmup", options.warmup},
          {"cuda_unavailable", report.cuda_unavailable},
          {"paths",
           {{"cuda", "convert kernel into the imported slot; Vulkan waits on CUDA's timeline"},
            {"cpu",
             "decode_rgba where the frame is, RGBA8 copied to the host, memcpy into the staging "
             "slot, upload"}}},
          {"rows", rows}};
}

}  // namespace wc::ui
