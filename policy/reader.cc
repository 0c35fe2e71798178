// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// FilterReader: one reader for every kind. Open validates the trailer and
// the sizes it implies (one Decode function per kind), then MayMatchHash
// dispatches on a mode byte. Any inconsistency leaves the reader in
// kAlwaysMatch: a damaged filter costs reads, never a false negative.

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
#include "sstfilter/secret.h"

namespace sstfilter {

using internal::BlockedBloomImpl;
using internal::CountingBloomImpl;
using internal::InBatches;
using internal::PrefetchForRead;
using internal::StandardBloomImpl;

namespace {

// Largest probe count a reader accepts; builders write at most 30.
constexpr uint8_t kMaxProbes = 32;

// The Bloom kinds' params: u8 num_probes, in [1, kMaxProbes].
bool ValidProbes(const internal::Trailer& t) {
  return t.params_size == 1 && t.params[0] != 0 && t.params[0] <= kMaxProbes;
}

// A standard or counting Bloom trailer: probes as above, a payload of at
// least one byte and at most 2^60 (so that its bit count fits 64 bits).
bool ValidProbesAndCells(const internal::Trailer& t) {
  return ValidProbes(t) && t.payload_size != 0 &&
         t.payload_size <= (uint64_t{1} << 60);
}

internal::RibbonBanded Banded(const uint8_t* data, uint64_t blocks, uint32_t r,
                              uint32_t salt, uint64_t wide) {
  internal::RibbonBanded g;
  g.data = data;
  g.num_blocks = blocks;
  g.r = r;
  g.k = wide;
  g.salt = salt;
  return g;
}

}  // namespace

// Payload: every bit a probe target.
bool FilterReader::DecodeBloom(const internal::Trailer& t) {
  if (!ValidProbesAndCells(t)) return false;
  mode_ = Mode::kBloom;
  bloom_ = {t.payload_size * 8, t.params[0]};
  return true;
}

// Payload: whole 64-byte blocks, at least one.
bool FilterReader::DecodeBlockedBloom(const internal::Trailer& t) {
  if (!ValidProbes(t) || t.payload_size == 0 ||
      t.payload_size % BlockedBloomImpl::kBlockBytes != 0) {
    return false;
  }
  mode_ = Mode::kBlockedBloom;
  blocked_ = {t.payload_size / BlockedBloomImpl::kBlockBytes, t.params[0]};
  return true;
}

// Payload: 2 counters per byte.
bool FilterReader::DecodeCountingBloom(const internal::Trailer& t) {
  if (!ValidProbesAndCells(t)) return false;
  mode_ = Mode::kCountingBloom;
  counting_ = {t.payload_size * 2, t.params[0]};
  return true;
}

// Static and dynamic cuckoo. Params: u8 f (fingerprint bits, 4..32), u8
// salt. Payload: exactly ceil(f N / 2) bytes for N >= 1 buckets of 4 f bits.
bool FilterReader::DecodeCuckoo(const internal::Trailer& t) {
  if (t.params_size != 2 || t.params[0] < internal::kCuckooMinTagBits ||
      t.params[0] > internal::kCuckooMaxTagBits || t.payload_size == 0 ||
      t.payload_size > (uint64_t{1} << 56)) {
    return false;
  }
  const int f = t.params[0];
  const uint64_t buckets = internal::CuckooBucketsForPayload(t.payload_size, f);
  if (buckets == 0 ||
      internal::CuckooPayloadBytes(buckets, f) != t.payload_size) {
    return false;
  }
  mode_ = Mode::kCuckoo;
  cuckoo_ = {buckets, f, t.params[1]};
  return true;
}

// Params: u8 form, u8 salt, then dense (form 0): u8 m, u8 r, 0, 0; banded
// (form 1): u32le num_blocks. Layout in policy/ribbon_impl.h.
bool FilterReader::DecodeRibbon(const internal::Trailer& t) {
  if (t.compact) {
    // Compact dense: header byte (salt bits 0..5, bit 4 of r - 1 in bit 6,
    // bit 7 clear), then exactly ceil(m r / 8) column bytes.
    const uint8_t h = data_[0];
    if (t.params_size != 1 || (h & 0x80) != 0) return false;
    const uint32_t cols = ((((h >> 6) & 1u) << 4) | t.params[0]) + 1u;
    const uint64_t m = internal::RibbonCompactSlots(t.payload_size, cols);
    if (m == 0 || t.payload_size - 1 != (m * cols + 7) / 8) return false;
    mode_ = Mode::kRibbonDense;
    ribbon_ = {m, cols, static_cast<uint32_t>(h & 63), 0};
    data_ += 1;
    return true;
  }
  if (t.params_size != internal::kRibbonParamsSize) return false;
  const uint8_t* p = t.params;
  if (p[0] == 0) {
    // Dense: 1 <= m <= 64 slots, 1 <= r <= 32 columns, ceil(m r / 8) bytes.
    const uint32_t m = p[2], cols = p[3];
    if (m == 0 || m > internal::kRibbonMaxDenseSlots || cols == 0 ||
        cols > internal::kRibbonMaxColumns || p[4] != 0 || p[5] != 0 ||
        t.payload_size != (uint64_t{m} * cols + 7) / 8) {
      return false;
    }
    mode_ = Mode::kRibbonDense;
    ribbon_ = {m, cols, p[1], 0};
    return true;
  }
  if (p[0] != 1) return false;
  // Banded: num_blocks >= 2, whole words W = num_blocks r + k with
  // 1 <= r <= 32 and k < num_blocks (k = 0 if r = 32).
  const uint64_t blocks = internal::DecodeFixed32(p + 2);
  if (blocks < 2 || t.payload_size % 8 != 0) return false;
  const uint64_t words = t.payload_size / 8;
  const uint64_t cols = words / blocks, wide = words % blocks;
  if (cols == 0 || cols > internal::kRibbonMaxColumns ||
      (cols == internal::kRibbonMaxColumns && wide != 0)) {
    return false;
  }
  mode_ = Mode::kRibbonBanded;
  ribbon_ = {blocks, static_cast<uint32_t>(cols), p[1], wide};
  return true;
}

FilterReader FilterReader::Open(std::string_view filter,
                                const FilterSecret* secret) {
  internal::Trailer t;
  FilterReader r = OpenUnverified(filter, secret, &t);
  if (r.valid() &&
      !internal::VerifyPayload(reinterpret_cast<const uint8_t*>(filter.data()),
                               filter.size(), t)) {
    return FilterReader();
  }
  return r;
}

bool FilterReader::MayMatchOnce(std::string_view filter, std::string_view key,
                                const FilterSecret* secret) {
  internal::Trailer t;
  const FilterReader r = OpenUnverified(filter, secret, &t);
  // "May match" needs no check: damage can only cost a read. A "no" is
  // given only if the bytes are as written.
  return r.MayMatch(key) ||
         !internal::VerifyPayload(
             reinterpret_cast<const uint8_t*>(filter.data()), filter.size(), t);
}

FilterReader FilterReader::OpenUnverified(std::string_view filter,
                                          const FilterSecret* secret,
                                          internal::Trailer* out) {
  internal::Trailer& t = *out;
  const auto* data = reinterpret_cast<const uint8_t*>(filter.data());
  if (!internal::ParseTrailer(data, filter.size(), &t)) return FilterReader();
  // A keyed filter without the writer's secret: its probe positions are
  // unknown, so it matches every key.
  if (t.keyed && (secret == nullptr || secret->key_id() != t.key_id)) {
    return FilterReader();
  }
  FilterReader r;
  r.kind_ = t.kind;
  r.data_ = data;
  r.payload_size_ = t.payload_size;
  r.seed_ = t.seed;
  r.secret_ = t.keyed ? secret : nullptr;
  bool ok = false;
  switch (t.kind) {
    case FilterKind::kEmpty:
      ok = t.params_size == 0 && t.payload_size == 0;
      r.mode_ = Mode::kNeverMatch;
      break;
    case FilterKind::kBloom:
      ok = r.DecodeBloom(t);
      break;
    case FilterKind::kBlockedBloom:
      ok = r.DecodeBlockedBloom(t);
      break;
    case FilterKind::kCuckoo:
    case FilterKind::kDynamicCuckoo:
      ok = r.DecodeCuckoo(t);
      break;
    case FilterKind::kCountingBloom:
      ok = r.DecodeCountingBloom(t);
      break;
    case FilterKind::kRibbon:
      ok = r.DecodeRibbon(t);
      break;
    default:
      break;  // a kind this version cannot read
  }
  return ok ? r : FilterReader();  // matches everything unless readable
}

bool FilterReader::MayMatch(std::string_view key) const {
  switch (mode_) {
    case Mode::kAlwaysMatch:
      return true;
    case Mode::kNeverMatch:
      return false;
    default:
      return MayMatchHash(Hash(key));
  }
}

uint64_t FilterReader::Hash(std::string_view key) const {
  return internal::FilterHash(key, seed_, secret_);
}

bool FilterReader::MayMatchHash(uint64_t hash) const {
  switch (mode_) {
    case Mode::kNeverMatch:
      return false;
    case Mode::kBloom:
      return StandardBloomImpl::MayMatch(hash, data_, bloom_.num_bits,
                                         bloom_.num_probes);
    case Mode::kBlockedBloom:
      return BlockedBloomImpl::MayMatch(hash, data_, blocked_.num_blocks,
                                        blocked_.num_probes);
    case Mode::kCuckoo:
      return internal::CuckooMayMatch(hash, data_, payload_size_,
                                      cuckoo_.num_buckets,
                                      cuckoo_.fingerprint_bits, cuckoo_.salt);
    case Mode::kCountingBloom:
      return CountingBloomImpl::MayMatch(hash, data_, counting_.num_counters,
                                         counting_.num_probes);
    case Mode::kRibbonBanded:
      return Banded(data_, ribbon_.size, ribbon_.columns, ribbon_.salt,
                    ribbon_.wide)
          .MayMatch(hash);
    case Mode::kRibbonDense: {
      internal::RibbonDense g;
      g.data = data_;
      g.m = static_cast<uint32_t>(ribbon_.size);
      g.r = ribbon_.columns;
      g.salt = ribbon_.salt;
      return g.MayMatch(hash);
    }
    default:
      return true;
  }
}

// Prefetches what every key of a round needs first (InBatches), then
// tests them: the whole block (blocked Bloom), both buckets (cuckoo), the
// first kQueryPrefetchProbes probes (standard and counting Bloom).
void FilterReader::MayMatchHashes(size_t n, const uint64_t* hashes,
                                  bool* results) const {
  const auto store = [&](size_t i, bool match) {
    results[i] = match;
    return true;
  };
  constexpr int kProbes = StandardBloomImpl::kQueryPrefetchProbes;
  switch (mode_) {
    case Mode::kBlockedBloom:
      InBatches(
          n,
          [&](size_t i) {
            const uint8_t* block =
                BlockedBloomImpl::Block(hashes[i], data_, blocked_.num_blocks);
            BlockedBloomImpl::PrefetchBlock(block, PrefetchForRead());
            return block;
          },
          [&](size_t i, const uint8_t* block) {
            return store(i, BlockedBloomImpl::MayMatchInBlock(
                                hashes[i], block, blocked_.num_probes));
          });
      return;
    case Mode::kBloom:
      InBatches(
          n,
          [&](size_t i) {
            StandardBloomImpl::Prefetch(hashes[i], data_, bloom_.num_bits,
                                        kProbes, PrefetchForRead());
            return hashes[i];
          },
          [&](size_t i, uint64_t hash) {
            return store(
                i, StandardBloomImpl::MayMatch(hash, data_, bloom_.num_bits,
                                               bloom_.num_probes));
          });
      return;
    case Mode::kCountingBloom:
      InBatches(
          n,
          [&](size_t i) {
            CountingBloomImpl::Prefetch(hashes[i], data_,
                                        counting_.num_counters, kProbes,
                                        PrefetchForRead());
            return hashes[i];
          },
          [&](size_t i, uint64_t hash) {
            return store(i, CountingBloomImpl::MayMatch(hash, data_,
                                                        counting_.num_counters,
                                                        counting_.num_probes));
          });
      return;
    case Mode::kRibbonBanded: {
      const internal::RibbonBanded g = Banded(
          data_, ribbon_.size, ribbon_.columns, ribbon_.salt, ribbon_.wide);
      InBatches(
          n,
          [&](size_t i) {
            g.Prefetch(hashes[i]);
            return hashes[i];
          },
          [&](size_t i, uint64_t hash) { return store(i, g.MayMatch(hash)); });
      return;
    }
    case Mode::kCuckoo:
      internal::CuckooMayMatchBatch(
          n, hashes, data_, payload_size_, cuckoo_.num_buckets,
          cuckoo_.fingerprint_bits, cuckoo_.salt, results);
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
  uint64_t hashes[internal::kPrefetchBatch];
  for (size_t i = 0; i < n; i += internal::kPrefetchBatch) {
    const size_t m = std::min(internal::kPrefetchBatch, n - i);
    for (size_t j = 0; j < m; j++) hashes[j] = Hash(keys[i + j]);
    MayMatchHashes(m, hashes, results + i);
  }
}

}  // namespace sstfilter
