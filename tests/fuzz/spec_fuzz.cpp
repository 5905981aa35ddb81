// Fuzzes the `-e` parsers: a probe spec (LOCATION and value tokens, probe_spec.h), each
// of its value tokens against both architectures' register tables (value_spec.h), and
// parse_number. Any text must give a spec or an error, never a crash or UB.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "uprof/spec/probe_spec.h"
#include "uprof/spec/value_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)uprof::parse_number(text);

  auto spec = uprof::parse_probe_spec(text);
  if (!spec) {
    if (spec.error().message.empty()) std::abort();
    return 0;
  }
  if (spec->text != text) std::abort();
  for (uprof::Arch a : {uprof::Arch::X86_64, uprof::Arch::Arm64}) {
    const auto& arch = uprof::arch_info(a);
    // The whole input as one token too: the value parser alone, spaces and all.
    if (auto whole = uprof::parse_value_token(text, arch); !whole && whole.error().message.empty()) std::abort();
    std::vector<uprof::ValueSpec> values;
    for (const auto& token : spec->values) {
      auto v = uprof::parse_value_token(token, arch);
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
    (void)uprof::sample_needs(values, arch);
  }
  return 0;
}
