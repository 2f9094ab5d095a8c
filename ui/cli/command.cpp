// The subcommand registry behind command.h.
#include "ui/cli/command.h"

namespace wc::cli {
namespace {

std::vector<std::pair<std::string, CommandInstaller>>& commands() {
  static std::vector<std::pair<std::string, CommandInstaller>> list;
  return list;
}
int g_exit_code = 0;

}  // namespace

bool register_command(std::string name, CommandInstaller install) {
  commands().emplace_back(std::move(name), std::move(install));
  return true;
}

const std::vector<std::pair<std::string, CommandInstaller>>& registered_commands() {
  return commands();
}

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

}  // namespace wc::cli
