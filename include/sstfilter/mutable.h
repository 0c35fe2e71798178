// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Mutable filters: sets of keys that support Insert, Erase and Contains, for
// engines' memtables, caches and deduplication. Both serialize to the
// sstfilter format (docs/FORMAT.md), so a node can ship its filter to peers,
// who may load it back (Deserialize) or only query it (FilterReader::Open).
//
//   sstfilter::MutableFilterOptions options;
//   options.capacity = 1000000;
//   options.target_fpr = 0.001;
//   sstfilter::DynamicCuckooFilter filter;
//   sstfilter::Status s =
//       sstfilter::DynamicCuckooFilter::Create(options, &filter);
//   if (s.ok() && !filter.Insert("apple")) { /* full: not added */ }
//   filter.Contains("apple");            // true
//   filter.Erase("apple");               // true: one copy removed
//   std::string bytes;
//   filter.Serialize(&bytes);            // appends
//
// Both filters hold a multiset of keys' fingerprints: inserting a key twice
// stores it twice, and it stays until erased twice. Erase(key) REQUIRES that
// key was inserted more times than erased. Erasing a key that was never
// inserted is unsafe: it may remove the fingerprint of another key that
// shares it, which then reads as absent (a false negative). Erase detects,
// and refuses, only the case where the key is certainly absent.
//
// Keyed (sstfilter/secret.h): with options.secret set, every key is hashed
// with secret->Hash(key, seed) and the serialized filter is keyed (it stores
// the secret's key id, never the secret). Only a holder of the same secret
// may load it (Deserialize) or read it (FilterReader::Open); a reader
// without it matches every key.
//
// Neither class is thread-safe for writes; concurrent const calls are fine.

#ifndef SSTFILTER_MUTABLE_H_
#define SSTFILTER_MUTABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sstfilter/hash.h"
#include "sstfilter/status.h"

namespace sstfilter {

class FilterSecret;  // sstfilter/secret.h

struct MutableFilterOptions {
  // The number of keys the filter is sized for, >= 1.
  uint64_t capacity = 0;
  // The false-positive rate wanted with `capacity` keys inside, in (0, 1).
  // Ignored when bits_per_key > 0.
  double target_fpr = 0.01;
  // If > 0, the size instead of target_fpr, as a FilterSpec would say it:
  // counters per key of a counting Bloom filter (each counter is 4 bits, so
  // 4x the memory), fingerprint bits of a cuckoo filter (rounded).
  double bits_per_key = 0;
  // Seed of Hash64 for every key; stored in the serialized filter.
  uint64_t seed = 0;
  // If set, keys are hashed with secret->Hash(key, seed) instead of Hash64:
  // a keyed filter. It must outlive the filter.
  const FilterSecret* secret = nullptr;
};

// A cuckoo filter (4-slot buckets, partial-key cuckoo hashing) that accepts
// inserts and erases after it is built. Sized for options.capacity keys at
// 95% load; Insert fails, changing nothing, when it finds no room, which
// happens rarely below 95% load and ever more often above it. It never drops
// a key it accepted.
//
// Memory: capacity / 0.95 * f bits for f fingerprint bits; FPR at load a:
// 1 - (1 - 1/(2^f - 1))^(8 a) (CuckooFpr in params.h).
class DynamicCuckooFilter {
 public:
  // A filter with no room: Contains is false and Insert fails. A filter
  // moved from is one too.
  DynamicCuckooFilter();
  ~DynamicCuckooFilter();
  DynamicCuckooFilter(DynamicCuckooFilter&&) noexcept;
  DynamicCuckooFilter& operator=(DynamicCuckooFilter&&) noexcept;
  DynamicCuckooFilter(const DynamicCuckooFilter&) = delete;
  DynamicCuckooFilter& operator=(const DynamicCuckooFilter&) = delete;

  // Makes an empty filter for `options`. On error *out is unchanged and the
  // Status names the bad option.
  static Status Create(const MutableFilterOptions& options,
                       DynamicCuckooFilter* out);

  // Adds a key. Returns false, with the filter unchanged, if no slot could
  // be freed for it: the filter is full.
  bool Insert(std::string_view key) { return InsertHash(HashKey(key)); }
  // Removes one copy of a key; false (nothing changed) if it is certainly
  // absent. REQUIRES: the key is in the filter (see the file comment).
  bool Erase(std::string_view key) { return EraseHash(HashKey(key)); }
  // False only if the key is certainly absent.
  bool Contains(std::string_view key) const {
    return ContainsHash(HashKey(key));
  }

  // Hash64(key, seed()), or for a keyed filter secret->Hash(key, seed()).
  uint64_t HashKey(std::string_view key) const;
  // The same as above for hash = HashKey(key).
  bool InsertHash(uint64_t hash);
  bool EraseHash(uint64_t hash);
  bool ContainsHash(uint64_t hash) const;

  // Fingerprints stored: inserts that succeeded minus erases that did.
  uint64_t size() const;
  // Slots, 0 for a filter with no room. size() / num_slots() is the load
  // factor.
  uint64_t num_slots() const;
  int fingerprint_bits() const;
  uint64_t seed() const;
  // The secret of a keyed filter, else nullptr.
  const FilterSecret* secret() const;

  // Appends the filter as a kind-5 ("dynamic_cuckoo") sstfilter filter, or,
  // for a default-constructed one, a kind-0 (empty) filter.
  void Serialize(std::string* dst) const;
  // Loads bytes that Serialize wrote. A filter that is not a well-formed
  // kind-5 (or kind-0) filter is a Corruption error; keyed bytes need the
  // writer's secret (same key_id()), else InvalidArgument (a table of
  // unknown probe positions cannot take writes; FilterReader::Open of the
  // bytes still answers "may match"). On error *out is unchanged. Unkeyed
  // bytes load unkeyed and ignore `secret`, which must outlive the filter.
  static Status Deserialize(std::string_view bytes, DynamicCuckooFilter* out,
                            const FilterSecret* secret = nullptr);

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;  // null: the filter with no room
};

// A counting Bloom filter: a standard Bloom filter of 4-bit counters.
// Counters saturate at 15 and then never change, so erases never cause a
// false negative; a filter whose counters saturate only loses the ability
// to forget. Insert always succeeds; the FPR grows past the target when
// more than options.capacity keys are inside.
//
// Memory: 4 bits per counter, capacity * counters-per-key counters.
class CountingBloomFilter {
 public:
  // A filter of no counters: Contains is false, Insert does nothing. A
  // filter moved from is one too.
  CountingBloomFilter();
  ~CountingBloomFilter();
  CountingBloomFilter(CountingBloomFilter&&) noexcept;
  CountingBloomFilter& operator=(CountingBloomFilter&&) noexcept;
  CountingBloomFilter(const CountingBloomFilter&) = delete;
  CountingBloomFilter& operator=(const CountingBloomFilter&) = delete;

  // Makes an empty filter for `options`. On error *out is unchanged and the
  // Status names the bad option.
  static Status Create(const MutableFilterOptions& options,
                       CountingBloomFilter* out);

  void Insert(std::string_view key) { InsertHash(HashKey(key)); }
  // Removes one copy of a key; false (nothing changed) if it is certainly
  // absent. REQUIRES: the key is in the filter (see the file comment).
  bool Erase(std::string_view key) { return EraseHash(HashKey(key)); }
  bool Contains(std::string_view key) const {
    return ContainsHash(HashKey(key));
  }

  // Hash64(key, seed()), or for a keyed filter secret->Hash(key, seed()).
  uint64_t HashKey(std::string_view key) const;
  // The same as above for hash = HashKey(key).
  void InsertHash(uint64_t hash);
  bool EraseHash(uint64_t hash);
  bool ContainsHash(uint64_t hash) const;

  uint64_t num_counters() const;
  int num_probes() const;
  uint64_t seed() const;
  // The secret of a keyed filter, else nullptr.
  const FilterSecret* secret() const;
  // Counters stuck at 15 (never decremented again).
  uint64_t CountSaturated() const;

  // Appends the filter as a kind-4 ("counting_bloom") sstfilter filter, or,
  // for a default-constructed one, a kind-0 (empty) filter.
  void Serialize(std::string* dst) const;
  // Loads bytes that Serialize wrote, as DynamicCuckooFilter::Deserialize
  // does, for kind 4 (or kind 0).
  static Status Deserialize(std::string_view bytes, CountingBloomFilter* out,
                            const FilterSecret* secret = nullptr);

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;  // null: the filter of no counters
};

}  // namespace sstfilter

#endif  // SSTFILTER_MUTABLE_H_
