// Subcommands of the `worldcast` program register themselves here, so each lives in its own file
// and main.cpp never changes when one is added. Programs stay thin: parse, call the engine, print.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace wc::cli {

// Adds one subcommand (with its options and callback) to the application. Callbacks report
// failure by throwing (wc::Error or CLI::Error); main turns that into a message and exit code.
using CommandInstaller = std::function<void(CLI::App& app)>;

// Returns true so it can initialise a namespace-scope constant (static registration).
bool register_command(std::string name, CommandInstaller install);
const std::vector<std::pair<std::string, CommandInstaller>>& registered_commands();

// Exit code a subcommand's callback stores for main (0 when it never sets one).
void set_exit_code(int code);
int exit_code();

}  // namespace wc::cli
