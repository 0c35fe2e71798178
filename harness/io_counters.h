// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// What one thread's reads and filter probes were, counted the same way for
// every engine: the counting file wrappers (harness/rocksdb_counting.h,
// harness/leveldb_counting.h) call CountRead for each read of a table
// file, and the filter-policy wrappers call CountProbes for each filter
// answer.
//
// Only threads that set ThreadCounters() are counted: a measuring thread
// sets it for as long as it measures (ScopedCounting), so reads done by
// DB::Open, flushes, compactions or a table-opening scan on other threads
// never enter its figures.

#ifndef SSTFILTER_HARNESS_IO_COUNTERS_H_
#define SSTFILTER_HARNESS_IO_COUNTERS_H_

#include <cstdint>

namespace sstfilter {
namespace harness {

struct IoCounters {
  uint64_t reads = 0;           // reads of table files (one per block read)
  uint64_t bytes = 0;           // bytes those reads returned
  uint64_t probes = 0;          // filter queries answered
  uint64_t positives = 0;       // of which answered "may match"
  uint64_t batches = 0;         // batched filter calls (RocksDB MultiGet)
  uint64_t batched_probes = 0;  // probes answered in those calls

  void Add(const IoCounters& o) {
    reads += o.reads;
    bytes += o.bytes;
    probes += o.probes;
    positives += o.positives;
    batches += o.batches;
    batched_probes += o.batched_probes;
  }
};

// The calling thread's counters, or null (the default: not counted).
inline IoCounters*& ThreadCounters() {
  static thread_local IoCounters* counters = nullptr;
  return counters;
}

// Counts the calling thread into *c for the object's lifetime.
class ScopedCounting {
 public:
  explicit ScopedCounting(IoCounters* c) : previous_(ThreadCounters()) {
    ThreadCounters() = c;
  }
  ~ScopedCounting() { ThreadCounters() = previous_; }
  ScopedCounting(const ScopedCounting&) = delete;
  ScopedCounting& operator=(const ScopedCounting&) = delete;

 private:
  IoCounters* const previous_;
};

inline void CountRead(uint64_t bytes) {
  if (IoCounters* c = ThreadCounters()) {
    c->reads++;
    c->bytes += bytes;
  }
}

// `probes` answers, `positives` of them "may match"; `batched`: in one
// batched call.
inline void CountProbes(uint64_t probes, uint64_t positives,
                        bool batched = false) {
  if (IoCounters* c = ThreadCounters()) {
    c->probes += probes;
    c->positives += positives;
    if (batched) {
      c->batches++;
      c->batched_probes += probes;
    }
  }
}

}  // namespace harness
}  // namespace sstfilter

#endif  // SSTFILTER_HARNESS_IO_COUNTERS_H_
