// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The cuckoo filter beside the Bloom kinds, in one process:
//
//   Same*/<spec>/<n>   Build, QueryNegative(Batched), QueryPositiveBatched
//                      for cuckoo:12 and the Bloom specs of about the same
//                      FPR (blocked_bloom:14, bloom:13) and the default
//                      blocked_bloom:10, n = 10^4, 10^6, 10^7.
//   Fpr/<kind>/<bits>  the FPR-vs-space sweep at n = 10^6: measured
//                      bits_per_key and fp_pct of cuckoo:5..24 and
//                      blocked_bloom/bloom:4..26 (one iteration each).
//   Mutable*/<kind>    Insert, Contains, Erase per key of the mutable
//                      filters at 10^6 keys (95% load for the cuckoo).
//
// Counters: t_per_key (CPU time per key), bits_per_key (filter bytes * 8 /
// n, trailer included), fp_pct (measured), expected_pct (params.h).
//
//   build/bench/cuckoo_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true      (one command line)

#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "bench/bench_util.h"
#include "bench/filter_benchmarks.h"
#include "sstfilter/filter.h"
#include "sstfilter/mutable.h"
#include "sstfilter/params.h"

namespace sstfilter {
namespace {

const char* const kSameFprSpecs[] = {"cuckoo:12", "blocked_bloom:14",
                                     "bloom:13", "blocked_bloom:10"};
const uint64_t kSizes[] = {10000, 1000000, 10000000};

using bench::BM_Build;
using bench::BM_Query;
using bench::Filter;
using bench::MakeBuilder;
using bench::PerKey;
using bench::SizeCounters;

// One filter of 10^6 keys, probed with 10^6 absent keys.
void BM_Fpr(benchmark::State& state, std::string text) {
  const uint64_t n = 1000000;
  for (auto _ : state) {
    const FilterReader r = FilterReader::Open(Filter(text, n));
    const bench::KeySet& absent = bench::AbsentKeys();
    std::unique_ptr<bool[]> results(new bool[absent.size()]);
    r.MayMatch(absent.size(), absent.data(), results.get());
    uint64_t fp = 0;
    for (size_t i = 0; i < absent.size(); i++) fp += results[i];
    state.counters["fp_pct"] = 100.0 * fp / absent.size();
  }
  SizeCounters(state, text, n);
}

// --- mutable filters ------------------------------------------------------------

template <typename F>
F MakeMutable(uint64_t capacity) {
  MutableFilterOptions o;
  o.capacity = capacity;
  o.bits_per_key = std::is_same_v<F, DynamicCuckooFilter> ? 12 : 13;
  F f;
  if (!F::Create(o, &f).ok()) abort();
  return f;
}

// Inserts n keys into an empty filter sized for n, then erases them.
template <typename F>
void BM_MutableInsertErase(benchmark::State& state) {
  const uint64_t n = 1000000;
  const bench::KeySet& keys = bench::PresentKeys(n);
  const uint64_t filled = n * 95 / 100;  // the cuckoo filter's sizing load
  for (auto _ : state) {
    F f = MakeMutable<F>(n);
    for (uint64_t i = 0; i < filled; i++) {
      if constexpr (std::is_same_v<F, DynamicCuckooFilter>) {
        if (!f.Insert(keys[i])) state.SkipWithError("full");
      } else {
        f.Insert(keys[i]);
      }
    }
    for (uint64_t i = 0; i < filled; i++) {
      if (!f.Erase(keys[i])) state.SkipWithError("erase failed");
    }
  }
  PerKey(state, 2 * filled);
}

template <typename F>
void BM_MutableContains(benchmark::State& state, bool present) {
  const uint64_t n = 1000000;
  const bench::KeySet& keys = bench::PresentKeys(n);
  const bench::KeySet& probes = present ? keys : bench::AbsentKeys();
  F f = MakeMutable<F>(n);
  for (uint64_t i = 0; i < n * 95 / 100; i++) f.Insert(keys[i]);
  uint64_t matches = 0;
  for (auto _ : state) {
    for (uint64_t i = 0; i < n * 95 / 100; i++)
      matches += f.Contains(probes[i]);
  }
  PerKey(state, n * 95 / 100);
  if (!present) {
    state.counters["fp_pct"] =
        100.0 * matches / (state.iterations() * (n * 95 / 100));
  }
  std::string bytes;
  f.Serialize(&bytes);
  state.counters["bits_per_key"] = 8.0 * bytes.size() / (n * 95 / 100);
}

}  // namespace

std::shared_ptr<void> bench::RegisterBenchmarks() {
  for (const char* text : kSameFprSpecs) {
    for (uint64_t n : kSizes) {
      const std::string suffix =
          "/" + std::string(text) + "/" + std::to_string(n);
      benchmark::RegisterBenchmark(("SameBuild" + suffix).c_str(), BM_Build,
                                   text, n)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("SameQueryNegative" + suffix).c_str(),
                                   BM_Query, text, n, false, false)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(
          ("SameQueryNegativeBatched" + suffix).c_str(), BM_Query, text, n,
          false, true)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(
          ("SameQueryPositiveBatched" + suffix).c_str(), BM_Query, text, n,
          true, true)
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (int f = 5; f <= 24; f++) {
    const std::string text = "cuckoo:" + std::to_string(f);
    benchmark::RegisterBenchmark(("Fpr/" + text).c_str(), BM_Fpr, text)
        ->Iterations(1);
  }
  for (const char* kind : {"blocked_bloom", "bloom"}) {
    for (int b = 4; b <= 26; b++) {
      const std::string text = std::string(kind) + ":" + std::to_string(b);
      benchmark::RegisterBenchmark(("Fpr/" + text).c_str(), BM_Fpr, text)
          ->Iterations(1);
    }
  }
  benchmark::RegisterBenchmark("MutableInsertErase/dynamic_cuckoo:12",
                               BM_MutableInsertErase<DynamicCuckooFilter>)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("MutableInsertErase/counting_bloom:13",
                               BM_MutableInsertErase<CountingBloomFilter>)
      ->Unit(benchmark::kMillisecond);
  for (bool present : {true, false}) {
    const std::string op =
        present ? "MutableContainsPositive" : "MutableContainsNegative";
    benchmark::RegisterBenchmark((op + "/dynamic_cuckoo:12").c_str(),
                                 BM_MutableContains<DynamicCuckooFilter>,
                                 present)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((op + "/counting_bloom:13").c_str(),
                                 BM_MutableContains<CountingBloomFilter>,
                                 present)
        ->Unit(benchmark::kMillisecond);
  }
  return nullptr;
}

}  // namespace sstfilter
