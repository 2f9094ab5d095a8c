// The action-script format: what it accepts, what it rejects (with the right line), round trips.
#include "engine/game/action_script.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace wc::game {
namespace {

using A = Action;

std::string error_of(const std::string& text) {
  try {
    parse_action_script(text, "s.txt");
  } catch (const ActionScriptError& error) {
    return error.what();
  }
  return "(no error)";
}

// The message starts "s.txt:LINE: " and mentions `detail`.
void expect_error(const std::string& text, int line, const std::string& detail) {
  const std::string message = error_of(text);
  const std::string prefix = "s.txt:" + std::to_string(line) + ": ";
  EXPECT_EQ(message.rfind(prefix, 0), 0u)
      << "message: " << message << "\nexpected prefix: " << prefix;
  EXPECT_NE(message.find(detail), std::string::npos) << "message: " << message;
}

TEST(ActionScript, ParsesActionsAndCounts) {
  EXPECT_EQ(parse_action_script("right 3\nup\nnone 2\n", "s"),
            (std::vector<A>{A::kRight, A::kRight, A::kRight, A::kUp, A::kNone, A::kNone}));
  EXPECT_EQ(parse_action_script("LEFT 1\nd", "s"), (std::vector<A>{A::kLeft, A::kDown}));
  EXPECT_EQ(parse_action_script("right 1000000\n", "s").size(), 1000000u);
}

TEST(ActionScript, IgnoresCommentsBlankLinesAndSpacing) {
  const std::string text =
      "# a replay\n"
      "\n"
      "   \t\n"
      "  up   2   # walk up\n"
      "left#no space before the comment\n"
      "\tdown\t1\r\n"
      "# the end";
  EXPECT_EQ(parse_action_script(text, "s"), (std::vector<A>{A::kUp, A::kUp, A::kLeft, A::kDown}));
  EXPECT_TRUE(parse_action_script("", "s").empty());
  EXPECT_TRUE(parse_action_script("# only a comment\n\n", "s").empty());
  EXPECT_EQ(parse_action_script("\xEF\xBB\xBFup\n", "s"), (std::vector<A>{A::kUp}));
  // UTF-8 text is fine in comments.
  EXPECT_EQ(parse_action_script("up # \xC3\xA9t\xC3\xA9 \xE2\x86\x91\n", "s"),
            (std::vector<A>{A::kUp}));
}

TEST(ActionScript, RejectsUnknownActionsWithTheLine) {
  expect_error("up\n\njump 2\n", 3, "unknown action 'jump'");
  expect_error("# c\nupp\n", 2, "unknown action 'upp'");
  expect_error("3 right\n", 1, "unknown action '3'");
}

TEST(ActionScript, RejectsBadCountsWithTheLine) {
  expect_error("up 0\n", 1, "at least 1");
  expect_error("up\nup -3\n", 2, "'-3'");
  expect_error("up +3\n", 1, "'+3'");
  expect_error("up 2x\n", 1, "'2x'");
  expect_error("up 1.5\n", 1, "'1.5'");
  expect_error("up\nup\nup 1000001\n", 3, "larger than 1000000");
  expect_error("up 99999999999999999999999999\n", 1, "larger than 1000000");
  expect_error("up 18446744073709551617\n", 1, "larger than 1000000");
}

TEST(ActionScript, RejectsExtraTokensWithTheLine) {
  expect_error("up 2 3\n", 1, "unexpected '3'");
  expect_error("\n\n\n\nright 2 # ok\nleft 1 left\n", 6, "unexpected 'left'");
}

TEST(ActionScript, RejectsBadBytesWithTheLine) {
  expect_error(std::string("up\nri\0ght\n", 10), 2, "NUL");
  expect_error("up\nup\nup \xFF\n", 3, "UTF-8");
  expect_error("# \xC3\n", 1, "UTF-8");              // truncated sequence
  expect_error("# \xC0\xAF\n", 1, "UTF-8");          // overlong '/'
  expect_error("up\n# \xED\xA0\x80\n", 2, "UTF-8");  // a surrogate
  expect_error("# \xF4\x90\x80\x80\n", 1, "UTF-8");  // above U+10FFFF
}

// A token is shown with its control characters escaped and a long one cut short, so a hostile
// script cannot write terminal escape sequences or megabytes into the message.
TEST(ActionScript, ErrorsShowTokensWithoutControlCharacters) {
  const std::string message = error_of("\x1B[2J\x1B]0;pwned\x07\n");
  EXPECT_NE(message.find("unknown action '\\x1B[2J\\x1B]0;pwned\\x07'"), std::string::npos)
      << message;
  for (const char c : message) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7F) << int(c) << " in " << message;
  }
  expect_error("up \x7F\n", 1, "bad repeat count '\\x7F'");
  const std::string longer = error_of("right " + std::string(100000, '9') + "x\n");
  EXPECT_LT(longer.size(), 200u) << longer;
  EXPECT_NE(longer.find("(100001 bytes)"), std::string::npos) << longer;
}

TEST(ActionScript, RejectsScriptsThatWouldNotFitInMemory) {
  std::string text;
  for (int i = 0; i < 11; ++i) text += "up 1000000\n";
  expect_error(text, 11, "longer than 10000000");
}

TEST(ActionScript, FormatAndParseRoundTrip) {
  std::vector<A> actions;
  for (int i = 0; i < 500; ++i) actions.push_back(static_cast<A>((i * i / 7) % kActionCount));
  actions.insert(actions.end(), 2500000, A::kRight);  // a run longer than one line may hold
  actions.push_back(A::kLeft);
  const std::string text = format_action_script(actions);
  EXPECT_EQ(parse_action_script(text, "s"), actions);
  EXPECT_NE(text.find("right 1000000\n"), std::string::npos);
  EXPECT_EQ(
      format_action_script({A::kUp, A::kUp, A::kDown}).substr(format_action_script({}).size()),
      "up 2\ndown\n");
  EXPECT_TRUE(parse_action_script(format_action_script({}), "s").empty());
}

class ActionScriptFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("wc_action_script_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  std::filesystem::path dir_;
};

TEST_F(ActionScriptFile, LoadsAFile) {
  const std::string path = write("ok.txt", "right 2\n# c\nup\n");
  EXPECT_EQ(load_action_script(path), (std::vector<A>{A::kRight, A::kRight, A::kUp}));
}

TEST_F(ActionScriptFile, ErrorsNameTheFileAndLine) {
  const std::string path = write("bad.txt", "right 2\nfly\n");
  try {
    load_action_script(path);
    FAIL() << "no error";
  } catch (const ActionScriptError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(path + ":2: ", 0), 0u) << error.what();
  }
}

TEST_F(ActionScriptFile, MissingFileIsAnError) {
  const std::string path = (dir_ / "missing.txt").string();
  try {
    load_action_script(path);
    FAIL() << "no error";
  } catch (const ActionScriptError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(path + ": ", 0), 0u) << error.what();
  }
  EXPECT_THROW(load_action_script(dir_.string()), ActionScriptError);  // a directory
}

}  // namespace
}  // namespace wc::game
