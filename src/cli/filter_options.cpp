#include "filter_options.h"

#include <iostream>

#include "command.h"

#include "uprof/analyse/duration_format.h"

namespace po = boost::program_options;

namespace uprof::cli {

void add_filter_options(po::options_description& opts) {
  opts.add_options()("pid", po::value<std::vector<uint32_t>>()->composing(), "only these processes")(
      "tid", po::value<std::vector<uint32_t>>()->composing(), "only these threads")(
      "comm", po::value<std::vector<std::string>>()->composing(), "only threads with this name (glob)")(
      "function,f", po::value<std::vector<std::string>>()->composing(), "only these functions (glob)")(
      "since", po::value<std::string>(), "only what starts this long after the recording's start (e.g. 1.5s)")(
      "until", po::value<std::string>(), "only what starts before this long after the recording's start");
}

Status read_filter_options(const po::variables_map& vm, AggregateFilter& f) {
  if (vm.count("pid")) f.pids = vm["pid"].as<std::vector<uint32_t>>();
  if (vm.count("tid")) f.tids = vm["tid"].as<std::vector<uint32_t>>();
  if (vm.count("comm")) f.comms = vm["comm"].as<std::vector<std::string>>();
  if (vm.count("function")) f.functions = vm["function"].as<std::vector<std::string>>();
  for (const char* key : {"since", "until"}) {
    if (!vm.count(key)) continue;
    UPROF_ASSIGN(uint64_t d, parse_duration(vm[key].as<std::string>()));
    (std::string(key) == "since" ? f.since : f.until) = d;
  }
  return ok();
}

std::optional<int> parse_command(int argc, char** argv, std::string_view command, const po::options_description& opts,
                                 const po::options_description& hidden,
                                 const po::positional_options_description& positional, po::variables_map& vm) {
  po::options_description all;
  all.add(opts).add(hidden);
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(command, e.what());
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  return std::nullopt;
}

std::optional<int> parse_file_command(int argc, char** argv, std::string_view command,
                                      const po::options_description& opts, po::variables_map& vm) {
  po::positional_options_description pos;
  pos.add("input", 1);
  return parse_command(argc, argv, command, opts, po::options_description(), pos, vm);
}

}  // namespace uprof::cli
