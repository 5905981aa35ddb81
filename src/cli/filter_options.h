// The filter options report and script share: --pid --tid --comm --function
// --since --until, declared once and read into an AggregateFilter.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "uprof/analyse/aggregate.h"
#include "uprof/util/result.h"

namespace uprof::cli {

void add_filter_options(boost::program_options::options_description& opts);
Status read_filter_options(const boost::program_options::variables_map& vm, AggregateFilter& out);

// Parses `argv` for a command that takes one positional FILE (`input`). Returns an exit
// status when the command is done (--help printed: 0; a usage error: 2), nullopt to go on.
std::optional<int> parse_file_command(int argc, char** argv, std::string_view command,
                                      const boost::program_options::options_description& opts,
                                      boost::program_options::variables_map& vm);
// The same with positionals of the command's own: `hidden` declares them (not shown by
// --help, which prints `opts`), `positional` orders them.
std::optional<int> parse_command(int argc, char** argv, std::string_view command,
                                 const boost::program_options::options_description& opts,
                                 const boost::program_options::options_description& hidden,
                                 const boost::program_options::positional_options_description& positional,
                                 boost::program_options::variables_map& vm);

}  // namespace uprof::cli
