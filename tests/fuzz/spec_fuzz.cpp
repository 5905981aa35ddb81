// Fuzzes the `-e` parsers: a probe spec (LOCATION and value tokens, probe_spec.h and
// value_request.h), each parsed value bound to both architectures' register tables
// (record/value_binding.h), and parse_number. Any text must give a spec or an error,
// never a crash or UB.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "uprof/record/value_binding.h"
#include "uprof/spec/probe_spec.h"
#include "uprof/spec/value_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)uprof::parse_number(text);
  // The whole input as one token too: the value parser alone, spaces and all.
  if (auto whole = uprof::parse_value_request(text); !whole && whole.error().message.empty()) std::abort();

  auto spec = uprof::parse_probe_spec(text);
  if (!spec) {
    if (spec.error().message.empty()) std::abort();
    return 0;
  }
  if (spec->text != text) std::abort();
  for (uprof::Arch a : {uprof::Arch::X86_64, uprof::Arch::Arm64}) {
    const auto& arch = uprof::arch_info(a);
    std::vector<uprof::ValueSpec> values;
    for (const auto& request : spec->values) {
      if (request.wants_dwarf() && !std::holds_alternative<uprof::ReturnValueRef>(request.target)) continue;
      auto v = uprof::bind_value(request, arch);
      if (!v) {
        if (v.error().message.empty()) std::abort();
        continue;
      }
      if (*v) {
        const auto& s = (*v)->spec;
        if (s.size != 1 && s.size != 2 && s.size != 4 && s.size != 8) std::abort();
        values.push_back(s);
      }
    }
    (void)uprof::reads_for(values, arch);
  }
  return 0;
}
