// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Builders of the two Bloom kinds. The hot code is in bloom_impl.h.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "policy/bloom_builder.h"
#include "policy/bloom_impl.h"
#include "policy/format.h"

namespace sstfilter {
namespace internal {

namespace {

// BlockedBloomProbes minimises a sum of ~100 Poisson terms for each of 16
// probe counts: far too slow for every Finish of a small filter. A builder
// asks for the same bits per key again and again; remember the last answer.
int CachedBlockedBloomProbes(double bits_per_key) {
  thread_local double last_bits = -1;
  thread_local int last_probes = 0;
  if (bits_per_key != last_bits) {
    last_probes = BlockedBloomProbes(bits_per_key);
    last_bits = bits_per_key;
  }
  return last_probes;
}

}  // namespace

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
    p.num_probes = CachedBlockedBloomProbes(spec.bits_per_key);
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
  dst->reserve(start + payload + TrailerSize(t));
  dst->resize(start + payload);  // zero-filled
  uint8_t* data = reinterpret_cast<uint8_t*>(&(*dst)[start]);
  // Each insertion writes to random places; in a filter larger than the
  // caches each is a cache miss. Prefetching the places of the key kAhead
  // positions later overlaps those misses (docs/BENCHMARKS.md, "Changes to
  // the core").
  constexpr size_t kAhead = 16;
  const size_t n = hashes.size();
  if (p.kind == FilterKind::kBlockedBloom) {
    const uint64_t blocks = payload / BlockedBloomImpl::kBlockBytes;
    for (size_t i = 0; i < n; i++) {
      if (i + kAhead < n) {
        BlockedBloomImpl::Prefetch(hashes[i + kAhead], data, blocks,
                                   PrefetchForWrite());
      }
      BlockedBloomImpl::Add(hashes[i], data, blocks, p.num_probes);
    }
  } else {
    const uint64_t bits = payload * 8;
    for (size_t i = 0; i < n; i++) {
      if (i + kAhead < n) {
        StandardBloomImpl::Prefetch(hashes[i + kAhead], data, bits,
                                    p.num_probes, PrefetchForWrite());
      }
      StandardBloomImpl::Add(hashes[i], data, bits, p.num_probes);
    }
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
