// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: the pieces every spec parser shares (point specs, policy/spec.cc;
// range specs, policy/range/range.cc): numbers read whole, numbers printed
// so that they read back, errors that quote the spec, and the walk over
// ":name[=value]" options, each at most once.

#ifndef SSTFILTER_POLICY_SPEC_PARSE_H_
#define SSTFILTER_POLICY_SPEC_PARSE_H_

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <system_error>

#include "sstfilter/status.h"

namespace sstfilter {
namespace internal {

// The shortest form of v, for messages ("9.5", "10", "1e-20"): it may be
// in exponent form, which ParseDecimal refuses; spec strings take
// FormatDecimal.
inline std::string FormatNumber(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

// The shortest decimal without an exponent that ParseDecimal reads back as
// v ("9.5", "10", "0.00001"): FormatNumber's digits wherever those have no
// exponent. Any finite double fits the buffer (at most ~345 characters).
inline std::string FormatDecimal(double v) {
  char buf[512];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  return std::string(buf, res.ptr);
}

// A whole number, all of `text`: no sign, space or suffix.
template <typename T>
bool ParseWhole(std::string_view text, T* v) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), *v);
  return !text.empty() && r.ec == std::errc() &&
         r.ptr == text.data() + text.size();
}

// A decimal number ("9.5"), all of `text`: from_chars accepts no leading
// '+' or spaces; nan and inf are rejected by hand.
inline bool ParseDecimal(std::string_view text, double* v) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), *v,
                           std::chars_format::fixed);
  return !text.empty() && r.ec == std::errc() &&
         r.ptr == text.data() + text.size() && std::isfinite(*v);
}

// InvalidArgument: `what` "<text>": why, e.g. filter spec "bloom:x": ...
inline Status SpecError(const char* what, std::string_view text,
                        const std::string& why) {
  return Status::InvalidArgument(std::string(what) + " \"" + std::string(text) +
                                 "\": " + why);
}

// The ":name[=value]" options that end a spec, in order. Next sets
// *option to the next one and returns true, or returns false at the end;
// an option whose name came before sets *repeated to that name.
class SpecOptions {
 public:
  explicit SpecOptions(std::string_view rest) : rest_(rest) {}

  bool Next(std::string_view* option, std::string* repeated) {
    if (rest_.empty()) return false;
    rest_.remove_prefix(1);  // ':'
    *option = rest_.substr(0, rest_.find(':'));
    rest_.remove_prefix(option->size());
    const std::string name(option->substr(0, option->find('=')));
    repeated->clear();
    if (seen_.find("," + name + ",") != std::string::npos) *repeated = name;
    seen_ += "," + name + ",";
    return true;
  }

 private:
  std::string_view rest_;
  std::string seen_;
};

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_SPEC_PARSE_H_
