// The subcommands. Each lives in its own cmd_*.cpp and only wires the pipeline's
// parts together. Errors end here, not in main(): a command prints an Error as the one
// line "uprof: MESSAGE" through fail() and returns the exit status (1, or the Error's
// own exit_status), which main() returns as it is.
#pragma once

#include <span>
#include <string_view>

namespace uprof::cli {

// A command returns its exit status; errors are printed as "uprof: <message>" by the command itself
// through fail().
struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);  // argv[0] is the command name
};

std::span<const Command> commands();

// Prints "uprof: MESSAGE" to stderr and returns the exit status for a failed command.
int fail(std::string_view message);
// The same for a usage error (exit status 2), with a hint to --help.
int usage_error(std::string_view command, std::string_view message);

int cmd_probe(int argc, char** argv);
int cmd_record(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_diff(int argc, char** argv);
int cmd_script(int argc, char** argv);
int cmd_bench(int argc, char** argv);

}  // namespace uprof::cli
