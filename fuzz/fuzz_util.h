// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Shared by the libFuzzer targets of fuzz/: a check that aborts (so that
// libFuzzer records the input as a crash) and the fixed keys every reader
// target asks about.

#ifndef SSTFILTER_FUZZ_FUZZ_UTIL_H_
#define SSTFILTER_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "sstfilter/secret.h"

// Aborts with the failed condition: a property of the library was broken.
#define SSTFILTER_FUZZ_CHECK(cond)                                          \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                  \
      std::abort();                                                         \
    }                                                                       \
  } while (0)

namespace sstfilter {
namespace fuzz {

// Keys the reader targets query: the empty key, short and long ones, and
// the keys fuzz/make_corpus adds to the golden filters (so that some of
// them are present and the "match" paths are covered too).
inline constexpr std::string_view kProbeKeys[] = {
    "",
    "a",
    "key0",
    "key1",
    "key7",
    "key35",
    "key99",
    "key500",
    "key999",
    "absent",
    std::string_view("\0\0\0\0", 4),
    "zzzzzzzz",
    "key10000",
    "a longer key of many bytes, "
    "more than one XXH3 stripe: 0123456789"
    "0123456789012345678901234567890123",
};
inline constexpr size_t kNumProbeKeys =
    sizeof(kProbeKeys) / sizeof(kProbeKeys[0]);

// The secret of every keyed filter in the corpus and the targets
// (fuzz/make_corpus), so that keyed trailers read and build.
inline constexpr std::string_view kFuzzSecret =
    "sstfilter fuzz secret 0123456789";
inline const FilterSecret* FuzzSecret() {
  static const FilterSecret* const secret = [] {
    std::unique_ptr<const FilterSecret> s;
    if (!NewFilterSecret(kFuzzSecret, &s).ok()) std::abort();
    return s.release();  // lives as long as the process
  }();
  return secret;
}

// Reads the input as a stream of fuzzer-chosen values.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= uint64_t{Byte()} << (8 * i);
    return v;
  }
  // The next up-to-`max` bytes (fewer at the end of the input).
  std::string_view Bytes(size_t max) {
    const size_t n = size_ - pos_ < max ? size_ - pos_ : max;
    std::string_view s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  std::string_view Rest() { return Bytes(size_ - pos_); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace fuzz
}  // namespace sstfilter

#endif  // SSTFILTER_FUZZ_FUZZ_UTIL_H_
