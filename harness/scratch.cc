// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "harness/scratch.h"

#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace sstfilter {
namespace harness {

ScratchDir::ScratchDir(const std::string& prefix) {
  const std::string error = Create(prefix);
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::abort();
  }
}

ScratchDir::~ScratchDir() {
  if (path_.empty() || keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ScratchDir::Create(const std::string& prefix, bool keep) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                        "/" + prefix + ".XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return "cannot make a temporary folder from " + pattern + ": " +
           std::strerror(errno);
  }
  path_ = pattern;
  keep_ = keep;
  return "";
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace harness
}  // namespace sstfilter
