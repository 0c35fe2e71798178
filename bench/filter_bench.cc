// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Micro-benchmarks of every sstfilter kind, side by side in one process:
// Build, QueryPositive and QueryNegative (single and batched), over
// (kind, n) with counters
//   t_per_key     time per key added or queried, in seconds with an SI
//                 prefix: "12.3n" is 12.3 ns
//   bits_per_key  filter bytes * 8 / n (trailer included)
//   fp_pct        measured false-positive rate of the negative queries
//   expected_pct  the parameter math's prediction for the same filter
//
//   build/bench/filter_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true      (one command line)
//
// Keyed specs ("<spec>:keyed") run at 10^4 and 10^6 keys beside their
// unkeyed twins. PlanLevelBits/<kind>/runs:8 times one plan of bits per
// level (sstfilter/params.h) for a tree of 8 runs.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "bench/filter_benchmarks.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/params.h"
#include "sstfilter/secret.h"

namespace sstfilter {
namespace {

const uint64_t kSizes[] = {10000, 1000000, 10000000};
// Keyed filters (sstfilter/secret.h) of every kind's example spec, beside
// the unkeyed ones: the cost of the keyed hash (docs/RELIABILITY.md,
// "Keyed filters").
const uint64_t kKeyedSizes[] = {10000, 1000000};

using bench::BM_Build;
using bench::BM_Query;
using bench::MakeBuilder;
using bench::PerKey;
using bench::SizeCounters;

// FPR vs bits/key: n = 1M keys, 10M absent probes (sigma ~0.3% of the
// rate at 1%), one iteration; the timing columns mean nothing here.
void BM_Fpr(benchmark::State& state, std::string kind, double bits) {
  const uint64_t n = 1000000;
  const std::string text = kind + ":" + std::to_string(bits);
  auto b = MakeBuilder(text);
  const bench::KeySet& keys = bench::PresentKeys(n);
  for (uint64_t i = 0; i < n; i++) b->AddKey(keys[i]);
  std::string filter;
  b->Finish(&filter);
  const FilterReader r = FilterReader::Open(filter);
  const uint64_t probes = 10000000;
  uint64_t matches = 0;
  for (auto _ : state) {
    char key[32];
    for (uint64_t i = 0; i < probes; i++) {
      std::snprintf(key, sizeof(key), "absent%010llu",
                    static_cast<unsigned long long>(i));
      matches += r.MayMatch(key);
    }
  }
  state.counters["bits_per_key"] = 8.0 * filter.size() / n;
  state.counters["fp_pct"] = 100.0 * matches / (probes * state.iterations());
  FilterSpec spec;
  FilterParams p;
  if (ParseFilterSpec(text, &spec).ok() && ParamsForSpec(spec, n, &p).ok()) {
    state.counters["expected_pct"] = 100 * p.expected_fpr;
  }
}

// The key hash alone over 10^6 16-byte keys: Hash64 (unkeyed) or
// FilterSecret::Hash (keyed), seed 0 or not.
void BM_Hash(benchmark::State& state, bool keyed, uint64_t seed) {
  const bench::KeySet& keys = bench::AbsentKeys();
  const FilterSecret* secret = bench::BenchSecret();
  uint64_t sum = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < keys.size(); i++) {
      sum += keyed ? secret->Hash(keys[i], seed) : Hash64(keys[i], seed);
    }
  }
  benchmark::DoNotOptimize(sum);
  PerKey(state, keys.size());
}

// PlanLevelBits for 8 runs, a tree of 10^7 keys as the level listener
// sees it at a flush (four L0 files of a flush, L4, L5, L6 and a new L0
// file whose keys change every call, so that no plan repeats). The kind's
// FPR curve is tabulated by the first call of the process, before timing.
void BM_PlanLevelBits(benchmark::State& state, FilterKind kind) {
  std::vector<uint64_t> runs = {20000, 20000,  20000,   20000,
                                70000, 890000, 9040000, 2000};
  LevelPlan plan;
  if (!PlanLevelBits(kind, runs, 10, &plan).ok()) {
    state.SkipWithError("PlanLevelBits failed");
    return;
  }
  uint64_t i = 0;
  for (auto _ : state) {
    runs.back() = 3000 + (i++ & 1023);
    benchmark::DoNotOptimize(PlanLevelBits(kind, runs, 10, &plan).ok());
  }
}

// PlanFilterCosts for an auto:10 spec on the same tree, with the rebuild
// weights the level listener gives it (TreeRebuilds). The new L0 file's
// keys change every call, as a flush's do (14,000-15,023: within one 1/8
// of an octave, whose curves the first call computes).
void BM_PlanFilterCosts(benchmark::State& state) {
  std::vector<uint64_t> runs = {20000, 20000,  20000,   20000,
                                70000, 890000, 9040000, 2000};
  FilterSpec spec;
  CostPlan plan;
  if (!ParseFilterSpec("auto:10", &spec).ok() ||
      !PlanFilterCosts(spec, runs, TreeRebuilds(runs, 4), &plan).ok()) {
    state.SkipWithError("PlanFilterCosts failed");
    return;
  }
  uint64_t i = 0;
  for (auto _ : state) {
    runs.back() = 14000 + (i++ & 1023);
    benchmark::DoNotOptimize(
        PlanFilterCosts(spec, runs, TreeRebuilds(runs, 4), &plan).ok());
  }
}

}  // namespace

std::shared_ptr<void> bench::RegisterBenchmarks() {
  benchmark::RegisterBenchmark("PlanFilterCosts/auto:10/runs:8",
                               BM_PlanFilterCosts)
      ->Unit(benchmark::kMicrosecond);
  for (FilterKind k : {FilterKind::kBlockedBloom, FilterKind::kRibbon}) {
    const std::string name =
        std::string("PlanLevelBits/") + FilterKindName(k) + "/runs:8";
    benchmark::RegisterBenchmark(name.c_str(), BM_PlanLevelBits, k)
        ->Unit(benchmark::kMicrosecond);
  }
  for (bool keyed : {false, true}) {
    for (uint64_t seed : {0, 7}) {
      const std::string name = std::string("Hash/") +
                               (keyed ? "keyed" : "unkeyed") +
                               "/seed:" + std::to_string(seed);
      benchmark::RegisterBenchmark(name.c_str(), BM_Hash, keyed, seed)
          ->Unit(benchmark::kMillisecond);
    }
  }
  // Every kind a spec names (the kinds table, SpecKinds).
  for (FilterKind k : SpecKinds()) {
    const std::string kind = FilterKindName(k);
    for (double bits : {6, 8, 10, 12, 14, 16, 20}) {
      const std::string name =
          "Fpr/" + std::string(kind) + "/bits:" + std::to_string(int(bits));
      benchmark::RegisterBenchmark(name.c_str(), BM_Fpr, kind, bits)
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (FilterKind k : SpecKinds()) {
    const std::string example = ExampleSpec(k);
    for (uint64_t n : kSizes) {
      bench::RegisterBuildAndQueries("/" + example + "/" + std::to_string(n),
                                     BM_Build, BM_Query, example, n);
    }
    const std::string keyed = example + ":keyed";
    for (uint64_t n : kKeyedSizes) {
      bench::RegisterBuildAndQueries("/" + keyed + "/" + std::to_string(n),
                                     BM_Build, BM_Query, keyed, n);
    }
  }
  return nullptr;
}

}  // namespace sstfilter
