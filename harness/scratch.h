// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Scratch folders and shell quoting, for tests, benchmarks and tools that
// make databases or run commands.

#ifndef SSTFILTER_HARNESS_SCRATCH_H_
#define SSTFILTER_HARNESS_SCRATCH_H_

#include <memory>
#include <string>
#include <utility>

namespace sstfilter {
namespace harness {

// A fresh folder under $TMPDIR (or /tmp), removed with its contents when
// the object goes, unless kept.
//
//   ScratchDir dir("rocksdb_test");        // $TMPDIR/rocksdb_test.XXXXXX
//   dir.Sub("db")                          // "<dir>/db"
class ScratchDir {
 public:
  // Creates "<$TMPDIR or /tmp>/<prefix>.XXXXXX"; aborts if it cannot (for
  // tests and benchmarks).
  explicit ScratchDir(const std::string& prefix = "sstfilter_scratch");
  // Creates it into *out, or returns why it cannot ("" on success).
  // `keep`: leave the folder in place at the end.
  static std::string New(const std::string& prefix, bool keep,
                         std::unique_ptr<ScratchDir>* out);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  ScratchDir(std::string path, bool keep)
      : path_(std::move(path)), keep_(keep) {}
  // Makes the folder: "" and its path in *path, or the error.
  static std::string Make(const std::string& prefix, std::string* path);

  std::string path_;
  bool keep_ = false;
};

// `s` quoted for a POSIX shell: 'it'\''s'.
std::string ShellQuote(const std::string& s);

}  // namespace harness
}  // namespace sstfilter

#endif  // SSTFILTER_HARNESS_SCRATCH_H_
