// What `uprof probe` prints: a binary's functions (`--list`), or what each spec
// resolves to. Pure: images and resolved probes in, text out.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "uprof/resolve/image.h"
#include "uprof/resolve/resolved_probe.h"

namespace uprof {

// Signature text for a function's address, "" when unknown (DWARF is optional).
using SignatureLookup = std::function<std::string(uint64_t addr)>;

// FUNCTION ADDRESS OFFSET SIZE SIGNATURE, one line per function (aliases joined with '='),
// those matching `pattern` (a glob; "" for all). Returns the text and the number listed.
std::pair<std::string, std::size_t> render_function_list(const Image& img, const std::string& pattern,
                                                         const SignatureLookup& signature);

// SPEC PROBE FILE OFFSET ADDRESS BUILD-ID, one line per resolved probe; then FIRST-INSN
// when `first_insn` has one text per probe ("emulated (push %rbp)", insn_class.h).
std::string render_resolved(const std::vector<ResolvedProbe>& probes, const std::vector<std::string>& first_insn = {});

}  // namespace uprof
