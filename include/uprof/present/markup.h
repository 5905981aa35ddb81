// Text inside HTML and SVG, element content or attribute value: the five characters
// that markup gives meaning to, escaped.  a<b & "c"  ->  a&lt;b &amp; &quot;c&quot;
#pragma once

#include <string>
#include <string_view>

namespace uprof {

std::string escape_markup(std::string_view text);

// A name made fit for a CSS class: what is not a letter, digit, '-' or '_' becomes '_'.
//   "p99.9" -> "p99_9"
std::string css_name(std::string_view text);

}  // namespace uprof
