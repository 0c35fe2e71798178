// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// FilterReader: one reader for every kind. Open validates the trailer and
// the sizes it implies, then MayMatchHash dispatches on a mode byte. Any
// inconsistency leaves the reader in kAlwaysMatch: a damaged filter costs
// reads, never a false negative.

#include <algorithm>

#include "policy/bloom_impl.h"
#include "policy/counting_bloom_impl.h"
#include "policy/cuckoo_impl.h"
#include "policy/format.h"
#include "policy/primitives.h"
#include "policy/ribbon.h"
#include "policy/ribbon_impl.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"

namespace sstfilter {

using internal::BlockedBloomImpl;
using internal::CountingBloomImpl;
using internal::StandardBloomImpl;

namespace {
// Largest probe count a reader accepts; builders write at most 30.
constexpr uint8_t kMaxProbes = 32;
// Keys hashed per round of the batched query: enough to overlap many cache
// misses, small enough for the stack.
constexpr size_t kBatch = 32;

struct RibbonParams {
  bool dense = false;
  uint64_t p1 = 0;  // dense: slots m; banded: num_blocks
  uint32_t p2 = 0;  // dense: columns; banded: r
  uint32_t salt = 0;
  uint64_t k = 0;  // banded: blocks with r + 1 columns
};

// params: u8 form, u8 salt, then dense: u8 m, u8 r, 0, 0; banded: u32le
// num_blocks (layout in policy/ribbon_impl.h and docs/FORMAT.md).
bool ParseRibbonParams(const internal::Trailer& t, RibbonParams* g) {
  if (t.params_size != internal::kRibbonParamsSize) return false;
  const uint8_t* p = t.params;
  g->salt = p[1];
  if (p[0] == 0) {
    // Dense: 1 <= m <= 64 slots, 1 <= r <= 32 columns, ceil(m r / 8) bytes.
    const uint32_t m = p[2], cols = p[3];
    if (m == 0 || m > internal::kRibbonMaxDenseSlots || cols == 0 ||
        cols > internal::kRibbonMaxColumns || p[4] != 0 || p[5] != 0 ||
        t.payload_size != (uint64_t{m} * cols + 7) / 8) {
      return false;
    }
    g->dense = true;
    g->p1 = m;
    g->p2 = cols;
    return true;
  }
  if (p[0] != 1) return false;
  // Banded: num_blocks >= 2, whole words W = num_blocks r + k with
  // 1 <= r <= 32 and k < num_blocks (k = 0 if r = 32).
  const uint64_t blocks = internal::DecodeFixed32(p + 2);
  if (blocks < 2 || t.payload_size % 8 != 0) return false;
  const uint64_t words = t.payload_size / 8;
  const uint64_t cols = words / blocks, k = words % blocks;
  if (cols == 0 || cols > internal::kRibbonMaxColumns ||
      (cols == internal::kRibbonMaxColumns && k != 0)) {
    return false;
  }
  g->p1 = blocks;
  g->p2 = static_cast<uint32_t>(cols);
  g->k = k;
  return true;
}

internal::RibbonBanded MakeBanded(const uint8_t* data, uint64_t blocks,
                                  uint32_t r, uint32_t salt, uint64_t k) {
  internal::RibbonBanded g;
  g.data = data;
  g.num_blocks = blocks;
  g.r = r;
  g.k = k;
  g.salt = salt;
  return g;
}
}  // namespace

FilterReader FilterReader::Open(std::string_view filter) {
  FilterReader r;  // matches everything until proven readable
  internal::Trailer t;
  const auto* data = reinterpret_cast<const uint8_t*>(filter.data());
  if (!internal::ParseTrailer(data, filter.size(), &t)) return r;
  FilterReader ok;
  ok.kind_ = t.kind;
  ok.data_ = data;
  ok.payload_size_ = t.payload_size;
  ok.seed_ = t.seed;
  switch (t.kind) {
    case FilterKind::kEmpty:
      if (t.params_size != 0 || t.payload_size != 0) return r;
      ok.mode_ = Mode::kNeverMatch;
      return ok;
    case FilterKind::kBloom:
      // params: u8 num_probes. Payload: at least one byte, all bits used.
      if (t.params_size != 1 || t.params[0] == 0 || t.params[0] > kMaxProbes ||
          t.payload_size == 0 || t.payload_size > (uint64_t{1} << 60)) {
        return r;
      }
      ok.mode_ = Mode::kBloom;
      ok.p1_ = t.payload_size * 8;
      ok.p2_ = t.params[0];
      return ok;
    case FilterKind::kBlockedBloom:
      // params: u8 num_probes. Payload: whole 64-byte blocks, at least one.
      if (t.params_size != 1 || t.params[0] == 0 || t.params[0] > kMaxProbes ||
          t.payload_size == 0 ||
          t.payload_size % BlockedBloomImpl::kBlockBytes != 0) {
        return r;
      }
      ok.mode_ = Mode::kBlockedBloom;
      ok.p1_ = t.payload_size / BlockedBloomImpl::kBlockBytes;
      ok.p2_ = t.params[0];
      return ok;
    case FilterKind::kCuckoo:
    case FilterKind::kDynamicCuckoo: {
      // params: u8 f (fingerprint bits, 4..32), u8 salt. Payload: exactly
      // ceil(f N / 2) bytes for N >= 1 buckets of 4 f bits.
      if (t.params_size != 2 || t.params[0] < internal::kCuckooMinTagBits ||
          t.params[0] > internal::kCuckooMaxTagBits || t.payload_size == 0 ||
          t.payload_size > (uint64_t{1} << 56)) {
        return r;
      }
      const int f = t.params[0];
      const uint64_t buckets =
          internal::CuckooBucketsForPayload(t.payload_size, f);
      if (buckets == 0 ||
          internal::CuckooPayloadBytes(buckets, f) != t.payload_size) {
        return r;
      }
      ok.mode_ =
          t.kind == FilterKind::kCuckoo ? Mode::kCuckoo : Mode::kDynamicCuckoo;
      ok.p1_ = buckets;
      ok.p2_ = static_cast<uint32_t>(f);
      ok.p3_ = t.params[1];
      return ok;
    }
    case FilterKind::kCountingBloom:
      // params: u8 num_probes. Payload: 2 counters per byte, at least one byte.
      if (t.params_size != 1 || t.params[0] == 0 || t.params[0] > kMaxProbes ||
          t.payload_size == 0 || t.payload_size > (uint64_t{1} << 60)) {
        return r;
      }
      ok.mode_ = Mode::kCountingBloom;
      ok.p1_ = t.payload_size * 2;
      ok.p2_ = t.params[0];
      return ok;
    case FilterKind::kRibbon: {
      RibbonParams g;
      if (!ParseRibbonParams(t, &g)) return r;
      ok.mode_ = g.dense ? Mode::kRibbonDense : Mode::kRibbonBanded;
      ok.p1_ = g.p1;
      ok.p2_ = g.p2;
      ok.p3_ = g.salt;
      ok.p4_ = g.k;
      return ok;
    }
    default:
      return r;  // a kind this version cannot read
  }
}

bool FilterReader::MayMatch(std::string_view key) const {
  switch (mode_) {
    case Mode::kAlwaysMatch:
      return true;
    case Mode::kNeverMatch:
      return false;
    default:
      return MayMatchHash(Hash64(key, seed_));
  }
}

bool FilterReader::MayMatchHash(uint64_t hash) const {
  switch (mode_) {
    case Mode::kNeverMatch:
      return false;
    case Mode::kBloom:
      return StandardBloomImpl::MayMatch(hash, data_, p1_,
                                         static_cast<int>(p2_));
    case Mode::kBlockedBloom:
      return BlockedBloomImpl::MayMatch(hash, data_, p1_,
                                        static_cast<int>(p2_));
    case Mode::kCuckoo:
    case Mode::kDynamicCuckoo:
      return internal::CuckooMayMatch(hash, data_, payload_size_, p1_,
                                      static_cast<int>(p2_), p3_);
    case Mode::kCountingBloom:
      return CountingBloomImpl::MayMatch(hash, data_, p1_,
                                         static_cast<int>(p2_));
    case Mode::kRibbonBanded:
      return MakeBanded(data_, p1_, p2_, p3_, p4_).MayMatch(hash);
    case Mode::kRibbonDense: {
      internal::RibbonDense g;
      g.data = data_;
      g.m = static_cast<uint32_t>(p1_);
      g.r = p2_;
      g.salt = p3_;
      return g.MayMatch(hash);
    }
    default:
      return true;
  }
}

void FilterReader::MayMatchHashes(size_t n, const uint64_t* hashes,
                                  bool* results) const {
  switch (mode_) {
    case Mode::kBlockedBloom: {
      const int k = static_cast<int>(p2_);
      for (size_t i = 0; i < n; i += kBatch) {
        const size_t m = std::min(kBatch, n - i);
        const uint8_t* blocks[kBatch];
        for (size_t j = 0; j < m; j++) {
          blocks[j] = BlockedBloomImpl::Block(hashes[i + j], data_, p1_);
          BlockedBloomImpl::PrefetchBlock(blocks[j],
                                          internal::PrefetchForRead());
        }
        for (size_t j = 0; j < m; j++) {
          results[i + j] =
              BlockedBloomImpl::MayMatchInBlock(hashes[i + j], blocks[j], k);
        }
      }
      return;
    }
    case Mode::kBloom:
      for (size_t i = 0; i < n; i += kBatch) {
        const size_t m = std::min(kBatch, n - i);
        for (size_t j = 0; j < m; j++) {
          StandardBloomImpl::Prefetch(hashes[i + j], data_, p1_,
                                      StandardBloomImpl::kQueryPrefetchProbes,
                                      internal::PrefetchForRead());
        }
        for (size_t j = 0; j < m; j++) {
          results[i + j] = MayMatchHash(hashes[i + j]);
        }
      }
      return;
    case Mode::kCuckoo:
    case Mode::kDynamicCuckoo:
      // Both buckets of every key are prefetched before any is read.
      internal::CuckooMayMatchBatch(n, hashes, data_, payload_size_, p1_,
                                    static_cast<int>(p2_), p3_, results);
      return;
    case Mode::kRibbonBanded: {
      const internal::RibbonBanded g = MakeBanded(data_, p1_, p2_, p3_, p4_);
      for (size_t i = 0; i < n; i += kBatch) {
        const size_t m = std::min(kBatch, n - i);
        for (size_t j = 0; j < m; j++) g.Prefetch(hashes[i + j]);
        for (size_t j = 0; j < m; j++)
          results[i + j] = g.MayMatch(hashes[i + j]);
      }
      return;
    }
    case Mode::kCountingBloom:
      for (size_t i = 0; i < n; i += kBatch) {
        const size_t m = std::min(kBatch, n - i);
        for (size_t j = 0; j < m; j++) {
          CountingBloomImpl::Prefetch(hashes[i + j], data_, p1_,
                                      StandardBloomImpl::kQueryPrefetchProbes,
                                      internal::PrefetchForRead());
        }
        for (size_t j = 0; j < m; j++) {
          results[i + j] = MayMatchHash(hashes[i + j]);
        }
      }
      return;
    default:
      for (size_t i = 0; i < n; i++) results[i] = MayMatchHash(hashes[i]);
      return;
  }
}

void FilterReader::MayMatch(size_t n, const std::string_view* keys,
                            bool* results) const {
  if (mode_ == Mode::kAlwaysMatch || mode_ == Mode::kNeverMatch) {
    std::fill(results, results + n, mode_ == Mode::kAlwaysMatch);
    return;
  }
  uint64_t hashes[kBatch];
  for (size_t i = 0; i < n; i += kBatch) {
    const size_t m = std::min(kBatch, n - i);
    for (size_t j = 0; j < m; j++) hashes[j] = Hash64(keys[i + j], seed_);
    MayMatchHashes(m, hashes, results + i);
  }
}

}  // namespace sstfilter
