// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The filter policies a comparison runs, as given by --policies:
//
//   <list>    ::= <entry> ("," <entry>)*
//   <entry>   ::= [<engine> "/"] (<policy> | <family> "@" <policy>)
//   <engine>  ::= "rocksdb" | "leveldb"
//   <policy>  ::= "none"                       no filter
//               | "rocksdb:bloom:" <bits>      RocksDB's built-in Bloom
//               | "rocksdb:ribbon:" <bits>     RocksDB's Ribbon as shipped
//                                              (Bloom-equivalent bits per
//                                              key; Bloom for flushes)
//               | "rocksdb:ribbon_all:" <bits> RocksDB's Ribbon everywhere
//                                              (bloom_before_level = -1)
//               | "leveldb:bloom:" <int bits>  LevelDB's built-in Bloom
//               | <sstfilter spec>             "blocked_bloom:10", "cuckoo:12"
//   <family>  ::= "rocksdb:bloom" | "rocksdb:ribbon" | "rocksdb:ribbon_all"
//               | "leveldb:bloom" | <sstfilter kind> [":by_level"]
//
// "X@Y" is family X at equal memory with policy Y: X's bits per key are
// chosen, after Y is built and measured on the same engine, so that X's
// filters for the tables of Y's database (each table's level and keys, as
// the engine reports them; LevelDB: the mean keys per filter) take at most
// the bytes of Y's filters in all. "cuckoo@rocksdb:bloom:10",
// "rocksdb:bloom@cuckoo:12", "rocksdb:ribbon@ribbon:10:by_level" (RocksDB
// builds Bloom for flushed L0 tables and Ribbon below, and the sizing
// counts each table with its own builder). Y is run too, before X, if the
// list lacks it.
//
// Engine-specific policies run on their engine only; "none", sstfilter
// specs and X@Y of two sstfilter policies run on every engine, unless
// scoped with "rocksdb/" or "leveldb/". A "*" in an entry is replaced by
// each value of --sweep_bits in turn ("cuckoo:*", "rocksdb:bloom:*").

#ifndef SSTFILTER_TOOLS_COMPARE_POLICIES_H_
#define SSTFILTER_TOOLS_COMPARE_POLICIES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sstfilter/secret.h"
#include "sstfilter/spec.h"
#include "sstfilter/status.h"

namespace sstfilter {
namespace compare {

// Engines, as bits of a set.
enum EngineBit : unsigned { kRocksDB = 1, kLevelDB = 2, kAllEngines = 3 };
const char* EngineName(EngineBit e);

enum class Family {
  kNone,
  kSstfilter,
  kRocksDBBloom,
  kRocksDBRibbon,     // as shipped: Bloom for flushes, Ribbon below
  kRocksDBRibbonAll,  // bloom_before_level = -1: Ribbon for every table
  kLevelDBBloom
};

// One concrete policy.
struct Policy {
  Family family = Family::kNone;
  double bits_per_key = 0;  // built-in families
  FilterSpec spec;          // kSstfilter

  // "none", "rocksdb:bloom:10", "leveldb:bloom:10", "blocked_bloom:10", ...
  std::string ToString() const;
  // The family without its size: "rocksdb:bloom", "cuckoo", "none",
  // "ribbon:by_level" (an sstfilter spec without its bits per key).
  std::string FamilyName() const;
  // Engines it can run on.
  unsigned engines() const;
  // What users call a built-in family: "RocksDB's Ribbon", "LevelDB's
  // Bloom"; "" for "none" and sstfilter policies.
  std::string BuiltinName() const;
};

// One entry of --policies, after "*" expansion.
struct PolicyRequest {
  std::string text;      // as written
  unsigned engines = 0;  // where it runs
  bool sized = false;    // "X@Y"
  Policy policy;         // the policy; for X@Y only its family (and kind)
  Policy reference;      // Y of X@Y
};

// Parses one entry. Errors are InvalidArgument and quote the entry.
Status ParsePolicyEntry(const std::string& text, PolicyRequest* out);
// Parses the whole list, expanding "*" with `sweep_bits` (a comma list of
// numbers, or ""). An empty list, an entry that runs on no engine, or
// "*" without --sweep_bits (and the reverse) are errors.
Status ParsePolicyList(const std::string& list, const std::string& sweep_bits,
                       std::vector<PolicyRequest>* out);

// One run on one engine, in run order.
struct PlannedRun {
  std::string label;  // "none", "cuckoo:12", "cuckoo@rocksdb:bloom:10"
  bool sized = false;
  Policy policy;          // resolved for plain runs; family only when sized
  Policy reference;       // sized: Y, planned earlier in the same list
  bool implicit = false;  // added as the reference of an X@Y entry
};

// The runs of `engine` (one bit), each reference before its X@Y entries,
// duplicates removed.
std::vector<PlannedRun> PlanRuns(const std::vector<PolicyRequest>& requests,
                                 EngineBit engine);

// The secret of every keyed sstfilter policy of this process
// ("blocked_bloom:10:keyed"): 32 random bytes, drawn once. The databases of
// a comparison are scratch, so no stable secret is needed.
std::shared_ptr<const FilterSecret> RunSecret();

// One table's filter: the level the engine put the table in (RocksDB: 0
// for flushed tables) and the keys it holds.
struct FilterTable {
  int level = 1;
  uint64_t keys = 0;
  uint64_t filter_bytes = 0;  // as measured (not used for sizing)
};

// Bytes of one filter of `policy` holding `num_keys` distinct keys in a
// table of `level`, as the engine builds it.
using FilterBytesFn = std::function<Status(const Policy& policy, int level,
                                           uint64_t num_keys, uint64_t* bytes)>;

// Chooses the bits per key of family `x` (x.spec's kind and options for
// sstfilter) whose filters for `tables` take at most `target_bytes` in all,
// as large as possible; writes the policy to *out. An sstfilter family is
// sized with its builder's FilterSize at the spec's bits (by_level's
// per-level bits are not modelled), others with `builtin_bytes`.
// InvalidArgument if even the smallest filters of x are larger or `tables`
// holds no keys.
Status SizeToMemory(const Policy& x, const std::vector<FilterTable>& tables,
                    double target_bytes, const FilterBytesFn& builtin_bytes,
                    Policy* out);
// The same for one filter of `keys_per_filter` keys in a level-1 table.
Status SizeToMemory(const Policy& x, uint64_t keys_per_filter,
                    double target_bytes, const FilterBytesFn& builtin_bytes,
                    Policy* out);

// The items of a comma-separated list, empty ones included ("a,,b": "a",
// "", "b").
std::vector<std::string> SplitList(const std::string& list);

// The shortest decimal form of v ("10", "9.5", "12.625").
std::string FormatNumber(double v);

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_POLICIES_H_
