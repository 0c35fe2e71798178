// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Scratch folders and shell quoting, for tests, benchmarks and tools that
// make databases or run commands.

#ifndef SSTFILTER_HARNESS_SCRATCH_H_
#define SSTFILTER_HARNESS_SCRATCH_H_

#include <string>

namespace sstfilter {
namespace harness {

// A fresh folder under $TMPDIR (or /tmp), removed with its contents when
// the object goes, unless kept.
//
//   ScratchDir dir("sstfilter_rocksdb");   // or: ScratchDir d; d.Create(...)
//   dir.Sub("db")                          // "<dir>/db"
class ScratchDir {
 public:
  ScratchDir() = default;
  // Creates the folder; aborts if it cannot (for tests and benchmarks).
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Creates "<$TMPDIR or /tmp>/<prefix>.XXXXXX". Returns "" or the error.
  // `keep`: leave it in place at the end. REQUIRES: not created yet.
  std::string Create(const std::string& prefix, bool keep = false);

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
  bool keep_ = false;
};

// `s` quoted for a POSIX shell: 'it'\''s'.
std::string ShellQuote(const std::string& s);

}  // namespace harness
}  // namespace sstfilter

#endif  // SSTFILTER_HARNESS_SCRATCH_H_
