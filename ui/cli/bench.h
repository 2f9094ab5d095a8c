// The `worldcast bench` command group: one `bench` subcommand that benchmark files extend with
// children (`bench game`, `bench attention`, ...), each registered from its own file.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace wc::cli {

// Adds the child subcommand `name` (its options and callback) to the `bench` group it is given:
// `install(bench)` is expected to call `bench.add_subcommand(name, ...)`.
using BenchInstaller = std::function<void(CLI::App& bench)>;

// Returns true so it can initialise a namespace-scope constant (static registration), like
// register_command. Children are installed in name order.
bool register_bench(std::string name, BenchInstaller install);

}  // namespace wc::cli
