// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// One key-value engine as the comparison drives it. Call order, per policy:
//
//   Build(policy, dir)  (ThreadBegin (Get | MultiGet)* ThreadEnd)*  Close
//
// Build makes a fresh database in `dir` with `policy` as its filter policy,
// loads the key space into a multi-level tree, measures the filters on disk,
// and reopens the database for lookups with every table open, so that the
// lookups read data blocks only. Lookups may run on many threads at once;
// ThreadBegin/ThreadEnd bracket each thread's share of a phase.

#ifndef SSTFILTER_TOOLS_COMPARE_ENGINE_H_
#define SSTFILTER_TOOLS_COMPARE_ENGINE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sstfilter/status.h"
#include "tools/sstfilter_compare/policies.h"
#include "tools/sstfilter_compare/workload.h"

namespace sstfilter {
namespace compare {

using Clock = std::chrono::steady_clock;

inline double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Nanoseconds since `t`, for timings summed over many short calls.
inline uint64_t NanosSince(Clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t)
          .count());
}

// `nanos` spread over `keys` keys (no keys: `nanos` itself).
inline double NanosPerKey(uint64_t nanos, uint64_t keys) {
  return static_cast<double>(nanos) / static_cast<double>(keys == 0 ? 1 : keys);
}

// An engine or file-system failure: "<what>: <the engine's message>".
inline Status EngineError(const std::string& what, const std::string& message) {
  return Status::IOError(what + ": " + message);
}

// Engine-specific counters (RocksDB tickers and perf context) kept beside
// the common ones, for cross-checks. Summed over threads.
using EngineCounters = std::map<std::string, uint64_t>;

// Filter building for the tables of one kind: made by flushes, or by
// compactions into one level.
struct BuildSlice {
  std::string reason;  // "flush", "compaction", "other" (e.g. recovery)
  int level = -1;      // of the table when made; -1: not known
  uint64_t nanos = 0;  // inside the policy's builders
  uint64_t keys = 0;   // keys the filters were built for
  uint64_t filters = 0;
  // --predict_build: ns per key of the same builder outside the database
  // (Engine::TimeFilterBuild), or -1.
  double predicted_ns_per_key = -1;
  // --predict_build: the filter bits per key those builders wrote, or -1.
  double predicted_bits_per_key = -1;

  double seconds() const { return static_cast<double>(nanos) * 1e-9; }
  // keys x predicted_ns_per_key, or -1.
  double predicted_seconds() const {
    return predicted_ns_per_key < 0
               ? -1
               : predicted_ns_per_key * static_cast<double>(keys) * 1e-9;
  }
};

// What Build measured.
struct BuildResult {
  double load_seconds = 0;          // writes, flushes, compactions, settling
  double filter_build_seconds = 0;  // inside the policy's builders (summed)
  // RocksDB, sstfilter policies made in code: inside their level listener
  // (by_level's and auto's plans of the tree, in RocksDB's background
  // threads, summed); -1 if there is none or it is not timed.
  double listener_seconds = -1;
  uint64_t filters_built = 0;  // including ones compactions discarded
  // filter_build_seconds split by what made the tables, flushes first,
  // then compactions by output level; slices with no filter are left out.
  std::vector<BuildSlice> build_split;
  // The filters of the finished database, on disk.
  uint64_t filter_block_bytes = 0;  // everything filter-related in the tables
  uint64_t filter_bytes = 0;        // the filters alone (no per-table index)
  uint64_t num_filters = 0;         // non-empty filters
  // Filter bytes held in memory by the open database, or -1 if unknown.
  int64_t filter_memory_bytes = -1;
  uint64_t table_reader_memory = 0;    // RocksDB: estimate-table-readers-mem
  uint64_t table_bytes = 0;            // all table files
  uint64_t index_bytes = 0;            // RocksDB: index blocks (partitions too)
  uint64_t top_level_index_bytes = 0;  // RocksDB, partitioned: their tops
  uint64_t num_entries = 0;            // entries in all tables
  std::vector<int> files_per_level;
  std::vector<FilterTable> tables;  // RocksDB: every table (for X@Y)
  // LevelDB, whose filters are per data block, not per table: every
  // table's level and entries (no filter bytes), the tree's shape for the
  // information bound (bound.h). RocksDB's is `tables`.
  std::vector<FilterTable> shape;
  std::vector<std::string> notes;
};

class Engine {
 public:
  virtual ~Engine() = default;

  virtual const char* name() const = 0;  // "rocksdb", "leveldb"
  virtual std::string version() const = 0;
  // How table reads reach the disk, e.g. "direct I/O".
  virtual std::string io_mode() const = 0;
  virtual bool has_multiget() const = 0;

  // Progress of a long step: (done, total) in keys.
  using ProgressFn = std::function<void(uint64_t, uint64_t)>;

  // On error the database may be open; call Close.
  virtual Status Build(const Policy& policy, const KeySpace& keys,
                       const std::string& dir, const ProgressFn& progress,
                       BuildResult* out) = 0;

  virtual void ThreadBegin() {}
  virtual void ThreadEnd(EngineCounters* /*counters*/) {}
  // Before and after all threads of a phase (e.g. statistics tickers).
  virtual void PhaseBegin() {}
  virtual void PhaseEnd(EngineCounters* /*counters*/) {}

  // *found says whether the key is there; *value is its value if so.
  virtual Status Get(const std::string& key, std::string* value,
                     bool* found) = 0;
  // found[i] for keys[i], values[i] likewise. REQUIRES has_multiget().
  virtual Status MultiGet(const std::vector<std::string>& keys,
                          std::vector<std::string>* values,
                          std::vector<bool>* found) = 0;

  // Bytes of one filter of built-in `policy` for `num_keys` keys in a table
  // of `level` (RocksDB: 0 is a flush), built by the engine's own builder
  // (for sizing X@Y).
  virtual Status BuiltinFilterBytes(const Policy& policy, int level,
                                    uint64_t num_keys, uint64_t* bytes) = 0;

  // A micro-benchmark of the engine's builder for `policy`, outside any
  // database: builds `filters` filters of `keys_per_filter` keys each
  // (16-byte keys) for a table made as `slice` says (RocksDB: its reason
  // and level in the builder's context, and for the policy the last Build
  // loaded, that database's tree to plan on; LevelDB has neither), timing
  // only what the load times (RocksDB: Finish; LevelDB: CreateFilter), and
  // sets *ns_per_key to the time over the keys and *bits_per_key to the
  // filter bits written per key.
  virtual Status TimeFilterBuild(const Policy& policy, const BuildSlice& slice,
                                 uint64_t keys_per_filter, uint64_t filters,
                                 double* ns_per_key, double* bits_per_key) = 0;

  // Closes the database Build left open and opens it again for lookups
  // through a new block cache of `bytes` holding data, index and filter
  // blocks (RocksDB: cache_index_and_filter_blocks, with L0's pinned), as
  // one cache is shared in production. NotSupported where the engine has
  // no such mode.
  virtual Status ReopenWithBlockCache(uint64_t /*bytes*/) {
    return Status::NotSupported(std::string(name()) + ": no block cache mode");
  }
  // After ReopenWithBlockCache: the cache's bytes in use, and the bytes the
  // open database holds outside it (RocksDB: its table readers).
  virtual void MemoryInUse(uint64_t* cache, uint64_t* outside) {
    *cache = *outside = 0;
  }

  // Closes the database (waiting for background work). Idempotent.
  virtual Status Close() = 0;
};

// The RocksDB tree a comparison builds (docs/COMPARE.md).
struct RocksDBTree {
  // Fixed: the same files and levels for every policy, made with
  // CompactFiles (rocksdb_engine.cc). Natural: RocksDB's own automatic
  // compactions with level_compaction_dynamic_level_bytes, settled.
  bool natural = false;
  int levels = 3;    // fixed: levels below L0; natural: what it is sized for
  int l0_files = 2;  // fixed only
  // Natural only (NaturalTree chooses them).
  uint64_t write_buffer_size = 0;
  uint64_t max_bytes_for_level_base = 0;
  uint64_t target_file_size_base = 0;
  uint64_t keys_per_flush = 0;  // the keys of one flush
  // sstfilter policies and their level listener made from option strings
  // (--configure=options), as an OPTIONS-file user gets them, instead of
  // in code (NewRocksDBFilterPolicy, NewRocksDBLevelListener).
  bool from_options = false;
  // sstfilter policies made in code without their level listener
  // (--configure=no_listener): by_level and auto size on the model tree.
  bool no_listener = false;
  // Natural only: universal compaction (RocksDB's defaults for it) instead
  // of leveled.
  bool universal = false;
  // Partitioned index and filters (kTwoLevelIndexSearch, partition_filters;
  // 4 KiB partitions), as large deployments with a block cache run.
  bool partitioned = false;
};

// A natural tree for `num_keys` entries of key_size + value_size bytes,
// sized so that RocksDB settles on about `levels` levels below L0 with its
// default proportions: the base level holds 1/10^(levels-1) of the data,
// a memtable a quarter of the base level (RocksDB's defaults: 64 MiB
// memtables, 4 L0 files to a compaction, 256 MiB base), and a table file
// one memtable (RocksDB: target_file_size_base = write_buffer_size); keys
// are flushed in chunks of 3/4 of a memtable.
RocksDBTree NaturalTree(uint64_t num_keys, int key_size, int value_size,
                        int levels);

// `direct_io`: read table files with O_DIRECT where the engine can.
std::unique_ptr<Engine> NewRocksDBEngine(bool direct_io,
                                         const RocksDBTree& tree);
std::unique_ptr<Engine> NewLevelDBEngine();

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_ENGINE_H_
