// A small streaming JSON writer: correct escaping and commas, nothing more.
//   JsonWriter w; w.begin_object(); w.key("calls"); w.value(3); w.end_object();
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace uprof {

class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view k);
  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(uint64_t v);
  void value(int64_t v);
  void value(int v) { value(static_cast<int64_t>(v)); }
  void value(unsigned v) { value(static_cast<uint64_t>(v)); }
  void value(double v);
  void value(bool v);
  void null();
  // key + value in one call.
  template <class T>
  void field(std::string_view k, const T& v) {
    key(k);
    value(v);
  }
  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void before_value();
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
};

std::string json_escape(std::string_view s);

}  // namespace uprof
