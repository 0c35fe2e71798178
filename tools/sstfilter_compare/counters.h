// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// What one lookup thread did during one phase, counted the same way for
// every engine: the counting file wrappers (RocksDB FileSystem, LevelDB Env)
// call CountRead for each read of a table file, and the filter-policy
// wrappers call CountProbe for each filter answer.
//
// Only threads that set ThreadCounters() are counted: lookup threads set it
// for the length of a phase, so reads done by DB::Open, flushes,
// compactions or the table-opening scan never enter the figures.

#ifndef SSTFILTER_TOOLS_COMPARE_COUNTERS_H_
#define SSTFILTER_TOOLS_COMPARE_COUNTERS_H_

#include <cstdint>

namespace sstfilter {
namespace compare {

struct IoCounters {
  uint64_t reads = 0;      // reads of table files (one per block read)
  uint64_t bytes = 0;      // bytes those reads returned
  uint64_t probes = 0;     // filter queries answered
  uint64_t positives = 0;  // of which answered "may match"

  void Add(const IoCounters& o) {
    reads += o.reads;
    bytes += o.bytes;
    probes += o.probes;
    positives += o.positives;
  }
};

// The calling thread's counters, or null (the default: not counted).
inline IoCounters*& ThreadCounters() {
  static thread_local IoCounters* counters = nullptr;
  return counters;
}

inline void CountRead(uint64_t bytes) {
  if (IoCounters* c = ThreadCounters()) {
    c->reads++;
    c->bytes += bytes;
  }
}

inline void CountProbes(uint64_t probes, uint64_t positives) {
  if (IoCounters* c = ThreadCounters()) {
    c->probes += probes;
    c->positives += positives;
  }
}

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_COUNTERS_H_
