// PNG plots through gnuplot (Debian gnuplot-nox), for the reports that draw one.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace wc {

// A gnuplot string literal: single-quoted, a quote inside doubled.
std::string gnuplot_quoted(const std::string& text);

// Writes `data` to a file in a fresh temporary folder, runs gnuplot on the script `script`
// makes for that file's path (gnuplot_quoted in it), and removes both. Returns why no plot was
// made ("no plot: ..."; gnuplot missing or failing), or nothing once gnuplot succeeded. Throws
// wc::Error when the temporary files cannot be written.
std::optional<std::string> run_gnuplot(
    const std::string& data,
    const std::function<std::string(const std::string& data_file)>& script);

}  // namespace wc
