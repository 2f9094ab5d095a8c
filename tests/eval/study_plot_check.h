// The check every study's plot passes in the tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace wc::testing {

// `study`.plot() into a fresh temporary folder returns the PNG's path and writes a real image
// (gnuplot is one of the packages `./wc deps` installs); the folder is removed after.
template <class Study>
void expect_study_plot(const Study& study, const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("wc_plot_" + name + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string png = (dir / (name + ".png")).string();
  EXPECT_EQ(study.plot(png), png);
  if (std::filesystem::exists(png)) {
    EXPECT_GT(std::filesystem::file_size(png), 1000u);
  } else {
    ADD_FAILURE() << "no plot at " << png;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace wc::testing
