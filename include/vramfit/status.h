// Status and Result<T>: how every vramfit library call reports failure.
//
// The library never throws across its API, never exits and never prints. A call that can
// fail returns a Status (or a Result<T> holding either a value or a Status). The set of
// codes is small and stable; the message names the place (file, byte offset or JSON key),
// what was expected and what was found. Both types are cheap to move; neither is
// thread-safe to mutate concurrently, like any value type.
#ifndef VRAMFIT_STATUS_H_
#define VRAMFIT_STATUS_H_

#include <optional>
#include <string>
#include <utility>

namespace vramfit {

// Stable error codes. Never renumbered; new codes are only appended.
enum class Code {
  kOk = 0,
  kInvalidArgument = 1,  // a flag or argument the caller gave is wrong
  kNotFound = 2,         // a file, tensor, model or GPU that was named does not exist
  kCorrupt = 3,          // input bytes break the format's rules
  kUnsupported = 4,      // well-formed input that vramfit does not model
  kIo = 5,               // the operating system refused a read
};

// Name of a code, e.g. "corrupt".
const char* CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status Corrupt(std::string m) { return {Code::kCorrupt, std::move(m)}; }
  static Status Unsupported(std::string m) { return {Code::kUnsupported, std::move(m)}; }
  static Status Io(std::string m) { return {Code::kIo, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  bool IsCorrupt() const { return code_ == Code::kCorrupt; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "corrupt: <message>", or "ok".
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// Either a T or a non-ok Status. Access value() only after checking ok().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace vramfit

// Returns early from the enclosing function when `expr` (a Status) is not ok.
#define VRAMFIT_RETURN_IF_ERROR(expr)        \
  do {                                       \
    ::vramfit::Status vramfit_s_ = (expr);   \
    if (!vramfit_s_.ok()) return vramfit_s_; \
  } while (0)

#endif  // VRAMFIT_STATUS_H_
