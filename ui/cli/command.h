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

// Note [Numeric options]: CLI11 reads "-1" into an unsigned option as 2^64 - 1 and "nan" or
// "inf" into a floating one as such, and both then pass every range an option checks. Every
// option of `app` and its subcommands whose type is UINT (or a list of them) takes digits only,
// and every FLOAT one a finite number; CLI11 reports a value that fails with the option's name.
void check_numeric_options(CLI::App& app);

// Every --json option of `app` and its subcommands names a file that can be written: not a
// folder, in a folder that exists and takes a new file. Checked when the command line is read,
// so a long run never ends unable to write its report.
void check_output_options(CLI::App& app);

// Exit code a subcommand's callback stores for main (0 when it never sets one).
void set_exit_code(int code);
int exit_code();

}  // namespace wc::cli
