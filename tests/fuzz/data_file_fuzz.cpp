// Fuzzes the data-file reader: any bytes, read as `uprof report` reads a file (open,
// every event, the trailer and the problems), must give an error or events, never a
// crash, a hang, a leak or an allocation sized by an unchecked length field.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "data_file_input.h"
#include "uprof/store/data_file.h"

namespace {

volatile uint64_t sink;

void read_everything(const uint8_t* data, std::size_t size) {
  auto reader = uprof::DataFileReader::open(uprof::fuzz::as_file(data, size));
  if (!reader) return;

  // Everything a report looks at; the sum keeps the reads from being optimised away.
  uint64_t sum = reader->meta().command.size() + reader->probes().size() + reader->file_size();
  uprof::Event e;
  while (reader->next(e)) {
    if (e.kind == uprof::EventKind::Sample && e.probe >= reader->probes().size()) std::abort();
    if (e.nvalues > uprof::kMaxValues) std::abort();
    for (uint8_t i = 0; i < e.nvalues; i++) sum += e.values[i];
    sum += e.time + e.pid + e.tid + e.lost + e.comm.size();
  }
  // Once false, next() stays false.
  if (reader->next(e)) std::abort();
  if (const auto& t = reader->trailer()) sum += t->events + t->counts.size();
  for (const auto& p : reader->problems()) sum += p.size();
  sink = sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  read_everything(data, size);
  if (auto fixed = uprof::fuzz::with_valid_crcs(data, size); !fixed.empty())
    read_everything(fixed.data(), fixed.size());
  return 0;
}
