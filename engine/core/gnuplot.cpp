#include "engine/core/gnuplot.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "engine/core/error.h"

namespace wc {

std::string gnuplot_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::optional<std::string> run_gnuplot(
    const std::string& data,
    const std::function<std::string(const std::string& data_file)>& script) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    return "no plot: gnuplot not found (Debian package gnuplot-nox)";
  }
  char folder[] = "/tmp/worldcast-plot-XXXXXX";
  if (mkdtemp(folder) == nullptr) throw Error(folder, "cannot create a temporary folder");
  const std::string data_file = std::string(folder) + "/plot.dat";
  const std::string script_file = std::string(folder) + "/plot.gp";
  const auto clean = [&] {
    std::remove(data_file.c_str());
    std::remove(script_file.c_str());
    rmdir(folder);
  };
  std::string text;
  try {
    text = script(data_file);
  } catch (...) {
    rmdir(folder);
    throw;
  }
  {
    std::ofstream out(data_file);
    out << data;
    std::ofstream gp(script_file);
    gp << text;
    if (!out || !gp) {
      clean();
      throw Error(folder, "cannot write the plot's data or script");
    }
  }
  const std::string command = "gnuplot " + gnuplot_quoted(script_file) + " 2>&1";
  const int status = std::system(command.c_str());
  clean();
  if (status != 0) return "no plot: gnuplot failed (" + command + ")";
  return std::nullopt;
}

}  // namespace wc
