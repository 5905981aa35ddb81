// Errors as values. Every fallible step returns Result<T> and passes an Error up; only
// the commands (src/cli/cmd_*.cpp) turn it into an exit status, printing it as
// "uprof: MESSAGE" through cli::fail(). Messages name the subsystem and the thing at fault:
//   "elf: ./mytest: no symbol 'ad' (did you mean 'add'?)"
#pragma once

#include <cassert>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace uprof {

struct Error {
  std::string message;
  // What the command exits with when this error ends it: 1, unless the error
  // has a conventional status of its own (127: the command to run was not found,
  // 126: it could not be executed, as a shell reports them).
  int exit_status = 1;
};

// Builds a message from any streamable pieces: err("elf: ", path, ": not an ELF file").
template <class... Parts>
Error err(Parts&&... parts) {
  std::ostringstream os;
  (os << ... << std::forward<Parts>(parts));
  return Error{os.str()};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error e) : v_(std::move(e)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(v_); }
  Error take_error() && { assert(!ok()); return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

// Result for steps that produce nothing but can fail.
struct Ok {};
using Status = Result<Ok>;
inline Status ok() { return Ok{}; }

}  // namespace uprof

// Propagates an error from an expression returning Result/Status.
#define UPROF_TRY(expr)                                   \
  do {                                                    \
    auto uprof_try_r_ = (expr);                           \
    if (!uprof_try_r_) return std::move(uprof_try_r_).take_error(); \
  } while (0)

#define UPROF_CONCAT_INNER_(a, b) a##b
#define UPROF_CONCAT_(a, b) UPROF_CONCAT_INNER_(a, b)
// Declares `lhs` from a Result's value, or returns its error.
#define UPROF_ASSIGN(lhs, expr) UPROF_ASSIGN_IMPL_(UPROF_CONCAT_(uprof_r_, __LINE__), lhs, expr)
#define UPROF_ASSIGN_IMPL_(tmp, lhs, expr)          \
  auto tmp = (expr);                                \
  if (!tmp) return std::move(tmp).take_error();     \
  lhs = std::move(tmp).value()
