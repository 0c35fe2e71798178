// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Shared helpers of the test suite: fixed keys (so FPR checks never flake)
// and the list of every buildable kind that parameterized suites run over.

#ifndef SSTFILTER_TESTS_TEST_UTIL_H_
#define SSTFILTER_TESTS_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sstfilter/filter.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace test {

// One spec per buildable kind, at its usual size. Every parameterized suite
// (filters, adapters) runs over this list: a new kind is added here.
inline std::vector<std::string> AllKindSpecs() {
  return {"bloom:10", "blocked_bloom:10", "cuckoo:12", "ribbon:10"};
}

// Key i of a fixed key set: 16 bytes, "key-" + 11 decimal digits + 'a'.
// NeighbourKey(i) differs from Key(i) only in its last byte ('b').
inline std::string Key(uint64_t i, char last = 'a') {
  std::string digits = std::to_string(i);
  return "key-" + std::string(11 - digits.size(), '0') + digits + last;
}
inline std::string NeighbourKey(uint64_t i) { return Key(i, 'b'); }
// Absent keys far from every Key(i < 10^10): another prefix.
inline std::string AbsentKey(uint64_t i) {
  return "nokey-" + std::to_string(i);
}

inline FilterSpec MustParse(const std::string& text) {
  FilterSpec spec;
  Status s = ParseFilterSpec(text, &spec);
  if (!s.ok()) abort();
  return spec;
}

// Builds the filter of Key(0 .. n-1) for `spec`.
inline std::string BuildFilter(const FilterSpec& spec, uint64_t n) {
  std::unique_ptr<FilterBuilder> b;
  if (!NewFilterBuilder(spec, &b).ok()) abort();
  for (uint64_t i = 0; i < n; i++) b->AddKey(Key(i));
  std::string out;
  b->Finish(&out);
  return out;
}

}  // namespace test
}  // namespace sstfilter

#endif  // SSTFILTER_TESTS_TEST_UTIL_H_
