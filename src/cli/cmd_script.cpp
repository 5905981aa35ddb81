// uprof script: every event, in time order.
#include <boost/program_options.hpp>
#include <iostream>

#include "command.h"
#include "filter_options.h"
#include "uprof/analyse/duration_format.h"
#include "uprof/present/script_output.h"

namespace po = boost::program_options;

namespace uprof::cli {

int cmd_script(int argc, char** argv) {
  po::options_description opts(
      "usage: uprof script [FILE] [OPTIONS]\n\n"
      "One line per event in time order: time since the start, comm, pid/tid, function and values;\n"
      "on returns the return value and the call's duration. FILE defaults to uprof.data.\n"
      "--format json writes one JSON object per line; --format chrome a timeline for Perfetto UI.\n\n"
      "options");
  opts.add_options()("help,h", "show this help")(
      "input,i", po::value<std::string>()->default_value("uprof.data"), "data file")(
      "format", po::value<std::string>()->default_value("text"), "text, json or chrome");
  add_filter_options(opts);
  po::variables_map vm;
  if (auto done = parse_file_command(argc, argv, "script", opts, vm)) return *done;
  ScriptOptions so;
  std::string format = vm["format"].as<std::string>();
  if (format == "json") so.format = ScriptFormat::JsonLines;
  else if (format == "chrome") so.format = ScriptFormat::Chrome;
  else if (format != "text") return usage_error("script", "--format takes text, json or chrome");
  if (auto st = read_filter_options(vm, so.filter); !st) return usage_error("script", st.error().message);
  std::ios::sync_with_stdio(false);
  auto st = write_script(vm["input"].as<std::string>(), so, std::cout, std::cerr);
  std::cout.flush();
  if (!st) return fail(st.error().message);
  return 0;
}

}  // namespace uprof::cli
