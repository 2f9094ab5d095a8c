// The Session's frames where the model made them (the CUDA frame path's input) and the lazy host
// copy: with host frames off, every frame, block and saved state is the same as with them on,
// and the block hash needs no host copy yet equals the hash of the host copy.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "engine/rollout/decode.h"
#include "engine/rollout/session.h"
#include "engine/rollout/session_state.h"
#include "tests/model/model_test_util.h"

namespace wc::rollout {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Session> make_session(int frames_per_block) {
  testing::register_full_history_policy();
  SessionOptions options;
  options.seed_frames = frames_per_block;
  return Session::create(testing::tiny_config(frames_per_block), "", "test_full_history",
                         nlohmann::json::object(), 11, at::kCPU, options);
}

std::vector<uint8_t> frame_of(const Session& s) {
  return std::vector<uint8_t>(s.rgba(), s.rgba() + s.width() * s.height() * 4);
}

const std::vector<Action> kScript = {Action::kRight, Action::kUp,   Action::kUp,
                                     Action::kLeft,  Action::kNone, Action::kDown};

TEST(SessionDeviceFrames, LazyHostFramesEqualEagerOnes) {
  for (int f : {1, 2}) {
    auto eager = make_session(f);
    auto lazy = make_session(f);
    lazy->set_host_frames(false);
    for (Action a : kScript) {
      eager->step(a);
      lazy->step(a);
      // The device frame is the shown one; decoding it gives the bytes rgba() shows.
      const at::Tensor device_frame = lazy->frame_on_device();
      ASSERT_EQ(device_frame.sizes(), (at::IntArrayRef{3, 16, 16}));
      const at::Tensor decoded = decode_rgba(device_frame.unsqueeze(0));
      EXPECT_EQ(std::vector<uint8_t>(decoded.data_ptr<uint8_t>(),
                                     decoded.data_ptr<uint8_t>() + decoded.numel()),
                frame_of(*eager))
          << "F=" << f;
      EXPECT_EQ(frame_of(*lazy), frame_of(*eager)) << "F=" << f;
    }
    EXPECT_TRUE(at::equal(lazy->last_block(), eager->last_block()));
    EXPECT_TRUE(at::equal(lazy->last_block_on_device(), eager->last_block()));
  }
}

TEST(SessionDeviceFrames, NoHostCopyUntilAsked) {
  auto lazy = make_session(1);
  lazy->set_host_frames(false);
  lazy->step(Action::kRight);
  EXPECT_EQ(lazy->stats().decode_ms, 0.0);  // nothing decoded for this block yet
  (void)lazy->rgba();
  // Asking again decodes nothing new (the copy is kept until the next block).
  const double first = lazy->stats().decode_ms;
  (void)lazy->rgba();
  EXPECT_EQ(lazy->stats().decode_ms, first);
}

TEST(SessionDeviceFrames, SavedStateOfALazySessionReplaysInAnEagerOne) {
  const fs::path path = fs::temp_directory_path() / "wc_session_device_frames.wcs";
  auto lazy = make_session(1);
  lazy->set_host_frames(false);
  for (Action a : kScript) lazy->step(a);
  lazy->save_state(path.string());
  auto eager = make_session(1);
  eager->load_state(path.string());
  EXPECT_EQ(frame_of(*eager), frame_of(*lazy));
  EXPECT_EQ(eager->frame_index(), lazy->frame_index());
  fs::remove(path);
}

TEST(BlockHash, DependsOnEveryValueAndOnlyOnTheBits) {
  at::manual_seed(3);
  const at::Tensor block = at::randn({2, 3, 8, 8});
  EXPECT_EQ(hash_block(block), hash_block(block.clone()));
  EXPECT_EQ(block_hash(block).scalar_type(), at::kLong);
  EXPECT_EQ(block_hash(block).dim(), 0);
  // A non-contiguous view hashes its values, not its memory layout.
  const at::Tensor transposed = block.transpose(2, 3).contiguous().transpose(2, 3);
  EXPECT_EQ(hash_block(transposed), hash_block(block));
  // bfloat16 hashes as its exact float32 widening (what the host copy holds).
  const at::Tensor bf16 = block.to(at::kBFloat16);
  EXPECT_EQ(hash_block(bf16), hash_block(bf16.to(at::kFloat)));
  // One ulp anywhere, or two values swapped, changes it.
  for (int64_t i : {int64_t{0}, int64_t{77}, block.numel() - 1}) {
    at::Tensor nudged = block.clone();
    float* data = nudged.data_ptr<float>();
    data[i] = std::nextafter(data[i], 1e9f);
    EXPECT_NE(hash_block(nudged), hash_block(block)) << i;
  }
  at::Tensor swapped = block.clone();
  std::swap(swapped.data_ptr<float>()[3], swapped.data_ptr<float>()[4]);
  EXPECT_NE(hash_block(swapped), hash_block(block));
}

}  // namespace
}  // namespace wc::rollout
