#include "uprof/present/json_writer.h"

#include <cmath>
#include <cstdio>

namespace uprof {

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (c > 0xf4 || n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; k++)
    if ((b(k) & 0xc0) != 0x80) return 0;
  if (c == 0xe0 && b(1) < 0xa0) return 0;  // overlong
  if (c == 0xed && b(1) > 0x9f) return 0;  // a surrogate
  if (c == 0xf0 && b(1) < 0x90) return 0;  // overlong
  if (c == 0xf4 && b(1) > 0x8f) return 0;  // past U+10FFFF
  return n;
}

}  // namespace

// JSON text is UTF-8: a captured string's bytes that are not (binary data, or a
// multi-byte character cut at --string-size) become U+FFFD, one per byte.
std::string json_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + 2);
  o += '"';
  for (std::size_t i = 0; i < s.size(); i++) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else if (c < 0x80) {
          o += static_cast<char>(c);
        } else if (std::size_t n = utf8_sequence(s, i)) {
          o.append(s.substr(i, n));
          i += n - 1;
        } else {
          o += "\\ufffd";
        }
    }
  }
  o += '"';
  return o;
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

void JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  first_.push_back(true);
}
void JsonWriter::end_object() {
  out_ += '}';
  first_.pop_back();
}
void JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  first_.push_back(true);
}
void JsonWriter::end_array() {
  out_ += ']';
  first_.pop_back();
}
void JsonWriter::key(std::string_view k) {
  before_value();
  out_ += json_escape(k);
  out_ += ':';
  after_key_ = true;
}
void JsonWriter::value(std::string_view s) {
  before_value();
  out_ += json_escape(s);
}
void JsonWriter::value(uint64_t v) {
  before_value();
  out_ += std::to_string(v);
}
void JsonWriter::value(int64_t v) {
  before_value();
  out_ += std::to_string(v);
}
void JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out_ += buf;
}
void JsonWriter::value(bool v) {
  before_value();
  out_ += v ? "true" : "false";
}
void JsonWriter::null() {
  before_value();
  out_ += "null";
}

}  // namespace uprof
