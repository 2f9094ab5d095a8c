// run_gnuplot draws a PNG whose name holds a quote, cleans up its temporary files, and says why
// when gnuplot fails.
#include "engine/core/gnuplot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace wc {
namespace {

namespace fs = std::filesystem;

bool has_gnuplot() {
  return std::system("command -v gnuplot >/dev/null 2>&1") == 0;
}

TEST(Gnuplot, QuotesDoubleInsideSingleQuotes) {
  EXPECT_EQ(gnuplot_quoted("plain"), "'plain'");
  EXPECT_EQ(gnuplot_quoted("it's"), "'it''s'");
  EXPECT_EQ(gnuplot_quoted(""), "''");
}

TEST(Gnuplot, DrawsAPngAndRemovesItsTemporaryFiles) {
  if (!has_gnuplot()) GTEST_SKIP() << "gnuplot not installed (Debian gnuplot-nox)";
  const fs::path dir = fs::temp_directory_path() / ("wc_gnuplot_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string png = (dir / "it's a plot.png").string();
  std::string seen_data_file;
  const auto failed = run_gnuplot("0 1\n1 4\n2 9\n", [&](const std::string& data_file) {
    seen_data_file = data_file;
    return "set terminal pngcairo size 300,200\nset output " + gnuplot_quoted(png) + "\nplot " +
           gnuplot_quoted(data_file) + " using 1:2 with lines notitle\n";
  });
  ASSERT_FALSE(failed.has_value()) << *failed;
  EXPECT_GT(fs::file_size(png), 500u);
  ASSERT_FALSE(seen_data_file.empty());
  EXPECT_FALSE(fs::exists(seen_data_file));
  EXPECT_FALSE(fs::exists(fs::path(seen_data_file).parent_path()));
  fs::remove_all(dir);
}

TEST(Gnuplot, AFailingScriptIsReportedAndCleanedUp) {
  if (!has_gnuplot()) GTEST_SKIP() << "gnuplot not installed (Debian gnuplot-nox)";
  std::string seen_data_file;
  const auto failed = run_gnuplot("1 1\n", [&](const std::string& data_file) {
    seen_data_file = data_file;
    return std::string("this is not gnuplot\n");
  });
  ASSERT_TRUE(failed.has_value());
  EXPECT_NE(failed->find("gnuplot failed"), std::string::npos) << *failed;
  EXPECT_FALSE(fs::exists(fs::path(seen_data_file).parent_path()));
}

}  // namespace
}  // namespace wc
