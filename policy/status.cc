// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/status.h"

namespace sstfilter {

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      return "Invalid argument: " + msg_;
    case Code::kNotSupported:
      return "Not supported: " + msg_;
    case Code::kCorruption:
      return "Corruption: " + msg_;
    case Code::kIOError:
      return "IO error: " + msg_;
  }
  return "Unknown code: " + msg_;
}

}  // namespace sstfilter
