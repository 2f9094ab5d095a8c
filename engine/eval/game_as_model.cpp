// See game_as_model.h.
#include "engine/eval/game_as_model.h"

#include <optional>

#include "engine/eval/reference_run.h"

namespace wc::eval {
namespace {

class GameAsModel : public FrameSource {
 public:
  GameAsModel(int width, int height, int seed_frames, uint64_t seed)
      : width_(width), height_(height), seed_frames_(seed_frames) {
    reset(seed);
  }
  std::string name() const override { return "game"; }
  int width() const override { return width_; }
  int height() const override { return height_; }
  void reset(uint64_t seed) override {
    run_.emplace(width_, height_, seed, seed_frames_);
    frames_ = 0;
  }
  void step(Action action) override {
    run_->step(action);
    ++frames_;
  }
  const uint8_t* rgba() const override { return run_->game().frame().data(); }
  uint64_t frame_index() const override { return frames_; }

 private:
  int width_, height_, seed_frames_;
  std::optional<ReferenceRun> run_;
  uint64_t frames_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> make_game_as_model(int width, int height, int seed_frames,
                                                uint64_t seed) {
  return std::make_unique<GameAsModel>(width, height, seed_frames, seed);
}

}  // namespace wc::eval
