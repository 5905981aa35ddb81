// What `uprof probe` prints: a binary's functions (`--list`), or what each spec
// resolves to. Pure: images and resolved probes in, text out.
#pragma once

#include "uprof/resolve/dwarf/param_location.h"

#include <functional>
#include <string>
#include <vector>

#include "uprof/record/unwind_risk.h"
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
// `returns`: how each function's returns are measured (describe_returns), a column
// when given, like `first_insn`.
std::string render_resolved(const std::vector<ResolvedProbe>& probes, const std::vector<std::string>& first_insn = {},
                            const std::vector<std::string>& returns = {});
// "return probe", "at 2 exits (1 tail call)", "none: an indirect jump at +0x4 ... may leave it",
// "-" for a probe inside a function. `risk`: its function's (record/unwind_risk.h,
// ReturnRisks::of), nullptr when none.
std::string describe_returns(const ResolvedProbe& p, const ReturnRisk* risk);

// `uprof probe --vars`: each parameter of the function at a probe, its type,
// and where it lives at that address, then the return value:
//
//   add at entry (./mytest, file offset 0x1139):
//     int a          %di (4 bytes)
//     int b          %si (4 bytes)
//     struct pair p  %di:%si
//     struct big b   [%x0] (40 bytes)
//     long k         = 3 (constant)
//     long x         <unavailable: optimized out>
//     returns int    %ax (4 bytes)
std::string render_vars(const ResolvedProbe& probe, const FunctionParams& params);
// One location, as render_vars spells it: "%di", "[sp+8]", "[%x0+16]", "= 3".
std::string describe_location(Arch arch, const std::vector<LocationPiece>& pieces);

}  // namespace uprof
