// uprof diff: two recordings compared per function, with a verdict on noise.
#include <boost/program_options.hpp>
#include <iostream>

#include "command.h"
#include "filter_options.h"
#include "output_file.h"
#include "uprof/analyse/diff_model.h"
#include "uprof/present/diff_formats.h"

namespace po = boost::program_options;

namespace uprof::cli {

namespace {

// What --fail-above exits with when a function got slower: not 1 (an error: a file
// that does not read) nor 2 (a usage error), so that CI can tell "slower" from "broken".
constexpr int kExitRegression = 3;

}  // namespace

int cmd_diff(int argc, char** argv) {
  po::options_description opts(
      "usage: uprof diff A.data B.data [OPTIONS]\n\n"
      "Per function (matched by name): calls, p50, p90, p99 and max in A and in B, and B/A, with a verdict on\n"
      "each shift: slower or faster beyond noise (a confidence interval on B/A from order statistics), or not.\n"
      "Exit status: 0, or 3 with --fail-above when a function got slower by more than PCT; 1 on errors.\n\n"
      "options");
  opts.add_options()("help,h", "show this help")(
      "format", po::value<std::string>()->default_value("text"), "text, json or html")(
      "output,o", po::value<std::string>(), "write to FILE instead of standard output")(
      "by", po::value<std::string>(), "split each function by a captured value (e.g. %di), matched by value")(
      "by-thread", "split each function by thread, matched by thread name")(
      "by-caller", "split each function by its caller (record -g), matched by the caller's name; so does --by caller")(
      "confidence", po::value<double>()->default_value(99), "of the interval on B/A, in percent (50 to 99.99)")(
      "min-shift", po::value<double>()->default_value(5),
      "PCT: shifts within +-PCT% are within noise however sure (run-to-run noise one recording cannot show)")(
      "fail-above", po::value<double>(),
      "PCT: exit 3 when a function's p50 or p99 got slower beyond noise by more than PCT% (for CI)");
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm;
  if (auto done = parse_command(argc, argv, "diff", opts, hidden, pos, vm)) return *done;
  const auto files = vm.count("files") ? vm["files"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (files.size() != 2) return usage_error("diff", "takes two data files, A and B");

  DiffOptions o;
  if (vm.count("by-caller")) o.by = GroupBy::Caller;
  else if (vm.count("by-thread")) o.by = GroupBy::Thread;
  if (vm.count("by")) o.by_value = vm["by"].as<std::string>();
  const double confidence = vm["confidence"].as<double>();
  if (!(confidence >= 50 && confidence <= 99.99)) return usage_error("diff", "--confidence takes 50 to 99.99 (percent)");
  o.shift.confidence = confidence / 100;
  const double min_shift = vm["min-shift"].as<double>();
  if (!(min_shift >= 0 && min_shift <= 1000)) return usage_error("diff", "--min-shift takes 0 to 1000 (percent)");
  o.shift.min_shift = min_shift / 100;
  std::optional<double> fail_above;
  if (vm.count("fail-above")) {
    fail_above = vm["fail-above"].as<double>();
    if (!(*fail_above >= 0 && *fail_above <= 100000)) return usage_error("diff", "--fail-above takes a percentage, 0 or more");
  }
  const std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json" && format != "html")
    return usage_error("diff", "--format takes text, json or html");
  // A bad -o fails before the files are read.
  auto file = OutputFile::open("diff", vm.count("output") ? vm["output"].as<std::string>() : "");
  if (!file) return fail(file.error().message);

  auto d = build_diff(files[0], files[1], o);
  if (!d) return fail(d.error().message);
  const std::string text = format == "json"   ? render_json_diff(*d, fail_above)
                           : format == "html" ? render_html_diff(*d, fail_above)
                                              : render_text_diff(*d);
  if (auto st = file->write(text); !st) return fail(st.error().message);

  if (!fail_above) return 0;
  const auto slower = regressions(*d, *fail_above);
  for (const Regression& r : slower) std::cerr << "uprof: diff: " << regression_text(*d, r, *fail_above) << "\n";
  return slower.empty() ? 0 : kExitRegression;
}

}  // namespace uprof::cli
