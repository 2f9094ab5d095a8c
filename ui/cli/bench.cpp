// The `bench` group: owns the one `bench` subcommand and installs the registered children.
#include "ui/cli/bench.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <utility>
#include <vector>

#include "ui/cli/command.h"

namespace wc::cli {
namespace {

// A function-local list: children register during static initialisation, in any file order.
std::vector<std::pair<std::string, BenchInstaller>>& benches() {
  static std::vector<std::pair<std::string, BenchInstaller>> list;
  return list;
}

const bool kRegistered = register_command("bench", [](CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Benchmarks: print a table, write JSON with --json");
  bench->require_subcommand(1);
  auto children = benches();
  std::sort(children.begin(), children.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [name, install] : children) install(*bench);
});

}  // namespace

bool register_bench(std::string name, BenchInstaller install) {
  benches().emplace_back(std::move(name), std::move(install));
  return true;
}

}  // namespace wc::cli
