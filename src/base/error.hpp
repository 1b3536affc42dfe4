// Errors travel as values until the CLI edge, which prints Error::line() and exits
// with Error::exit_code(). Every error names the file and, where it can, the field.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace hb {

enum class ErrorKind {
  usage = 2,      // the command line itself is wrong
  bad_input = 3,  // a file exists but its contents are malformed or inconsistent
  io = 4,         // a file cannot be opened, read, written or renamed
  resource = 5,   // out of memory or device resources
  internal = 1,   // a bug: an invariant did not hold
  scenes_failed = 6,  // a batch run (hyperbatch run) finished, but some scenes failed
};

struct Error {
  ErrorKind kind = ErrorKind::internal;
  std::string file;     // the file at fault, empty when none
  std::string field;    // header key, dataset, attribute or option at fault
  std::string message;  // what is wrong, in plain words

  // One line for a person: "FILE: field 'FIELD': MESSAGE".
  std::string line() const;
  int exit_code() const { return static_cast<int>(kind); }
};

Error bad_input(std::string file, std::string field, std::string message);
Error io_error(std::string file, std::string message);

// Result<T>: either a value or an Error. Deliberately tiny; C++23 std::expected later.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Status: success or an Error, for operations without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}
  static Status success() { return {}; }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

}  // namespace hb

// Propagate a failed Status/Result from the enclosing function.
#define HB_TRY(expr)                                    \
  do {                                                  \
    auto&& hb_try_result_ = (expr);                     \
    if (!hb_try_result_.ok()) return hb_try_result_.error(); \
  } while (0)
