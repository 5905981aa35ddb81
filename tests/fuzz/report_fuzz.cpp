// Fuzzes what `uprof report`, `uprof script` and `uprof diff` do with a data file someone
// handed over: the reader, pairing, aggregation, histograms and every output format, on
// arbitrary bytes. The options vary with the input's size, so one corpus (the data
// file seeds) covers the groupings and formats.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "data_file_input.h"
#include "uprof/analyse/diff_model.h"
#include "uprof/analyse/report_model.h"
#include "uprof/present/diff_formats.h"
#include "uprof/present/report_formats.h"
#include "uprof/present/report_text.h"
#include "uprof/present/script_output.h"

namespace {

volatile std::size_t sink;

void report_and_script(const uint8_t* data, std::size_t size) {
  std::string path = uprof::fuzz::as_file(data, size);
  uprof::AggregateOptions ao;
  ao.by = static_cast<uprof::GroupBy>(size % 3);
  if (size % 5 == 0) ao.by_value = "%di";
  if (size % 7 == 0) ao.linear = uprof::LinearSpec{.min = 0, .max = 10'000, .step = 1'000};
  std::size_t out = 0;
  if (auto m = uprof::build_report(path, ao)) {
    uprof::TextReportOptions to;
    out += uprof::render_text_report(*m, to).size();
    out += uprof::render_json_report(*m, to).size();
    out += uprof::render_csv_report(*m, to).size();
  }
  // diff of the file against itself: the matching, the intervals, and its formats.
  uprof::DiffOptions dopt{.by = size % 2 ? uprof::GroupBy::Thread : uprof::GroupBy::Function,
                          .by_value = ao.by_value, .shift = {}};
  if (auto d = uprof::build_diff(path, path, dopt)) {
    out += uprof::render_text_diff(*d).size();
    out += uprof::render_json_diff(*d, 5.0).size();
    out += uprof::render_html_diff(*d, std::nullopt).size();
  }
  static constexpr uprof::ScriptFormat kFormats[] = {uprof::ScriptFormat::Text, uprof::ScriptFormat::JsonLines,
                                                      uprof::ScriptFormat::Chrome};
  uprof::ScriptOptions so{.format = kFormats[size % 3], .filter = {}};
  std::ostringstream script, problems;
  (void)uprof::write_script(path, so, script, problems);
  sink = out + script.str().size() + problems.str().size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  report_and_script(data, size);
  if (auto fixed = uprof::fuzz::with_valid_crcs(data, size); !fixed.empty())
    report_and_script(fixed.data(), fixed.size());
  return 0;
}
