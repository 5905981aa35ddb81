#include "uprof/present/json_writer.h"

#include <cmath>
#include <cstdio>

namespace uprof {

std::string json_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + 2);
  o += '"';
  for (unsigned char c : s) {
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
        } else {
          o += static_cast<char>(c);
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
