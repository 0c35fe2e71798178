// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Status: the result of an operation that can fail. Errors are values: no
// sstfilter function throws, and none aborts on bad input.
//
//   sstfilter::FilterSpec spec;
//   sstfilter::Status s = sstfilter::ParseFilterSpec("bloom:-3", &spec);
//   if (!s.ok()) fprintf(stderr, "%s\n", s.ToString().c_str());
//   // prints: Invalid argument: filter spec "bloom:-3": bits per key ...

#ifndef SSTFILTER_STATUS_H_
#define SSTFILTER_STATUS_H_

#include <string>
#include <utility>

namespace sstfilter {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument = 1,
    kNotSupported = 2,
    kCorruption = 3,
    kIOError = 4  // a file could not be read or written
  };

  Status() = default;  // OK
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return Status(Code::kInvalidArgument, std::move(msg));
  }
  static Status NotSupported(std::string msg) {
    return Status(Code::kNotSupported, std::move(msg));
  }
  static Status Corruption(std::string msg) {
    return Status(Code::kCorruption, std::move(msg));
  }
  static Status IOError(std::string msg) {
    return Status(Code::kIOError, std::move(msg));
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // The message alone, without the code's name. Empty when ok().
  const std::string& message() const { return msg_; }
  // "OK", or "<code name>: <message>".
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), msg_(std::move(msg)) {}

  Code code_ = Code::kOk;
  std::string msg_;
};

}  // namespace sstfilter

#endif  // SSTFILTER_STATUS_H_
