// Note [Interrupted replacement]: a folder replaced by replace_directory and stopped after each of
// its steps, or in the middle of its write, is made whole again by recover_directory (and by
// the next load or replacement), holding the old or the new contents and nothing beside it; a
// training state stopped between its renames resumes at the newer step, not at step 0. Note [Log
// after a resume]: the log a resumed run appends to holds each step once.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "engine/core/log.h"
#include "engine/train/train_loop.h"
#include "engine/train/train_state.h"
#include "tests/model/model_test_util.h"

namespace wc::train {
namespace {

namespace fs = std::filesystem;

struct Stopped : std::runtime_error {
  Stopped() : std::runtime_error("stopped") {}
};

class TrainStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wc_train_state_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Replaces `d` by a folder whose files say `version`; `stop_at` (1-4) stops after that step.
  static void replace(const std::string& d, int version, int stop_at = 0) {
    replace_directory(
        d,
        [&](const std::string& temporary) {
          for (const char* name : {"a", "b"}) {
            std::ofstream(fs::path(temporary) / name) << version;
          }
        },
        [&](int step) {
          if (step == stop_at) throw Stopped();
        });
  }
  static int version(const std::string& d) {
    int a = -1, b = -2;
    std::ifstream(fs::path(d) / "a") >> a;
    std::ifstream(fs::path(d) / "b") >> b;
    EXPECT_EQ(a, b) << d << " holds a mix";
    return a;
  }
  static void expect_nothing_beside(const std::string& d) {
    EXPECT_FALSE(fs::exists(d + ".tmp")) << d;
    EXPECT_FALSE(fs::exists(d + ".old")) << d;
  }
  fs::path dir_;
};

TEST_F(TrainStateTest, AReplacementStoppedAfterAnyStepRecoversWhole) {
  // Step 1 (written, nothing swapped): the old contents stay. From step 2 on the new ones win.
  const int expected[5] = {0, 1, 2, 2, 2};
  for (int stop_at = 1; stop_at <= 4; ++stop_at) {
    const std::string d = (dir_ / ("state" + std::to_string(stop_at))).string();
    replace(d, 1);
    EXPECT_THROW(replace(d, 2, stop_at), Stopped);
    EXPECT_EQ(recover_directory(d), stop_at != 4) << "stopped after step " << stop_at;
    EXPECT_EQ(version(d), expected[stop_at]) << "stopped after step " << stop_at;
    expect_nothing_beside(d);
    EXPECT_FALSE(recover_directory(d));
    // The next replacement recovers by itself too.
    EXPECT_THROW(replace(d, 3, stop_at), Stopped);
    replace(d, 4);
    EXPECT_EQ(version(d), 4);
    expect_nothing_beside(d);
  }
}

// The same stops as a kill makes them: a child process replacing the folder is killed
// (SIGKILL: no unwinding, no destructors, files left as they lie) right after each step; the
// parent recovers the folder, says so in the log, and the next replacement goes through.
TEST_F(TrainStateTest, AReplacementKilledAfterAnyStepRecoversWhole) {
  const int expected[5] = {0, 1, 2, 2, 2};
  for (int kill_at = 1; kill_at <= 4; ++kill_at) {
    const std::string d = (dir_ / ("killed" + std::to_string(kill_at))).string();
    replace(d, 1);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      replace_directory(
          d,
          [](const std::string& temporary) {
            for (const char* name : {"a", "b"}) std::ofstream(fs::path(temporary) / name) << 2;
          },
          [&](int step) {
            if (step == kill_at) raise(SIGKILL);
          });
      _exit(0);  // not reached: the swap has four steps
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "killed after " << kill_at;
    std::vector<std::string> said;
    set_log_sink([&](LogLevel, const std::string& message) { said.push_back(message); });
    const bool recovered = recover_directory(d);
    set_log_sink(nullptr);
    EXPECT_EQ(recovered, kill_at != 4) << "killed after step " << kill_at;
    EXPECT_EQ(said.empty(), !recovered) << "killed after step " << kill_at;
    for (const std::string& line : said) EXPECT_NE(line.find(d), std::string::npos) << line;
    EXPECT_EQ(version(d), expected[kill_at]) << "killed after step " << kill_at;
    expect_nothing_beside(d);
    replace(d, 3);
    EXPECT_EQ(version(d), 3);
  }
}

TEST_F(TrainStateTest, AReplacementStoppedInItsWriteKeepsTheOldContents) {
  const std::string d = (dir_ / "state").string();
  replace(d, 1);
  EXPECT_THROW(replace_directory(d,
                                 [&](const std::string& temporary) {
                                   std::ofstream(fs::path(temporary) / "a") << 2;
                                   throw Stopped();  // "b" never written
                                 }),
               Stopped);
  EXPECT_TRUE(recover_directory(d));
  EXPECT_EQ(version(d), 1);
  expect_nothing_beside(d);
  // A first write stopped before it was in place leaves nothing, and nothing beside it.
  const std::string first = (dir_ / "first").string();
  EXPECT_THROW(replace(first, 1, 1), Stopped);
  EXPECT_TRUE(recover_directory(first));
  EXPECT_FALSE(fs::exists(first));
  expect_nothing_beside(first);
  // Only the old copy left (a swap never leaves this, a person might): it goes back.
  replace(d, 5);
  fs::rename(d, d + ".old");
  EXPECT_TRUE(recover_directory(d));
  EXPECT_EQ(version(d), 5);
}

TEST_F(TrainStateTest, AStateStoppedBetweenItsRenamesResumesAtTheNewerStep) {
  model::CausalDiT model(testing::tiny_config());
  std::vector<at::Tensor> params = model->parameters();
  AdamW optimizer(params, AdamWSettings{});
  std::vector<at::Tensor> ema;
  for (const at::Tensor& p : params) ema.push_back(p.detach().clone());
  const std::string d = (dir_ / "state").string();
  save_train_state(d, *model, ema, optimizer, TrainProgress{10, 1.0}, "f32");
  // Lay the state out as the swap leaves it after step 2: D.old (step 10) and D.tmp (step 20).
  save_train_state(d + "_new", *model, ema, optimizer, TrainProgress{20, 2.0}, "f32");
  fs::rename(d, d + ".old");
  fs::rename(d + "_new", d + ".tmp");
  TrainProgress loaded;
  ASSERT_TRUE(load_train_state(d, *model, ema, optimizer, &loaded));
  EXPECT_EQ(loaded.step, 20);
  expect_nothing_beside(d);
}

// Note [Log after a resume]: lines past the resumed step, a torn last line and lines that are no
// step are dropped; the rest stay in order and the next lines append after them.
TEST_F(TrainStateTest, AResumedLogDropsTheStepsItsStateDoesNotHold) {
  const std::string path = (dir_ / "log.jsonl").string();
  {
    std::ofstream log(path);
    for (int step : {25, 50, 75, 100}) log << "{\"step\":" << step << ",\"loss\":1.5}\n";
    log << "not json\n{\"loss\":2}\n{\"step\":\"60\"}\n{\"step\":125,\"lo";  // torn
  }
  {
    std::ofstream log = open_training_log(path, 75);
    log << "{\"step\":100,\"loss\":0.5}\n";
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "{\"step\":25,\"loss\":1.5}");
  EXPECT_EQ(lines[2], "{\"step\":75,\"loss\":1.5}");
  EXPECT_EQ(lines[3], "{\"step\":100,\"loss\":0.5}");
  // A log that holds nothing past the step is left as it is; a missing one starts empty.
  const auto before = fs::last_write_time(path);
  open_training_log(path, 1000);
  EXPECT_EQ(fs::last_write_time(path), before);
  EXPECT_EQ(fs::file_size(path),
            lines[0].size() + lines[1].size() + lines[2].size() + lines[3].size() + 4);
  const std::string fresh = (dir_ / "fresh.jsonl").string();
  open_training_log(fresh, 0);
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_EQ(fs::file_size(fresh), 0u);
  // A log that is a folder is refused by name.
  fs::create_directories(dir_ / "folder.jsonl");
  try {
    open_training_log((dir_ / "folder.jsonl").string(), 0);
    ADD_FAILURE() << "a folder was opened as the log";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("folder.jsonl"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wc::train
