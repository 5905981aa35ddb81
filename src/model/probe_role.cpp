// The names of a probe's role in its report row, and of the USDT pairs' halves.
#include <array>

#include "uprof/model/recording.h"
#include "uprof/model/usdt_pair.h"

namespace uprof {

std::string_view to_string(RowRole role) {
  // By the role's byte, as the data file stores it (format 1.6).
  static constexpr std::array<std::string_view, kLastRowRole + 1> kNames = {
      "unrecorded", "entry", "return", "exit", "inlined", "line", "usdt-start", "usdt-done", "usdt", "instruction"};
  const auto i = static_cast<uint8_t>(role);
  return i < kNames.size() ? kNames[i] : "?";
}

std::optional<std::pair<std::string, bool>> usdt_pair_half(std::string_view function) {
  static constexpr std::pair<std::string_view, std::string_view> kPairs[] = {
      {"__start", "__done"}, {"__entry", "__return"}, {"__begin", "__end"}};
  for (const auto& [open, close] : kPairs)
    for (std::string_view suffix : {open, close})
      if (function.size() > suffix.size() && function.substr(function.size() - suffix.size()) == suffix)
        return std::pair<std::string, bool>{std::string(function.substr(0, function.size() - suffix.size())),
                                            suffix == close};
  return std::nullopt;
}

}  // namespace uprof
