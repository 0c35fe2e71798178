// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// sstfilter kinds beside RocksDB's own filters, side by side in one process
// on the same keys, every one driven through the same interface RocksDB
// drives: FilterPolicy::GetBuilderWithContext -> FilterBitsBuilder (AddKey*,
// Finish) and FilterPolicy::GetFilterBitsReader -> FilterBitsReader
// (MayMatch single, and batched by 32 as MultiGet does). RocksDB's builders
// and readers are reached through the same declarations of its internal
// classes as our adapter's (adapters/rocksdb/rocksdb_abi.h).
//
// Filters: sstfilter.{bloom:10, blocked_bloom:10, cuckoo:12, ribbon:10,
// ribbon:7.1 (the memory of rocksdb.ribbon:10)},
// rocksdb.bloom:10 (NewBloomFilterPolicy(10): FastLocalBloom, format 5) and
// rocksdb.ribbon:10 (NewRibbonFilterPolicy(10): Standard128Ribbon).
// Counters, as in filter_bench:
//   t_per_key     time per key added or queried ("12.3n" is 12.3 ns)
//   bits_per_key  bytes Finish returned * 8 / n (metadata included)
//   fp_pct        measured false-positive rate of the negative queries
//   tmp_bytes_per_key  (Build) peak heap bytes held during one build beyond
//                 the filter itself and what was held before, per key
//                 (counted by this binary's operator new/delete)
// Every reader reads its filter kReadOffset bytes past a cache line, as a
// table reader reads one from its block cache (see CopyForReading), and
// every query benchmark from the same buffer (see InSharedBuffer).
// The payload check's cost, ours only: OpenReader/<filter>/<n>
// (GetFilterBitsReader, where the check runs once; bytes_per_second)
// and QueryNegative[Batched]/<filter>/1000000, each also as .../unchecked:
// the same filter with its trailer rewritten in the unchecked form of
// format versions before 4.
//
//   build/bench/rocksdb_bench --benchmark_repetitions=5
//       --benchmark_enable_random_interleaving=true
//       --benchmark_report_aggregates_only=true      (one command line)
//
// docs/BENCHMARKS.md has the figures; bench/rocksdb_bench_report.py turns
// the JSON of several runs into its ratio tables (--all-kinds: every
// filter against rocksdb.bloom:10).

#include <benchmark/benchmark.h>
#include <malloc.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "bench/bench_util.h"
#include "policy/format.h"
#include "sstfilter/rocksdb.h"

// Heap bytes in use and their peak, for tmp_bytes_per_key: every
// operator new of the process (RocksDB's library included) lands here.
namespace heap {
std::atomic<int64_t> in_use{0};
std::atomic<int64_t> peak{0};
void* Allocate(size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  const int64_t now =
      in_use.fetch_add(static_cast<int64_t>(malloc_usable_size(p))) +
      static_cast<int64_t>(malloc_usable_size(p));
  int64_t old = peak.load(std::memory_order_relaxed);
  while (now > old && !peak.compare_exchange_weak(old, now)) {
  }
  return p;
}
void Free(void* p) {
  if (p == nullptr) return;
  in_use.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}
}  // namespace heap

namespace sstfilter {
namespace {

const uint64_t kSizes[] = {10000, 1000000, 10000000};
// Queries per iteration, and the batch MultiGet hands a filter.
constexpr size_t kMaxQueries = 1000000;
constexpr int kBatch = 32;

struct Candidate {
  std::string name;
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
};

const std::vector<Candidate>& Candidates() {
  static const std::vector<Candidate>* all = [] {
    auto* v = new std::vector<Candidate>;
    for (const char* spec : {"bloom:10", "blocked_bloom:10", "cuckoo:12",
                             "ribbon:10", "ribbon:7.1"}) {
      std::shared_ptr<const rocksdb::FilterPolicy> p;
      // A kind the core does not build yet is left out, not faked.
      if (NewRocksDBFilterPolicy(spec, &p).ok()) {
        v->push_back({kRocksDBIdPrefix + std::string(spec), p});
      }
    }
    v->push_back(
        {"rocksdb.bloom:10", std::shared_ptr<const rocksdb::FilterPolicy>(
                                 rocksdb::NewBloomFilterPolicy(10))});
    v->push_back(
        {"rocksdb.ribbon:10", std::shared_ptr<const rocksdb::FilterPolicy>(
                                  rocksdb::NewRibbonFilterPolicy(10))});
    return v;
  }();
  return *all;
}

// The defaults of a table outside any DB (level -1, reason kMisc): the
// Ribbon policy builds Ribbon there, the Bloom policy FastLocalBloom.
std::unique_ptr<rocksdb::FilterBitsBuilder> NewBuilder(const Candidate& c) {
  static const rocksdb::BlockBasedTableOptions table_options;
  rocksdb::FilterBuildingContext ctx(table_options);
  return std::unique_ptr<rocksdb::FilterBitsBuilder>(
      c.policy->GetBuilderWithContext(ctx));
}

struct Built {
  std::unique_ptr<const char[]> buf;
  rocksdb::Slice filter;
};

// Where the query benchmarks' readers find a filter: a copy starting
// kReadOffset bytes past a cache line, for every candidate alike. That is
// how a table reader sees the filter it read from a file into a block
// cache (glibc's malloc gives 16-byte alignment, and 16 past a page for a
// large block), not where its builder's Finish happened to put it.
// QueryNegativeAt<offset> compares the offsets 0, 16, 32 and 48.
constexpr size_t kReadOffset = 16;
struct ReadCopy {
  std::unique_ptr<char[]> buf;
  rocksdb::Slice filter;
};
ReadCopy CopyForReading(rocksdb::Slice filter, size_t offset) {
  ReadCopy out;
  out.buf.reset(new char[filter.size() + 64 + offset]);
  char* p = out.buf.get();
  p += (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64 + offset;
  std::memcpy(p, filter.data(), filter.size());
  out.filter = rocksdb::Slice(p, filter.size());
  return out;
}

Built Build(const Candidate& c, uint64_t n) {
  auto b = NewBuilder(c);
  const bench::KeySet& keys = bench::PresentKeys(n);
  for (uint64_t i = 0; i < n; i++)
    b->AddKey(rocksdb::Slice(keys[i].data(), keys[i].size()));
  Built out;
  out.filter = b->Finish(&out.buf);
  return out;
}

// Built once per (candidate, n), copied once per offset, and shared by
// the query benchmarks.
const ReadCopy& Filter(const Candidate& c, uint64_t n, size_t offset) {
  static std::map<std::pair<std::string, uint64_t>, Built> built;
  static std::map<std::tuple<std::string, uint64_t, size_t>, ReadCopy> copies;
  auto it = copies.find({c.name, n, offset});
  if (it != copies.end()) return it->second;
  auto b = built.find({c.name, n});
  if (b == built.end())
    b = built.emplace(std::make_pair(c.name, n), Build(c, n)).first;
  return copies[{c.name, n, offset}] = CopyForReading(b->second.filter, offset);
}

// Our filter of (c, n) with its trailer rewritten in the unchecked form of
// format versions before 4 (same payload, same answers), at kReadOffset:
// the difference to Filter() is the cost of the payload check.
const ReadCopy& UncheckedFilter(const Candidate& c, uint64_t n) {
  static std::map<std::pair<std::string, uint64_t>, ReadCopy> copies;
  auto it = copies.find({c.name, n});
  if (it != copies.end()) return it->second;
  const rocksdb::Slice f = Filter(c, n, kReadOffset).filter;
  internal::Trailer t;
  std::string bytes(f.data(), f.size());
  if (internal::ParseTrailer(reinterpret_cast<const uint8_t*>(f.data()),
                             f.size(), &t)) {
    bytes.resize(t.payload_size);
    internal::AppendTrailer(t, &bytes, /*checked=*/false);
  }
  return copies[{c.name, n}] = CopyForReading(bytes, kReadOffset);
}

// Where a query benchmark's reader reads: one buffer for every candidate,
// into which QueryAt copies the filter (at its offset past a line) before
// the timed loop. Each candidate's queries then touch the same pages, so
// where the allocator put a filter's own copy, and how the machine backs
// those pages, cannot move one candidate against another (with a copy
// each, two candidates' ratio at 10^7 keys moved from 0.94x to 1.70x
// between runs). Allocated once, with room for the largest filter here (a
// 10^7-key cuckoo:12, 16 MB), grown only if a larger one comes.
rocksdb::Slice InSharedBuffer(const ReadCopy& copy, size_t offset) {
  static std::unique_ptr<char[]> buf;
  static size_t capacity = 0;
  const size_t need = copy.filter.size() + 64 + offset;
  if (need > capacity) {
    capacity = std::max<size_t>(need, size_t{32} << 20);
    buf.reset(new char[capacity]);
  }
  char* p = buf.get();
  p += (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64 + offset;
  std::memcpy(p, copy.filter.data(), copy.filter.size());
  return rocksdb::Slice(p, copy.filter.size());
}

void PerKey(benchmark::State& state, uint64_t keys_per_iteration) {
  state.counters["t_per_key"] = benchmark::Counter(
      static_cast<double>(keys_per_iteration) * state.iterations(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Build(benchmark::State& state, const Candidate* c, uint64_t n) {
  const bench::KeySet& keys = bench::PresentKeys(n);
  size_t bytes = 0;
  int64_t tmp = 0;
  for (auto _ : state) {
    const int64_t before = heap::in_use.load();
    heap::peak.store(before);
    auto b = NewBuilder(*c);
    for (uint64_t i = 0; i < n; i++)
      b->AddKey(rocksdb::Slice(keys[i].data(), keys[i].size()));
    std::unique_ptr<const char[]> buf;
    const rocksdb::Slice f = b->Finish(&buf);
    bytes = f.size();
    tmp = std::max<int64_t>(
        tmp, heap::peak.load() - before - static_cast<int64_t>(bytes));
    benchmark::DoNotOptimize(buf.get());
  }
  PerKey(state, n);
  state.counters["bits_per_key"] = 8.0 * bytes / n;
  state.counters["tmp_bytes_per_key"] = static_cast<double>(tmp) / n;
}

void QueryAt(benchmark::State& state, const Candidate* c, uint64_t n,
             bool present, bool batched, size_t offset,
             bool unchecked = false) {
  const rocksdb::Slice filter =
      InSharedBuffer(unchecked ? UncheckedFilter(*c, n) : Filter(*c, n, offset),
                     unchecked ? kReadOffset : offset);
  std::unique_ptr<rocksdb::FilterBitsReader> reader(
      c->policy->GetFilterBitsReader(filter));
  const bench::KeySet& keys =
      present ? bench::PresentKeys(n) : bench::AbsentKeys();
  const size_t q = std::min<size_t>(keys.size(), kMaxQueries);
  std::vector<rocksdb::Slice> slices;
  slices.reserve(q);
  for (size_t i = 0; i < q; i++)
    slices.emplace_back(keys[i].data(), keys[i].size());
  std::vector<rocksdb::Slice*> ptrs;
  for (auto& s : slices) ptrs.push_back(&s);
  std::unique_ptr<bool[]> results(new bool[q]);
  uint64_t matches = 0;
  for (auto _ : state) {
    if (batched) {
      for (size_t i = 0; i < q; i += kBatch) {
        const int m = static_cast<int>(std::min<size_t>(kBatch, q - i));
        reader->MayMatch(m, ptrs.data() + i, results.get() + i);
      }
      for (size_t i = 0; i < q; i++) matches += results[i];
    } else {
      for (size_t i = 0; i < q; i++) matches += reader->MayMatch(slices[i]);
    }
  }
  PerKey(state, q);
  state.counters["bits_per_key"] = 8.0 * filter.size() / n;
  const double rate = static_cast<double>(matches) / (q * state.iterations());
  if (present) {
    if (rate != 1.0) state.SkipWithError("false negative");
  } else {
    state.counters["fp_pct"] = 100 * rate;
  }
}

void BM_Query(benchmark::State& state, const Candidate* c, uint64_t n,
              bool present, bool batched) {
  QueryAt(state, c, n, present, batched, kReadOffset);
}

// Single absent-key queries of one filter at `offset` bytes past a line.
void BM_QueryNegativeAt(benchmark::State& state, const Candidate* c, uint64_t n,
                        size_t offset) {
  QueryAt(state, c, n, /*present=*/false, /*batched=*/false, offset);
}

// Absent-key queries of our filter in the unchecked form (UncheckedFilter).
void BM_QueryNegativeUnchecked(benchmark::State& state, const Candidate* c,
                               uint64_t n, bool batched) {
  QueryAt(state, c, n, /*present=*/false, batched, kReadOffset,
          /*unchecked=*/true);
}

// GetFilterBitsReader (where our reader checks the filter's bytes, once)
// and the reader's deletion; bytes_per_second: filter bytes opened.
void BM_OpenReader(benchmark::State& state, const Candidate* c, uint64_t n,
                   bool unchecked) {
  const rocksdb::Slice f = unchecked ? UncheckedFilter(*c, n).filter
                                     : Filter(*c, n, kReadOffset).filter;
  for (auto _ : state) {
    std::unique_ptr<rocksdb::FilterBitsReader> r(
        c->policy->GetFilterBitsReader(f));
    benchmark::DoNotOptimize(r.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(f.size()) * state.iterations());
}

// FPR at equal filter bytes: RocksDB's Ribbon built for about `bits` bits
// per key (its argument is the Bloom-equivalent bits; 10 gives ~7.1 real
// bits), then sstfilter ribbon given exactly RocksDB's bytes, both queried
// with the same 10^6 absent keys. Counters: rocksdb_bits (RocksDB Ribbon's
// bytes * 8 / n), rocksdb_fp_pct, ribbon_fp_pct, fpr_ratio (ours / theirs).
void BM_FprAtRibbonBytes(benchmark::State& state, double bits, uint64_t n) {
  const bench::KeySet& keys = bench::PresentKeys(n);
  const bench::KeySet& absent = bench::AbsentKeys();
  auto fp_pct = [&](const rocksdb::FilterPolicy& policy, rocksdb::Slice f) {
    std::unique_ptr<rocksdb::FilterBitsReader> r(policy.GetFilterBitsReader(f));
    uint64_t m = 0;
    for (size_t i = 0; i < absent.size(); i++)
      m += r->MayMatch(rocksdb::Slice(absent[i].data(), absent[i].size()));
    return 100.0 * m / absent.size();
  };
  auto build = [&](const rocksdb::FilterPolicy& policy, Built* out) {
    static const rocksdb::BlockBasedTableOptions table_options;
    rocksdb::FilterBuildingContext ctx(table_options);
    std::unique_ptr<rocksdb::FilterBitsBuilder> b(
        policy.GetBuilderWithContext(ctx));
    for (uint64_t i = 0; i < n; i++)
      b->AddKey(rocksdb::Slice(keys[i].data(), keys[i].size()));
    out->filter = b->Finish(&out->buf);
  };
  for (auto _ : state) {
    std::unique_ptr<const rocksdb::FilterPolicy> theirs(
        rocksdb::NewRibbonFilterPolicy(bits * 10 / 7.1));
    Built t;
    build(*theirs, &t);
    // Ours gets no more bytes: its payload budget plus a trailer of at
    // most 16 bytes, rounded down to the 6 decimals of the spec string.
    const double our_bits =
        std::floor((8.0 * t.filter.size() - 128) / n * 1e6) / 1e6;
    std::shared_ptr<const rocksdb::FilterPolicy> ours;
    if (!NewRocksDBFilterPolicy("ribbon:" + std::to_string(our_bits), &ours)
             .ok()) {
      state.SkipWithError("bad spec");
      return;
    }
    Built o;
    build(*ours, &o);
    if (o.filter.size() > t.filter.size()) state.SkipWithError("more bytes");
    const double theirs_fp = fp_pct(*theirs, t.filter);
    const double ours_fp = fp_pct(*ours, o.filter);
    state.counters["rocksdb_bits"] = 8.0 * t.filter.size() / n;
    state.counters["ribbon_bits"] = 8.0 * o.filter.size() / n;
    state.counters["rocksdb_fp_pct"] = theirs_fp;
    state.counters["ribbon_fp_pct"] = ours_fp;
    state.counters["fpr_ratio"] = ours_fp / theirs_fp;
  }
}

}  // namespace

std::shared_ptr<void> bench::RegisterBenchmarks() {
  for (uint64_t n : kSizes) {
    for (double bits : {6, 8, 10, 12, 16}) {
      const std::string name =
          "FprAtRibbonBytes/bits:" + std::to_string(static_cast<int>(bits)) +
          "/" + std::to_string(n);
      benchmark::RegisterBenchmark(name.c_str(), BM_FprAtRibbonBytes, bits, n)
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const Candidate& c : Candidates()) {
    for (uint64_t n : kSizes) {
      const std::string suffix = "/" + c.name + "/" + std::to_string(n);
      bench::RegisterBuildAndQueries(suffix, BM_Build, BM_Query, &c, n);
      // Ours: the payload check's cost, against the unchecked form.
      if (c.name.rfind(kRocksDBIdPrefix, 0) == 0 && n == 1000000) {
        for (bool batched : {false, true}) {
          const std::string name = std::string("QueryNegative") +
                                   (batched ? "Batched" : "") + suffix +
                                   "/unchecked";
          benchmark::RegisterBenchmark(name.c_str(), BM_QueryNegativeUnchecked,
                                       &c, n, batched)
              ->Unit(benchmark::kMillisecond);
        }
      }
      if (c.name.rfind(kRocksDBIdPrefix, 0) == 0) {
        for (bool unchecked : {false, true}) {
          const std::string name =
              "OpenReader" + suffix + (unchecked ? "/unchecked" : "");
          benchmark::RegisterBenchmark(name.c_str(), BM_OpenReader, &c, n,
                                       unchecked)
              ->Unit(benchmark::kMicrosecond);
        }
      }
      if (n < 10000000) continue;  // out of the CPU's caches only
      for (size_t offset : {0, 16, 32, 48}) {
        const std::string name =
            "QueryNegativeAt" + std::to_string(offset) + suffix;
        benchmark::RegisterBenchmark(name.c_str(), BM_QueryNegativeAt, &c, n,
                                     offset)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  return nullptr;
}

}  // namespace sstfilter

void* operator new(size_t size) { return heap::Allocate(size); }
void* operator new[](size_t size) { return heap::Allocate(size); }
void operator delete(void* p) noexcept { heap::Free(p); }
void operator delete[](void* p) noexcept { heap::Free(p); }
void operator delete(void* p, size_t) noexcept { heap::Free(p); }
void operator delete[](void* p, size_t) noexcept { heap::Free(p); }
