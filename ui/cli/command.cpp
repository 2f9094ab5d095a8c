// The subcommand registry and the numeric option checks behind command.h.
#include "ui/cli/command.h"

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

namespace wc::cli {
namespace {

std::vector<std::pair<std::string, CommandInstaller>>& commands() {
  static std::vector<std::pair<std::string, CommandInstaller>> list;
  return list;
}
int g_exit_code = 0;

// CLI11 names an option's type UINT, FLOAT, INT, TEXT ...; a list's is the element's.
bool type_is(const CLI::Option& option, const char* name) {
  return option.get_type_name() == name;
}

const CLI::Validator& unsigned_digits() {
  static const CLI::Validator validator(
      [](std::string& value) -> std::string {
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) {
          return "must be a whole number of 0 or more, got '" + value + "'";
        }
        const std::string max = "18446744073709551615";
        const size_t first = std::min(value.find_first_not_of('0'), value.size() - 1);
        const std::string digits = value.substr(first);
        if (digits.size() > max.size() || (digits.size() == max.size() && digits > max)) {
          return "must be at most " + max + ", got '" + value + "'";
        }
        return {};
      },
      "", "unsigned digits");
  return validator;
}

const CLI::Validator& finite_number() {
  static const CLI::Validator validator(
      [](std::string& value) -> std::string {
        char* end = nullptr;
        const double number = std::strtod(value.c_str(), &end);
        if (end != value.c_str() && *end == '\0' && !std::isfinite(number)) {
          return "must be a finite number, got '" + value + "'";
        }
        return {};  // a finite number, or not a number at all (CLI11's conversion reports it)
      },
      "", "finite number");
  return validator;
}

const CLI::Validator& writable_file() {
  static const CLI::Validator validator(
      [](std::string& value) -> std::string {
        namespace fs = std::filesystem;
        const fs::path path(value);
        std::error_code error;
        if (fs::is_directory(path, error)) return "'" + value + "' is a folder, not a file";
        const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
        if (!fs::is_directory(folder, error)) {
          return "folder '" + folder.string() + "' of '" + value + "' does not exist";
        }
        const fs::path probe = folder / (".worldcast-write-check-" + std::to_string(::getpid()));
        const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) {
          return "cannot write in folder '" + folder.string() + "': " + std::strerror(errno);
        }
        ::close(fd);
        ::unlink(probe.c_str());
        return {};
      },
      "", "writable file");
  return validator;
}

// Calls `visit` on every option of `app` and of its subcommands, at any depth.
void for_each_option(CLI::App& app, const std::function<void(CLI::Option&)>& visit) {
  for (CLI::Option* option : app.get_options()) visit(*option);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for_each_option(*sub, visit);
  }
}

}  // namespace

void check_output_options(CLI::App& app) {
  for_each_option(app, [](CLI::Option& option) {
    if (option.check_lname("json")) option.check(writable_file());
  });
}

void check_numeric_options(CLI::App& app) {
  for_each_option(app, [](CLI::Option& option) {
    if (type_is(option, "UINT")) option.check(unsigned_digits());
    if (type_is(option, "FLOAT")) option.check(finite_number());
  });
}

bool register_command(std::string name, CommandInstaller install) {
  commands().emplace_back(std::move(name), std::move(install));
  return true;
}

const std::vector<std::pair<std::string, CommandInstaller>>& registered_commands() {
  return commands();
}

void set_exit_code(int code) {
  g_exit_code = code;
}
int exit_code() {
  return g_exit_code;
}

}  // namespace wc::cli
