// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: the contract between the reader (reader.cc) and each family's
// decoder and query functions. A family's decoder (declared in its
// <family>.h: bloom.h, cuckoo.h, ribbon.h) validates a trailer and fills a
// DecodedFilter; the reader then calls the KindQuery it chose. Families
// include this header, not kinds.h: the table of kinds (kinds.h) points
// at the families, never back.

#ifndef SSTFILTER_POLICY_DECODE_H_
#define SSTFILTER_POLICY_DECODE_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "policy/format.h"
#include "sstfilter/filter.h"

namespace sstfilter {
namespace internal {

// How a reader answers for one kind: a decoder picks it, the reader calls
// it. `state` is the kind's decoded parameters (a struct the decoder
// stored with DecodedFilter::Set), `data` the payload.
// The hashes of a batched query: hashes the caller computed, or keys that
// the kind hashes one at a time as it locates and prefetches them, so that
// hashing a key overlaps the cache misses of the keys before it (RocksDB's
// MultiGet hands a filter keys). Hash(i) is the i-th hash.
struct BatchHashes {
  size_t first = 0;                  // Hash(i) is item first + i
  const uint64_t* hashes = nullptr;  // if set, the keys are not read
  // Otherwise key j is key_at(keys, j), hashed with seed and secret.
  FilterReader::KeyAt key_at = nullptr;
  const void* keys = nullptr;
  uint64_t seed = 0;
  const FilterSecret* secret = nullptr;

  uint64_t Hash(size_t i) const {
    return hashes != nullptr
               ? hashes[first + i]
               : FilterHash(key_at(keys, first + i), seed, secret);
  }
};

struct KindQuery {
  bool (*may_match)(const uint8_t* data, const void* state, uint64_t hash);
  // results[i] = may_match(in.Hash(i)) for i < n, n <= kPrefetchBatch;
  // prefetches first where that pays (InBatches, primitives.h), calling
  // in.Hash(i) once per key, in the pass that prefetches.
  void (*may_match_batch)(const uint8_t* data, const void* state, size_t n,
                          const BatchHashes& in, bool* results);
};

// What a decoder fills in: the payload a query reads (a decoder may skip a
// header at its start), the query, and the parameters, in the reader's
// fixed storage (FilterReader::kStateBytes, opaque in the public header).
struct DecodedFilter {
  const uint8_t* data = nullptr;
  const KindQuery* query = nullptr;
  void* state = nullptr;

  template <class State>
  void Set(const KindQuery* q, const State& s) {
    static_assert(std::is_trivially_copyable<State>::value &&
                      std::is_trivially_destructible<State>::value,
                  "a reader is copied as bytes");
    static_assert(sizeof(State) <= FilterReader::kStateBytes &&
                      alignof(State) <= alignof(uint64_t),
                  "a kind's reader state must fit FilterReader's storage");
    new (state) State(s);
    query = q;
  }
};

// The state a KindQuery's functions get back: the State their decoder set.
template <class State>
inline const State& StateOf(const void* state) {
  return *std::launder(static_cast<const State*>(state));
}

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_DECODE_H_
