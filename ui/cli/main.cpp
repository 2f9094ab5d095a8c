// `worldcast`: the viewer and the command-line toolbox (play, bench, inspect, ...).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include <unistd.h>

#include "engine/core/cpu_features.h"
#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/core/printable.h"
#include "engine/core/torch_error.h"
#include "ui/cli/command.h"

int main(int argc, char** argv) {
  // Note [OpenBLAS kernels]: OpenBLAS reads its kernel family only when it loads, before main.
  const std::string kernels = wc::blas_kernels_to_ask_for();
  if (!kernels.empty()) {
    setenv("OPENBLAS_CORETYPE", kernels.c_str(), 1);
    execv("/proc/self/exe", argv);  // returns only when it fails
    wc::log_warning("OpenBLAS chose its ", wc::blas_kernels_in_use(),
                    " kernels on a CPU that runs its ", kernels,
                    " ones; set OPENBLAS_CORETYPE=", kernels, " for faster float32 products");
  }
  CLI::App app{"worldcast: play, inspect and benchmark neural worlds"};
  app.require_subcommand(1);
  auto commands = wc::cli::registered_commands();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [name, install] : commands) install(app);
  wc::cli::check_numeric_options(app);
  wc::cli::check_output_options(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const wc::Error& error) {
    const std::string shown = wc::printable_text(error.what());  // Note [Printable text]
    std::fprintf(stderr, "worldcast: %s\n", shown.c_str());
    return 1;
  } catch (const c10::Error& error) {
    // Note [LibTorch errors]: what failed, in one line, never LibTorch's backtrace.
    std::fprintf(stderr, "worldcast: LibTorch: %s\n", wc::torch_error_line(error).c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "worldcast: out of memory\n");
    return 2;
  } catch (const std::exception& error) {
    const std::string shown = wc::printable_text(error.what());
    std::fprintf(stderr, "worldcast: internal error: %s\n", shown.c_str());
    return 2;
  }
  return wc::cli::exit_code();
}
