// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Shared by the micro-benchmarks: fixed 16-byte keys in one flat buffer
// (no per-key allocation, so a query costs what an engine's would).

#ifndef SSTFILTER_BENCH_BENCH_UTIL_H_
#define SSTFILTER_BENCH_BENCH_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace sstfilter {
namespace bench {

// n keys of 16 bytes: "k" + 14 digits of (base + i) + a suffix byte.
class KeySet {
 public:
  KeySet(uint64_t base, uint64_t n) : buf_(n * kLen, '\0') {
    char tmp[32];
    for (uint64_t i = 0; i < n; i++) {
      std::snprintf(tmp, sizeof(tmp), "k%014llua",
                    static_cast<unsigned long long>(base + i));
      buf_.replace(i * kLen, kLen, tmp, kLen);
    }
    views_.reserve(n);
    for (uint64_t i = 0; i < n; i++) views_.emplace_back(&buf_[i * kLen], kLen);
  }
  size_t size() const { return views_.size(); }
  std::string_view operator[](size_t i) const { return views_[i]; }
  const std::string_view* data() const { return views_.data(); }

 private:
  static constexpr size_t kLen = 16;
  std::string buf_;
  std::vector<std::string_view> views_;
};

// Keys present in every benchmark's filters, and keys absent from them.
inline const KeySet& PresentKeys(uint64_t n) {
  static KeySet* keys[3] = {};
  const int slot = n <= 10000 ? 0 : n <= 1000000 ? 1 : 2;
  if (keys[slot] == nullptr) keys[slot] = new KeySet(0, n);
  return *keys[slot];
}
inline const KeySet& AbsentKeys() {
  static KeySet* keys = new KeySet(uint64_t{1} << 40, 1000000);
  return *keys;
}

}  // namespace bench
}  // namespace sstfilter

#endif  // SSTFILTER_BENCH_BENCH_UTIL_H_
