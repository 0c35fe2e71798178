// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Builders of the two Bloom kinds. The hot code is in bloom_impl.h.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "policy/bloom/bloom_builder.h"
#include "policy/bloom/bloom_impl.h"
#include "policy/format.h"

namespace sstfilter {
namespace internal {

KindPlan PlanBloomFamily(const FilterSpec& spec, uint64_t n, bool with_fpr) {
  KindPlan plan;
  FilterParams& p = plan.params;
  p.num_keys = n;
  p.bits_per_key = spec.bits_per_key;
  if (n == 0) {
    p.kind = FilterKind::kEmpty;
    return plan;
  }
  // n * bits_per_key stays exact in a double far beyond any real n (2^53).
  const double bits = std::ceil(static_cast<double>(n) * spec.bits_per_key);
  const uint64_t standard_bytes =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(bits / 8)));
  if (spec.kind == FilterKind::kBlockedBloom &&
      standard_bytes >= kMinBlockedPayload) {
    // Whole blocks: rounded up, unless that would take the filter past
    // MaxFilterBytes (up to 63 bytes of padding); then rounded down.
    uint64_t blocks = static_cast<uint64_t>(
        std::ceil(bits / (8.0 * BlockedBloomImpl::kBlockBytes)));
    Trailer t;
    t.kind = FilterKind::kBlockedBloom;
    t.payload_size = blocks * BlockedBloomImpl::kBlockBytes;
    SetTrailerHashing(spec, &t);
    t.params_size = 1;
    const uint64_t budget = MaxFilterBytes(n, spec.bits_per_key);
    const uint64_t trailer = TrailerSize(t);
    if (t.payload_size + trailer > budget) {
      blocks = (budget - trailer) / BlockedBloomImpl::kBlockBytes;
    }
    p.kind = FilterKind::kBlockedBloom;
    p.num_probes = BlockedBloomProbes(spec.bits_per_key);
    plan.payload_bytes = blocks * BlockedBloomImpl::kBlockBytes;
    if (with_fpr) {
      p.expected_fpr = BlockedBloomFpr(
          8.0 * static_cast<double>(plan.payload_bytes) / n, p.num_probes);
    }
  } else {
    p.kind = FilterKind::kBloom;
    p.num_probes = StandardBloomProbes(spec.bits_per_key);
    Trailer t;
    t.kind = FilterKind::kBloom;
    t.payload_size = standard_bytes;
    SetTrailerHashing(spec, &t);
    t.params[0] = static_cast<uint8_t>(p.num_probes);
    t.params_size = 1;
    plan.payload_bytes = PaddedPayloadSize(t);
    if (with_fpr) {
      p.expected_fpr = StandardBloomFpr(
          8.0 * static_cast<double>(plan.payload_bytes) / n, p.num_probes);
    }
  }
  plan.kind_params_size = 1;  // num_probes
  plan.first_param = static_cast<uint8_t>(p.num_probes);
  return plan;
}

FilterSpec BloomSpecForBytes(FilterKind kind, uint64_t bytes, uint64_t n,
                             const FilterSpec& spec) {
  FilterSpec s;
  s.kind = kind;
  s.bits_per_key = (8.0 * static_cast<double>(bytes) - 0.5) / n;
  s.seed = spec.seed;
  s.keyed = spec.keyed;
  s.salt = spec.salt;
  return s;
}

FilterSpec BloomSpecWithin(uint64_t bytes, uint64_t n, const FilterSpec& spec) {
  if (bytes < kMinBlockedPayload) {
    return BloomSpecForBytes(FilterKind::kBloom, bytes, n, spec);
  }
  return BloomSpecForBytes(FilterKind::kBlockedBloom,
                           bytes - bytes % BlockedBloomImpl::kBlockBytes, n,
                           spec);
}

namespace {

// Each insertion writes to random places; in a filter larger than the
// caches each is a cache miss. Prefetching the places of the key kAhead
// positions later overlaps those misses (docs/BENCHMARKS.md, "Changes to
// the core").
constexpr size_t kAhead = 16;

void FillStandardBloom(const HashList& hashes, int num_probes, uint8_t* data,
                       uint64_t bits) {
  ForEachPrefetched<kAhead>(
      hashes,
      [&](uint64_t h) {
        StandardBloomImpl::Prefetch(h, data, bits, num_probes,
                                    PrefetchForWrite());
        return 0;
      },
      [&](uint64_t h, int) {
        StandardBloomImpl::Add(h, data, bits, num_probes);
      });
}

void FillBlockedBloom(const HashList& hashes, int num_probes, uint8_t* data,
                      uint64_t blocks) {
  ForEachPrefetched<kAhead>(
      hashes,
      [&](uint64_t h) {
        uint8_t* block = BlockedBloomImpl::Block(h, data, blocks);
        BlockedBloomImpl::PrefetchBlock(block, PrefetchForWrite());
        return block;
      },
      [&](uint64_t h, uint8_t* block) {
        BlockedBloomImpl::AddInBlock(h, block, num_probes);
      });
}

// Fills the blocked Bloom payload of `payload` bytes at dst[start, ...),
// which the caller has zeroed, with room for 63 more bytes after it. The
// payload's place in dst need not be 64-byte aligned (heap blocks start 16
// bytes into a line), and then every block spans two cache lines: twice
// the misses. So the payload is built at the next 64-byte boundary, where
// each block is one line, and moved down to its place once (one pass at
// memory speed against one miss per key).
void FillBlockedBloomAligned(const HashList& hashes, int num_probes,
                             uint64_t payload, size_t start, std::string* dst) {
  uint8_t* place = reinterpret_cast<uint8_t*>(&(*dst)[start]);
  const size_t shift = (64 - reinterpret_cast<uintptr_t>(place) % 64) % 64;
  FillBlockedBloom(hashes, num_probes, place + shift,
                   payload / BlockedBloomImpl::kBlockBytes);
  if (shift != 0) std::memmove(place, place + shift, payload);
}

}  // namespace

void AppendBloomFamilyFilter(const FilterSpec& spec, const HashList& hashes,
                             std::string* dst) {
  const KindPlan plan =
      PlanBloomFamily(spec, hashes.size(), /*with_fpr=*/false);
  const FilterParams& p = plan.params;
  const uint64_t payload = plan.payload_bytes;
  if (p.kind == FilterKind::kEmpty) {
    AppendEmptyFilter(spec, dst);
    return;
  }
  Trailer t;
  t.kind = p.kind;
  t.payload_size = payload;
  SetTrailerHashing(spec, &t);
  t.params[0] = static_cast<uint8_t>(p.num_probes);
  t.params_size = 1;
  const size_t start = dst->size();
  // One allocation: appending the trailer must not copy the payload again.
  constexpr size_t kAlignRoom = 63;  // FillBlockedBloomAligned's
  dst->reserve(start + payload + kAlignRoom + TrailerSize(t));
  if (p.kind == FilterKind::kBlockedBloom) {
    dst->resize(start + payload + kAlignRoom);  // zero-filled
    FillBlockedBloomAligned(hashes, p.num_probes, payload, start, dst);
    dst->resize(start + payload);
  } else {
    dst->resize(start + payload);  // zero-filled
    FillStandardBloom(hashes, p.num_probes,
                      reinterpret_cast<uint8_t*>(&(*dst)[start]), payload * 8);
  }
  AppendTrailer(t, dst);
}

namespace {

class BloomFamilyBuilder final : public HashListBuilder {
 public:
  explicit BloomFamilyBuilder(const FilterSpec& spec) : HashListBuilder(spec) {}

  void Finish(std::string* dst) override {
    const size_t start = dst->size();
    AppendBloomFamilyFilter(FilterSpecNow(), hashes_, dst);
    EndFilter(start, dst);
    hashes_.clear();
  }
};

}  // namespace

std::unique_ptr<FilterBuilder> NewBloomFamilyBuilder(const FilterSpec& spec) {
  return std::make_unique<BloomFamilyBuilder>(spec);
}

}  // namespace internal
}  // namespace sstfilter
