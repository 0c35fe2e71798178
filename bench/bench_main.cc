// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The one main() of the benchmark binaries: Google Benchmark reads its
// flags, the binary registers its benchmarks (RegisterBenchmarks in
// bench/bench_util.h: which ones depends on what this build has, and
// leveldb_bench first builds and reports on databases), and they run.

#include <benchmark/benchmark.h>

#include <memory>

#include "bench/bench_util.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::shared_ptr<void> state = sstfilter::bench::RegisterBenchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  state.reset();  // e.g. close databases, then remove their folder
  return 0;
}
