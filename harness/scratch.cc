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
  const std::string error = Make(prefix, &path_);
  if (!error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::abort();
  }
}

std::string ScratchDir::New(const std::string& prefix, bool keep,
                            std::unique_ptr<ScratchDir>* out) {
  std::string path;
  const std::string error = Make(prefix, &path);
  if (error.empty()) out->reset(new ScratchDir(std::move(path), keep));
  return error;
}

ScratchDir::~ScratchDir() {
  if (path_.empty() || keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ScratchDir::Make(const std::string& prefix, std::string* path) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                        "/" + prefix + ".XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return "cannot make a temporary folder from " + pattern + ": " +
           std::strerror(errno);
  }
  *path = pattern;
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
