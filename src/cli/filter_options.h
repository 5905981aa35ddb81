// The filter options report and script share: --pid --tid --comm --function
// --since --until, declared once and read into an AggregateFilter.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "uprof/analyse/aggregate.h"
#include "uprof/util/result.h"

namespace uprof::cli {

void add_filter_options(boost::program_options::options_description& opts);
Status read_filter_options(const boost::program_options::variables_map& vm, AggregateFilter& out);

}  // namespace uprof::cli
