// The USDT pairs uprof knows by name: X__start/X__done, X__entry/X__return and
// X__begin/X__end of one provider are the two halves of calls of "PROVIDER:X". The
// recorder says which half a probe is (RowRole::UsdtStart, UsdtDone, format 1.6);
// analyse/probe_functions.h asks the same of the names in older files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace uprof {

// "python:function__entry" -> {"python:function", false}; "python:gc__done" ->
// {"python:gc", true} (the half that closes); nullopt for a name that is no pair's half.
std::optional<std::pair<std::string, bool>> usdt_pair_half(std::string_view function);

}  // namespace uprof
