// The frame of a self-contained HTML page: doctype, charset, a Content-Security-Policy
// that lets the page load nothing (no script, no font, no image, no request of any
// kind; only its own inline styles and data: images), and one stylesheet for reports
// and their SVG plots, on screen and on paper. Nothing in it names another file.
//   html_page("uprof report", "<main>...</main>")
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace uprof {

inline constexpr const char* kHtmlContentSecurityPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

// `body` and `extra_css` are markup as they are; `title` is escaped.
std::string html_page(std::string_view title, std::string_view body, std::string_view extra_css = {});

// A table of cells that are markup already (escape text with escape_markup).
struct HtmlTable {
  struct Column {
    std::string header;  // text
    bool numeric = false;  // right-aligned, tabular figures
  };
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
  std::string css_class;
};

std::string html_table(const HtmlTable& table);

}  // namespace uprof
