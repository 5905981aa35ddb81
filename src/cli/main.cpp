// uprof: how often is a function called, with what arguments, and how long does it take.
#include <cstdio>
#include <iostream>
#include <string>

#include "command.h"
#include "uprof/util/self_exe.h"

namespace uprof::cli {

std::span<const Command> commands() {
  static const Command kCommands[] = {
      {"record", "run a program (or attach to one) with probes on; write uprof.data", cmd_record},
      {"report", "per-function calls, latency percentiles and histograms, values", cmd_report},
      {"diff", "compare two recordings per function: calls, p50/p90/p99/max, and whether each shift is beyond noise", cmd_diff},
      {"script", "every event in time order (text, JSON lines, or a Chrome/Perfetto timeline)", cmd_script},
      {"probe", "resolve probe specs to file offsets, or list a binary's functions", cmd_probe},
      {"bench", "measure what a probe hit costs on this kernel, per class of first instruction", cmd_bench},
  };
  return kCommands;
}

int fail(std::string_view message) {
  std::cerr << "uprof: " << message << "\n";
  return 1;
}

int usage_error(std::string_view command, std::string_view message) {
  std::cerr << "uprof " << command << ": " << message << " (see 'uprof " << command << " --help')\n";
  return 2;
}

namespace {

void print_usage(std::FILE* to) {
  std::fprintf(to,
               "uprof %s: a user-space function profiler on the kernel's uprobe PMU\n\n"
               "usage: uprof COMMAND [OPTIONS] [ARGS]\n"
               "       uprof COMMAND --help\n"
               "       uprof --version\n\n"
               "commands:\n",
               UPROF_VERSION);
  for (const auto& c : commands())
    std::fprintf(to, "  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
}

}  // namespace
}  // namespace uprof::cli

int main(int argc, char** argv) {
  using namespace uprof::cli;
  uprof::adopt_self_exe_from_env();
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(stdout);
    return 0;
  }
  if (first == "--version" || first == "-V") {
    std::printf("uprof %s\n", UPROF_VERSION);
    return 0;
  }
  for (const auto& c : commands())
    if (c.name == first) return c.run(argc - 1, argv + 1);
  std::fprintf(stderr, "uprof: unknown command '%s' (see 'uprof --help')\n", first.c_str());
  return 2;
}
