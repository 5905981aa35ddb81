// What the arguments of well-known USDT probes are: names and types their providers
// document, as value tokens. With no values named, `usdt:python:function__entry`
// captures `file=$arg1:string func=$arg2:string line=$arg3`, not three bare numbers.
//
// Sources (what each argument holds):
//   python: CPython's Doc/howto/instrumentation.rst ("Available static markers") and
//           Include/pydtrace.d; the same for 3.6 to 3.14.
//   libstdcxx: libstdc++-v3/libsupc++ (eh_throw.cc, eh_catch.cc: PROBE2(throw, obj,
//           tinfo) and the like): the exception object and its std::type_info.
#pragma once

#include <string_view>
#include <vector>

namespace uprof {

// The value tokens for PROVIDER:NAME when it has `nargs` arguments, or empty: an unknown
// probe, or a known one whose note does not have the documented number of arguments.
std::vector<std::string_view> known_usdt_values(std::string_view provider, std::string_view name,
                                                std::size_t nargs);

}  // namespace uprof
