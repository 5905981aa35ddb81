// uprof report: per-function calls, latency percentiles and histograms, values.
#include <boost/program_options.hpp>
#include <iostream>

#include "command.h"
#include "filter_options.h"
#include "output_file.h"
#include "uprof/analyse/call_timeline.h"
#include "uprof/analyse/duration_format.h"
#include "uprof/analyse/report_model.h"
#include "uprof/present/folded_stacks.h"
#include "uprof/present/html_report.h"
#include "uprof/present/pprof_profile.h"
#include "uprof/present/report_formats.h"
#include "uprof/present/report_text.h"

namespace po = boost::program_options;

namespace uprof::cli {

int cmd_report(int argc, char** argv) {
  po::options_description opts(
      "usage: uprof report [FILE] [OPTIONS]\n\n"
      "Per probed function: calls, total, mean, min, p50, p90, p99, p99.9, max latency, unmatched entries,\n"
      "a latency histogram, and the captured values. FILE defaults to uprof.data.\n\n"
      "options");
  opts.add_options()("help,h", "show this help")(
      "input,i", po::value<std::string>()->default_value("uprof.data"), "data file")(
      "format", po::value<std::string>()->default_value("text"),
      "text, json, csv, html (one self-contained page of plots), folded (one line per call stack, for flame "
      "graphs; record -g) or pprof (gzipped profile.proto of the call stacks, with -o FILE)")(
      "weight", po::value<std::string>()->default_value("latency"),
      "what a stack's value is in --format folded: calls, latency (ns), on-cpu or off-cpu (ns; record --off-cpu)")(
      "output,o", po::value<std::string>(), "write the report to this file instead of stdout")(
      "sort,s", po::value<std::string>()->default_value("total"), "calls, total, mean, p99, max or name")(
      "hist", po::value<std::string>()->default_value("log2"), "log2, linear:MIN:MAX:STEP (e.g. linear:0:10ms:1ms), or none")(
      "by", po::value<std::string>(),
      "split each function by the value of a captured argument (e.g. %di); --by caller: as --by-caller")(
      "by-caller", "one row per function and the function that called it (record -g)")(
      "by-thread", "one row per function and thread")("by-process", "one row per function and process")(
      "by-goroutine", "one row per Go function and goroutine (other functions: per process)")(
      "top", po::value<std::size_t>()->default_value(5), "most frequent values shown per value")(
      "compensate", "take the probes' own cost per call (measured by 'uprof bench' before recording) off every latency");
  add_filter_options(opts);
  po::variables_map vm;
  if (auto done = parse_file_command(argc, argv, "report", opts, vm)) return *done;

  AggregateOptions ao;
  if (vm.count("by-caller")) ao.by = GroupBy::Caller;
  else if (vm.count("by-thread")) ao.by = GroupBy::Thread;
  else if (vm.count("by-process")) ao.by = GroupBy::Process;
  else if (vm.count("by-goroutine")) ao.by = GroupBy::Goroutine;
  ao.compensate = vm.count("compensate") > 0;
  if (vm.count("by")) ao.by_value = vm["by"].as<std::string>();
  if (auto st = read_filter_options(vm, ao.filter); !st) return usage_error("report", st.error().message);
  TextReportOptions to;
  std::string hist = vm["hist"].as<std::string>();
  if (hist == "none") {
    to.histograms = false;
  } else if (hist.rfind("linear:", 0) == 0) {
    auto spec = parse_linear_spec(hist.substr(7));
    if (!spec) return usage_error("report", spec.error().message);
    ao.linear = *spec;
  } else if (hist != "log2") {
    return usage_error("report", "--hist takes log2, linear:MIN:MAX:STEP or none");
  }
  auto sort = parse_sort_key(vm["sort"].as<std::string>());
  if (!sort) return usage_error("report", sort.error().message);
  to.sort = *sort;
  to.top_values = vm["top"].as<std::size_t>();

  std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json" && format != "csv" && format != "html" && format != "folded" &&
      format != "pprof")
    return usage_error("report", "--format takes text, json, csv, html, folded or pprof");
  auto weight = parse_stack_weight(vm["weight"].as<std::string>());
  if (!weight) return usage_error("report", weight.error().message);
  if (!vm["weight"].defaulted() && format != "folded")
    return usage_error("report", "--weight is for --format folded (pprof holds every weight as a sample type)");
  // A gzipped profile is no text for a terminal.
  if (format == "pprof" && !vm.count("output")) return usage_error("report", "--format pprof writes to a file: give -o FILE");
  auto out = OutputFile::open("report", vm.count("output") ? vm["output"].as<std::string>() : "");
  if (!out) return fail(out.error().message);

  // The HTML page also plots latency over time: a second sink on the same pass.
  TimelineSink timelines;
  auto model = build_report(vm["input"].as<std::string>(), ao, format == "html" ? &timelines : nullptr);
  if (!model) return fail(model.error().message);
  if (format == "folded" || format == "pprof")
    if (auto st = check_stack_format(*model, *weight, format); !st) return fail(st.error().message);
  std::string pprof;
  if (format == "pprof") {
    auto bytes = render_pprof(*model);
    if (!bytes) return fail(bytes.error().message);
    pprof = std::move(bytes).value();
  }
  Status written = out->write(format == "pprof"    ? pprof
                              : format == "folded" ? render_folded(*model, *weight)
                              : format == "json"   ? render_json_report(*model, to)
                              : format == "csv"  ? render_csv_report(*model, to)
                              : format == "html" ? render_html_report(*model, to, timelines.timelines())
                                                 : render_text_report(*model, to));
  if (!written) return fail(written.error().message);
  // A damaged file still reports what it holds; say so on stderr too, for scripts.
  for (const auto& p : model->problems) std::cerr << "uprof: " << model->path << ": " << p << "\n";
  return 0;
}

}  // namespace uprof::cli
