// `play --headless` as a whole run (Note [Headless records]): per-frame records land in
// frames.jsonl while the run goes, memory stays flat over 20 000 frames, run.json keeps the
// settings and the summary only, a folder
// that holds a run is refused before anything is written, and an output too large to render
// leaves no folder behind.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "tests/ui/test_pattern_source.h"
#include "ui/frames/headless_runner.h"

namespace wc::ui {
namespace {

namespace fs = std::filesystem;

// A unique folder under the system's temp folder, removed at the end.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("wc_headless_run_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The test pattern, calling `on_step` with the number of frames stepped so far.
class WatchedSource final : public FrameSource {
 public:
  WatchedSource(std::function<void(int)> on_step) : on_step_(std::move(on_step)) {}
  std::string name() const override { return inner_.name(); }
  int width() const override { return inner_.width(); }
  int height() const override { return inner_.height(); }
  void reset(uint64_t seed) override { inner_.reset(seed); }
  void step(Action action) override {
    on_step_(++steps_);
    inner_.step(action);
  }
  const uint8_t* rgba() const override { return inner_.rgba(); }
  uint64_t frame_index() const override { return inner_.frame_index(); }

 private:
  testing::TestPatternSource inner_{16, 16};
  std::function<void(int)> on_step_;
  int steps_ = 0;
};

HeadlessOptions options_for(const fs::path& dir, int frames) {
  HeadlessOptions options;
  options.frames = frames;
  options.out_dir = dir.string();
  options.png_every = 0;
  options.actions = {Action::kRight, Action::kUp, Action::kNone};
  return options;
}

TEST(HeadlessRun, RecordsEachFrameAsItGoes) {
  TempDir dir;
  constexpr int kFrames = 700;
  size_t lines_at_601 = 0;
  WatchedSource source([&](int step) {
    if (step == 601) lines_at_601 = lines_of(dir.path() / "frames.jsonl").size();
  });
  run_headless(options_for(dir.path(), kFrames), source);
  // Flushed every 256 frames: at least the first 512 records were on disk at frame 600.
  EXPECT_GE(lines_at_601, 512u);
  EXPECT_LT(lines_at_601, 601u);
  const std::vector<std::string> lines = lines_of(dir.path() / "frames.jsonl");
  ASSERT_EQ(lines.size(), static_cast<size_t>(kFrames));
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json record = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(record["index"].get<int>(), static_cast<int>(i));
    EXPECT_EQ(record["action"].get<int>(),
              i < 3 ? static_cast<int>(options_for({}, 1).actions[i]) : 0);
    EXPECT_EQ(record["source_frame"].get<int>(), static_cast<int>(i) + 1);
    EXPECT_GE(record["render_ms"].get<double>(), 0.0);
    // Frame 0 is always a picture; png_every 0 writes no other.
    EXPECT_EQ(record["file"].is_null(), i != 0);
  }
  std::ifstream run_file(dir.path() / "run.json");
  const nlohmann::json run = nlohmann::json::parse(run_file);
  EXPECT_EQ(run["frames"].get<int>(), kFrames);
  EXPECT_EQ(run["frames_file"].get<std::string>(), "frames.jsonl");
  EXPECT_EQ(run["summary"]["frames"].get<int>(), kFrames);
  EXPECT_TRUE(fs::exists(dir.path() / "frame_00000.png"));
  EXPECT_FALSE(fs::exists(dir.path() / "frame_00001.png"));
}

// Resident memory in bytes (Linux /proc).
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// A long run's memory stays flat: three floats a frame, not a JSON object (about 0.7 KB).
TEST(HeadlessRun, MemoryStaysFlatOverALongRun) {
  TempDir dir;
  constexpr int kFrom = 5000, kTo = 20000;
  int64_t at_from = 0, at_to = 0;
  WatchedSource source([&](int step) {
    if (step == kFrom) at_from = resident_bytes();
    if (step == kTo) at_to = resident_bytes();
  });
  run_headless(options_for(dir.path(), kTo), source);
  ASSERT_GT(at_from, 0);
  RecordProperty("grew_bytes", std::to_string(at_to - at_from));
  EXPECT_LT(at_to - at_from, int64_t{3} << 20)
      << "grew " << (at_to - at_from) << " bytes over " << (kTo - kFrom) << " frames";
  EXPECT_EQ(lines_of(dir.path() / "frames.jsonl").size(), static_cast<size_t>(kTo));
}

TEST(HeadlessRun, RefusesAFolderHoldingARun) {
  TempDir dir;
  testing::TestPatternSource source(16, 16);
  run_headless(options_for(dir.path(), 3), source);
  const auto before = fs::last_write_time(dir.path() / "run.json");
  const std::vector<std::string> records = lines_of(dir.path() / "frames.jsonl");
  try {
    run_headless(options_for(dir.path(), 5), source);
    FAIL() << "a second run into the same folder was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("already holds a run"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::last_write_time(dir.path() / "run.json"), before);
  EXPECT_EQ(lines_of(dir.path() / "frames.jsonl"), records);
  // A folder with other files in it is fine.
  TempDir other;
  fs::create_directories(other.path());
  std::ofstream(other.path() / "notes.txt") << "mine\n";
  run_headless(options_for(other.path(), 2), source);
  EXPECT_EQ(lines_of(other.path() / "frames.jsonl").size(), 2u);
  EXPECT_EQ(lines_of(other.path() / "notes.txt"), std::vector<std::string>{"mine"});
}

TEST(HeadlessRun, AnOutputTooLargeIsRefusedWithoutAFolder) {
  TempDir dir;
  testing::TestPatternSource source(16, 16);
  HeadlessOptions options = options_for(dir.path(), 2);
  options.scale = 1000000;
  try {
    run_headless(options, source);
    FAIL() << "a 16 000 000-pixel side was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--scale"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("16000000x16000000"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path()));
}

}  // namespace
}  // namespace wc::ui
