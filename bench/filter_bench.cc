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

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "bench/bench_util.h"
#include "sstfilter/filter.h"
#include "sstfilter/params.h"

namespace sstfilter {
namespace {

const char* const kSpecs[] = {"bloom:10", "blocked_bloom:10", "cuckoo:12"};
const uint64_t kSizes[] = {10000, 1000000, 10000000};

std::unique_ptr<FilterBuilder> MakeBuilder(const std::string& text) {
  FilterSpec spec;
  std::unique_ptr<FilterBuilder> b;
  if (!ParseFilterSpec(text, &spec).ok() || !NewFilterBuilder(spec, &b).ok()) {
    return nullptr;
  }
  return b;
}

// Filters are built once per (spec, n) and shared by the query benchmarks.
const std::string& Filter(const std::string& text, uint64_t n) {
  static std::map<std::pair<std::string, uint64_t>, std::string> cache;
  auto it = cache.find({text, n});
  if (it != cache.end()) return it->second;
  auto b = MakeBuilder(text);
  const bench::KeySet& keys = bench::PresentKeys(n);
  for (uint64_t i = 0; i < n; i++) b->AddKey(keys[i]);
  std::string out;
  b->Finish(&out);
  return cache[{text, n}] = std::move(out);
}

void SetSizeCounters(benchmark::State& state, const std::string& text,
                     uint64_t n) {
  state.counters["bits_per_key"] = 8.0 * Filter(text, n).size() / n;
  FilterSpec spec;
  FilterParams p;
  if (ParseFilterSpec(text, &spec).ok() && ParamsForSpec(spec, n, &p).ok()) {
    state.counters["expected_pct"] = 100 * p.expected_fpr;
  }
}

void PerKey(benchmark::State& state, uint64_t keys_per_iteration) {
  state.counters["t_per_key"] = benchmark::Counter(
      static_cast<double>(keys_per_iteration) * state.iterations(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Build(benchmark::State& state, std::string text, uint64_t n) {
  auto b = MakeBuilder(text);
  const bench::KeySet& keys = bench::PresentKeys(n);
  std::string out;
  for (auto _ : state) {
    out.clear();
    for (uint64_t i = 0; i < n; i++) b->AddKey(keys[i]);
    b->Finish(&out);
    benchmark::DoNotOptimize(out.data());
  }
  PerKey(state, n);
  SetSizeCounters(state, text, n);
}

// Queries up to 1M keys per iteration, present or absent, one at a time or
// through the batched call.
void BM_Query(benchmark::State& state, std::string text, uint64_t n,
              bool present, bool batched) {
  const FilterReader r = FilterReader::Open(Filter(text, n));
  const bench::KeySet& keys = present ? bench::PresentKeys(n) : bench::AbsentKeys();
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
  SetSizeCounters(state, text, n);
  const double rate = static_cast<double>(matches) / (q * state.iterations());
  if (present) {
    if (rate != 1.0) state.SkipWithError("false negative");
  } else {
    state.counters["fp_pct"] = 100 * rate;
  }
}

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

void RegisterAll() {
  for (const char* kind : {"bloom", "blocked_bloom", "cuckoo"}) {
    if (MakeBuilder(std::string(kind) + ":12") == nullptr) continue;
    for (double bits : {6, 8, 10, 12, 14, 16, 20}) {
      const std::string name =
          "Fpr/" + std::string(kind) + "/bits:" + std::to_string(int(bits));
      benchmark::RegisterBenchmark(name.c_str(), BM_Fpr, kind, bits)
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const char* text : kSpecs) {
    if (MakeBuilder(text) == nullptr) continue;  // kind not built here
    for (uint64_t n : kSizes) {
      const std::string suffix = "/" + std::string(text) + "/" + std::to_string(n);
      benchmark::RegisterBenchmark(("Build" + suffix).c_str(), BM_Build, text, n)
          ->Unit(benchmark::kMillisecond);
      for (bool present : {true, false}) {
        for (bool batched : {false, true}) {
          const std::string name = std::string(present ? "QueryPositive" : "QueryNegative") +
                                   (batched ? "Batched" : "") + suffix;
          benchmark::RegisterBenchmark(name.c_str(), BM_Query, text, n, present, batched)
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
}

}  // namespace
}  // namespace sstfilter

int main(int argc, char** argv) {
  sstfilter::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
