// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The Bloom family's decoders and queries (rows bloom, blocked_bloom and
// counting_bloom of the kinds table): standard Bloom, blocked Bloom and the
// serialized counting Bloom filter. Layouts in docs/FORMAT.md.

#include <array>
#include <utility>

#include "policy/bloom/bloom.h"
#include "policy/bloom/bloom_impl.h"
#include "policy/bloom/counting_bloom_impl.h"
#include "policy/decode.h"
#include "policy/primitives.h"

namespace sstfilter {
namespace internal {
namespace {

// Largest probe count a reader accepts; builders write at most 30.
constexpr uint8_t kMaxProbes = 32;

// The Bloom kinds' params: u8 num_probes, in [1, kMaxProbes].
bool ValidProbes(const Trailer& t) {
  return t.params_size == 1 && t.params[0] != 0 && t.params[0] <= kMaxProbes;
}

// A standard or counting Bloom trailer: probes as above, a payload of at
// least one byte and at most 2^60 (so that its cell count fits 64 bits).
bool ValidProbesAndCells(const Trailer& t) {
  return ValidProbes(t) && t.payload_size != 0 &&
         t.payload_size <= (uint64_t{1} << 60);
}

// Bits (standard) or 4-bit counters (counting), and probes per key.
struct CellsState {
  uint64_t num_cells;
  int num_probes;
};
struct BlockedState {
  uint64_t num_blocks;  // of 64 bytes
  int num_probes;
};

constexpr int kPrefetchProbes = StandardBloomImpl::kQueryPrefetchProbes;

// Standard Bloom and counting Bloom share one shape: Impl is the probe
// sequence over cells (StandardBloomImpl, CountingBloomImpl).
template <class Impl>
bool CellsMayMatch(const uint8_t* data, const void* state, uint64_t hash) {
  const CellsState& s = StateOf<CellsState>(state);
  return Impl::MayMatch(hash, data, s.num_cells, s.num_probes);
}

// Hashes and prefetches the first kPrefetchProbes probes of every key of a
// round, key by key, then tests them.
template <class Impl>
void CellsMayMatchBatch(const uint8_t* data, const void* state, size_t n,
                        const BatchHashes& in, bool* results) {
  const CellsState& s = StateOf<CellsState>(state);
  InBatches(
      n,
      [&](size_t i) {
        const uint64_t hash = in.Hash(i);
        Impl::Prefetch(hash, data, s.num_cells, kPrefetchProbes,
                       PrefetchForRead());
        return hash;
      },
      [&](size_t i, uint64_t hash) {
        results[i] = Impl::MayMatch(hash, data, s.num_cells, s.num_probes);
        return true;
      });
}

constexpr KindQuery kBloomQuery = {CellsMayMatch<StandardBloomImpl>,
                                   CellsMayMatchBatch<StandardBloomImpl>};
constexpr KindQuery kCountingBloomQuery = {
    CellsMayMatch<CountingBloomImpl>, CellsMayMatchBatch<CountingBloomImpl>};

// The blocked Bloom queries for kProbes probes per key; 0: the count the
// trailer gives (BlockedState). With the count fixed the compiler unrolls
// the probe loop, which a batch of present keys runs to its end.
template <int kProbes>
int BlockedProbeCount(const BlockedState& s) {
  return kProbes != 0 ? kProbes : s.num_probes;
}

template <int kProbes>
bool BlockedMayMatch(const uint8_t* data, const void* state, uint64_t hash) {
  const BlockedState& s = StateOf<BlockedState>(state);
  return BlockedBloomImpl::MayMatch(hash, data, s.num_blocks,
                                    BlockedProbeCount<kProbes>(s));
}

// A key of a batched blocked Bloom query, located: its hash and its block.
struct LocatedKey {
  uint64_t hash;
  const uint8_t* block;
};

// Hashes every key of a round and prefetches its whole block, key by key
// (Locate, as a single query does), then tests them.
template <int kProbes>
void BlockedMayMatchBatch(const uint8_t* data, const void* state, size_t n,
                          const BatchHashes& in, bool* results) {
  const BlockedState& s = StateOf<BlockedState>(state);
  const int num_probes = BlockedProbeCount<kProbes>(s);
  InBatches(
      n,
      [&](size_t i) {
        const uint64_t hash = in.Hash(i);
        return LocatedKey{hash,
                          BlockedBloomImpl::Locate(hash, data, s.num_blocks)};
      },
      [&](size_t i, const LocatedKey& key) {
        results[i] =
            BlockedBloomImpl::MayMatchInBlock(key.hash, key.block, num_probes);
        return true;
      });
}

// Indexed by probe count: entry k (1 to kFixedProbes) has k fixed, entry 0
// reads the count from the state. Builders write 1 to 16 probes up to 34.5
// bits per key (BlockedBloomProbes).
constexpr int kFixedProbes = 16;
template <int... k>
constexpr std::array<KindQuery, sizeof...(k)> BlockedQueries(
    std::integer_sequence<int, k...>) {
  return {KindQuery{BlockedMayMatch<k>, BlockedMayMatchBatch<k>}...};
}
constexpr std::array<KindQuery, kFixedProbes + 1> kBlockedBloomQueries =
    BlockedQueries(std::make_integer_sequence<int, kFixedProbes + 1>());

}  // namespace

// Payload: every bit a probe target.
bool DecodeBloom(const Trailer& t, const uint8_t* filter, DecodedFilter* out) {
  if (!ValidProbesAndCells(t)) return false;
  out->data = filter;
  out->Set(&kBloomQuery, CellsState{t.payload_size * 8, t.params[0]});
  return true;
}

// Payload: whole 64-byte blocks, at least one.
bool DecodeBlockedBloom(const Trailer& t, const uint8_t* filter,
                        DecodedFilter* out) {
  if (!ValidProbes(t) || t.payload_size == 0 ||
      t.payload_size % BlockedBloomImpl::kBlockBytes != 0) {
    return false;
  }
  out->data = filter;
  const int probes = t.params[0];
  out->Set(&kBlockedBloomQueries[probes <= kFixedProbes ? probes : 0],
           BlockedState{t.payload_size / BlockedBloomImpl::kBlockBytes,
                        t.params[0]});
  return true;
}

// Payload: 2 counters per byte.
bool DecodeCountingBloom(const Trailer& t, const uint8_t* filter,
                         DecodedFilter* out) {
  if (!ValidProbesAndCells(t)) return false;
  out->data = filter;
  out->Set(&kCountingBloomQuery, CellsState{t.payload_size * 2, t.params[0]});
  return true;
}

}  // namespace internal
}  // namespace sstfilter
