// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Shared by the benchmarks: their registration hook, and fixed 16-byte
// keys in one flat buffer (harness/keys.h; no per-key allocation, so a
// query costs what an engine's would).

#ifndef SSTFILTER_BENCH_BENCH_UTIL_H_
#define SSTFILTER_BENCH_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#include "harness/keys.h"

namespace sstfilter {
namespace bench {

// The binaries' shared main() (bench/bench_main.cc) calls this after
// Google Benchmark has read its flags; each binary defines it. It registers
// the binary's benchmarks (those this build can run) and returns what must
// live until they have run, or null.
std::shared_ptr<void> RegisterBenchmarks();

// Registers Build<suffix> and Query{Positive,Negative}[Batched]<suffix>
// (in ms): build(state, arg, n) and query(state, arg, n, present, batched).
template <typename BuildFn, typename QueryFn, typename Arg>
void RegisterBuildAndQueries(const std::string& suffix, BuildFn build,
                             QueryFn query, Arg arg, uint64_t n) {
  benchmark::RegisterBenchmark(("Build" + suffix).c_str(), build, arg, n)
      ->Unit(benchmark::kMillisecond);
  for (bool present : {true, false}) {
    for (bool batched : {false, true}) {
      const std::string name =
          std::string(present ? "QueryPositive" : "QueryNegative") +
          (batched ? "Batched" : "") + suffix;
      benchmark::RegisterBenchmark(name.c_str(), query, arg, n, present,
                                   batched)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

using harness::KeySet;

// Keys present in every benchmark's filters, and keys absent from them:
// "k" + 14 digits + 'a', 16 bytes.
inline const harness::KeySpace& BenchKeys() {
  static const harness::KeySpace* keys =
      new harness::KeySpace(harness::KeySpace::Decimal("k", 14, "a"));
  return *keys;
}
inline const KeySet& PresentKeys(uint64_t n) {
  static KeySet* keys[3] = {};
  const int slot = n <= 10000 ? 0 : n <= 1000000 ? 1 : 2;
  if (keys[slot] == nullptr) keys[slot] = new KeySet(BenchKeys(), 0, n);
  return *keys[slot];
}
inline const KeySet& AbsentKeys() {
  static KeySet* keys = new KeySet(BenchKeys(), uint64_t{1} << 40, 1000000);
  return *keys;
}

}  // namespace bench
}  // namespace sstfilter

#endif  // SSTFILTER_BENCH_BENCH_UTIL_H_
