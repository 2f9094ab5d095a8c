// `worldcast`: the viewer and the command-line toolbox (play, bench, inspect, ...).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "engine/core/error.h"
#include "ui/cli/command.h"

int main(int argc, char** argv) {
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
    std::fprintf(stderr, "worldcast: %s\n", error.what());
    return 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "worldcast: internal error: %s\n", error.what());
    return 2;
  }
  return wc::cli::exit_code();
}
