// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The Build and Query benchmarks every filter bench shares (filter_bench,
// cuckoo_bench): one definition, so their figures are comparable.

#ifndef SSTFILTER_BENCH_FILTER_BENCHMARKS_H_
#define SSTFILTER_BENCH_FILTER_BENCHMARKS_H_

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "bench/bench_util.h"
#include "sstfilter/filter.h"
#include "sstfilter/params.h"
#include "sstfilter/secret.h"

namespace sstfilter {
namespace bench {

// The secret of keyed specs ("bloom:10:keyed") in every benchmark; readers
// open every filter with it (an unkeyed filter ignores it).
inline const FilterSecret* BenchSecret() {
  static const FilterSecret* const secret = [] {
    std::unique_ptr<const FilterSecret> s;
    if (!NewFilterSecret("sstfilter benchmark secret 01234", &s).ok()) {
      std::abort();
    }
    return s.release();  // lives as long as the process
  }();
  return secret;
}

// nullptr if `text` is not a spec this build can construct.
inline std::unique_ptr<FilterBuilder> MakeBuilder(const std::string& text) {
  FilterSpec spec;
  std::unique_ptr<FilterBuilder> b;
  if (!ParseFilterSpec(text, &spec).ok() ||
      !NewFilterBuilder(spec, &b, BenchSecret()).ok()) {
    return nullptr;
  }
  return b;
}

// Filters are built once per (spec, n) and shared by the query benchmarks.
inline const std::string& Filter(const std::string& text, uint64_t n) {
  static std::map<std::pair<std::string, uint64_t>, std::string> cache;
  auto it = cache.find({text, n});
  if (it != cache.end()) return it->second;
  auto b = MakeBuilder(text);
  const KeySet& keys = PresentKeys(n);
  for (uint64_t i = 0; i < n; i++) b->AddKey(keys[i]);
  std::string out;
  b->Finish(&out);
  return cache[{text, n}] = std::move(out);
}

// t_per_key: seconds per key, shown with an SI prefix ("12.3n" = 12.3 ns).
inline void PerKey(benchmark::State& state, uint64_t keys_per_iteration) {
  state.counters["t_per_key"] = benchmark::Counter(
      static_cast<double>(keys_per_iteration) * state.iterations(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

inline void SizeCounters(benchmark::State& state, const std::string& text,
                         uint64_t n) {
  state.counters["bits_per_key"] = 8.0 * Filter(text, n).size() / n;
  FilterSpec spec;
  FilterParams p;
  if (ParseFilterSpec(text, &spec).ok() && ParamsForSpec(spec, n, &p).ok()) {
    state.counters["expected_pct"] = 100 * p.expected_fpr;
  }
}

inline void BM_Build(benchmark::State& state, std::string text, uint64_t n) {
  auto b = MakeBuilder(text);
  const KeySet& keys = PresentKeys(n);
  std::string out;
  for (auto _ : state) {
    out.clear();
    for (uint64_t i = 0; i < n; i++) b->AddKey(keys[i]);
    b->Finish(&out);
    benchmark::DoNotOptimize(out.data());
  }
  PerKey(state, n);
  SizeCounters(state, text, n);
}

// Queries up to 1M keys per iteration, present or absent, one at a time or
// through the batched call.
inline void BM_Query(benchmark::State& state, std::string text, uint64_t n,
                     bool present, bool batched) {
  const FilterReader r = FilterReader::Open(Filter(text, n), BenchSecret());
  const KeySet& keys = present ? PresentKeys(n) : AbsentKeys();
  const size_t q = std::min<size_t>(keys.size(), 1000000);
  std::unique_ptr<bool[]> results(new bool[q]);
  uint64_t matches = 0;
  for (auto _ : state) {
    if (batched) {
      r.MayMatch(q, keys.data(), results.get());
      for (size_t i = 0; i < q; i++) matches += results[i];
    } else {
      for (size_t i = 0; i < q; i++) matches += r.MayMatch(keys[i]);
    }
  }
  PerKey(state, q);
  SizeCounters(state, text, n);
  const double rate = static_cast<double>(matches) / (q * state.iterations());
  if (present) {
    if (rate != 1.0) state.SkipWithError("false negative");
  } else {
    state.counters["fp_pct"] = 100 * rate;
  }
}

}  // namespace bench
}  // namespace sstfilter

#endif  // SSTFILTER_BENCH_FILTER_BENCHMARKS_H_
