// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Builders of the two Bloom kinds. The hot code is in bloom_impl.h.

#include "policy/bloom/bloom.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policy/bloom/bloom_impl.h"
#include "policy/format.h"
#include "sstfilter/params.h"

namespace sstfilter {

// The Bloom kinds' FPR and probe formulas (sstfilter/params.h), used by
// their planners below and by every caller that sizes a Bloom filter.

double StandardBloomFpr(double bits_per_key, int num_probes) {
  if (bits_per_key <= 0 || num_probes <= 0) return 1.0;
  const double k = num_probes;
  return std::pow(1.0 - std::exp(-k / bits_per_key), k);
}

int StandardBloomProbes(double bits_per_key) {
  const int k = static_cast<int>(std::lround(bits_per_key * std::log(2.0)));
  return std::clamp(k, 1, 30);
}

double BlockedBloomFpr(double bits_per_key, int num_probes) {
  if (bits_per_key <= 0 || num_probes <= 0) return 1.0;
  constexpr double kBlockBits = 512;
  const double lambda = kBlockBits / bits_per_key;  // mean keys per block
  // Sum the Poisson terms within lambda +- 12 standard deviations (+ 40):
  // the tail beyond is below 1e-30.
  const double spread = 12 * std::sqrt(lambda) + 40;
  const int lo = static_cast<int>(std::max(0.0, std::floor(lambda - spread)));
  const int hi = static_cast<int>(std::ceil(lambda + spread));
  // Term j: P(j keys in a block) times the chance that all k probes of an
  // absent key find set bits when j keys set theirs. Each term comes from
  // the one before by two products (the Poisson ratio lambda / (j + 1),
  // and the chance (1 - 1/512)^k that one more key leaves a bit clear):
  // some 300 terms in under a microsecond, within 1e-12 of summing each
  // term from its own logarithms.
  double weight =
      std::exp(-lambda + lo * std::log(lambda) - std::lgamma(lo + 1.0));
  const double keep = std::pow(1.0 - 1.0 / kBlockBits, num_probes);
  double clear = std::pow(keep, lo);  // a bit left clear by j keys
  double fpr = 0;
  for (int j = lo; j <= hi; j++) {
    const double fill = 1.0 - clear;
    double all_set = 1.0;  // fill^k by squaring
    double base = fill;
    for (int e = num_probes; e > 0; e >>= 1) {
      if (e & 1) all_set *= base;
      base *= base;
    }
    fpr += weight * all_set;
    weight *= lambda / (j + 1);
    clear *= keep;
  }
  return std::min(fpr, 1.0);
}

namespace {

// The k in [1, 16] that minimises BlockedBloomFpr, by trying each: some
// 4,000 Poisson terms, about 10 microseconds.
int BlockedBloomArgmin(double bits_per_key) {
  int best = 1;
  double best_fpr = BlockedBloomFpr(bits_per_key, 1);
  for (int k = 2; k <= 16; k++) {
    const double f = BlockedBloomFpr(bits_per_key, k);
    if (f < best_fpr) {
      best = k;
      best_fpr = f;
    }
  }
  return best;
}

// BlockedBloomArgmin rises in steps over [1, 64]: entry i is the smallest
// double at which it is i + 2 or more (found by bisection over doubles).
// Within a few ulps of a step, rounding in the sums makes the argmin
// flicker between the two k, so within kStepWindow (relative) of a step
// it is computed; everywhere else read from here. tests/params_test.cc
// checks that both agree on every 0.01 of [1, 64], around every step and
// at random points.
// clang-format off
constexpr double kBlockedProbeSteps[] = {
    0x1.0a2cd815b14dep+1,  //  2:  2.0795
    0x1.c9bc57eee711dp+1,  //  3:  3.5761
    0x1.4589402062783p+2,  //  4:  5.0865
    0x1.a92c670c08a78p+2,  //  5:  6.6433
    0x1.08a10f530257p+3,   //  6:  8.2697
    0x1.3f9c338d5ef4ep+3,  //  7:  9.9878
    0x1.7a4863854fa2dp+3,  //  8: 11.8213
    0x1.b977a361bc3fep+3,  //  9: 13.7959
    0x1.fe1303752df1ap+3,  // 10: 15.9398
    0x1.249034aa5e022p+4,  // 11: 18.2852
    0x1.4de47c094e0ccp+4,  // 12: 20.8683
    0x1.7bb03a5d14bc6p+4,  // 13: 23.7305
    0x1.aeb6fab1cc51fp+4,  // 14: 26.9197
    0x1.e7db1690cfe5dp+4,  // 15: 30.4910
    0x1.1411ed05c2cb9p+5,  // 16: 34.5088
};
// clang-format on
constexpr double kStepWindow = 1e-12;

}  // namespace

int BlockedBloomProbes(double bits_per_key) {
  if (!(bits_per_key >= 1 && bits_per_key <= 64)) {
    return BlockedBloomArgmin(bits_per_key);
  }
  int k = 1;
  for (double step : kBlockedProbeSteps) {
    if (std::fabs(bits_per_key - step) <= kStepWindow * step) {
      return BlockedBloomArgmin(bits_per_key);
    }
    if (bits_per_key >= step) k++;
  }
  return k;
}

namespace internal {

namespace {

// What a spec's small filters are held to: the ceiling (kSmallFilterFprSlack
// times the FPR of its large filters) and the bits per key at which
// BlockedBloomFpr at the spec's probes crosses it (NaN until bisected, or
// if it could not be).
struct Ceiling {
  FilterSpec spec;
  double fpr = 0;
  double crossing = -1;  // < 0: not yet bisected
};

// Per thread, the ceilings of the last specs asked for: FilterSize plans
// neighbouring n of one spec in turn, and auto's planner the sizes of a
// kind's curve for each run (some hundreds of specs, over and over).
Ceiling& CeilingOf(const FilterSpec& spec) {
  constexpr size_t kMaxCached = 4096;
  thread_local std::unordered_map<double, std::vector<Ceiling>> cache;
  thread_local size_t cached = 0;
  for (Ceiling& c : cache[spec.bits_per_key]) {
    if (c.spec == spec) return c;
  }
  Ceiling c;
  c.spec = spec;
  c.fpr = kSmallFilterFprSlack *
          PlanBloomFamily(spec, kLargeFilterKeys, /*with_fpr=*/true)
              .params.expected_fpr;
  if (++cached > kMaxCached) {
    cache.clear();
    cached = 1;
  }
  std::vector<Ceiling>& bucket = cache[spec.bits_per_key];
  bucket.push_back(c);
  return bucket.back();
}

// Whether BlockedBloomFpr(bits, probes) <= the spec's ceiling (probes: the
// spec's). The FPR falls as the bits rise, so this is bits >= the crossing
// point, bisected once per spec; within a millionth of it, where rounding
// in the sums could decide, the sum itself is compared, so the answer is
// the sum's.
bool WithinCeiling(const FilterSpec& spec, double bits, int probes) {
  Ceiling& c = CeilingOf(spec);
  if (c.crossing < 0) {
    double lo = spec.bits_per_key / 4, hi = spec.bits_per_key;
    if (BlockedBloomFpr(lo, probes) > c.fpr &&
        BlockedBloomFpr(hi, probes) <= c.fpr) {
      for (int i = 0; i < 40; i++) {
        const double mid = (lo + hi) / 2;
        (BlockedBloomFpr(mid, probes) <= c.fpr ? hi : lo) = mid;
      }
      c.crossing = hi;
    } else {
      c.crossing = std::nan("");
    }
  }
  if (std::isnan(c.crossing) ||
      std::fabs(bits - c.crossing) <= 1e-6 * c.crossing) {
    return BlockedBloomFpr(bits, probes) <= c.fpr;
  }
  return bits >= c.crossing;
}

}  // namespace

double BlockedBloomFprCeiling(const FilterSpec& spec) {
  return CeilingOf(spec).fpr;
}

KindPlan PlanBloomFamily(const FilterSpec& spec, uint64_t n, bool with_fpr) {
  KindPlan plan = StartPlan(spec, n);
  if (n == 0) return plan;
  FilterParams& p = plan.params;
  // n * bits_per_key stays exact in a double far beyond any real n (2^53).
  const double bits = std::ceil(static_cast<double>(n) * spec.bits_per_key);
  const uint64_t standard_bytes =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(bits / 8)));
  if (spec.kind == FilterKind::kBlockedBloom &&
      standard_bytes >= kMinBlockedPayload) {
    // Whole blocks: rounded up, unless that would take the filter past
    // MaxFilterBytes (up to 63 bytes of padding); then rounded down if
    // that keeps the FPR the spec promises (plan.h, kSmallFilterFprSlack).
    uint64_t blocks = static_cast<uint64_t>(
        std::ceil(bits / (8.0 * BlockedBloomImpl::kBlockBytes)));
    Trailer t;
    t.kind = FilterKind::kBlockedBloom;
    t.payload_size = blocks * BlockedBloomImpl::kBlockBytes;
    SetTrailerHashing(spec, &t);
    t.params_size = 1;
    const uint64_t budget = MaxFilterBytes(n, spec.bits_per_key);
    const uint64_t trailer = TrailerSize(t);
    p.num_probes = BlockedBloomProbes(spec.bits_per_key);
    if (t.payload_size + trailer > budget) {
      const uint64_t down = (budget - trailer) / BlockedBloomImpl::kBlockBytes;
      // A filter that loses under 1/50 of a bit per key to the rounding
      // keeps its FPR within 1.01 times (a Bloom filter's FPR falls by at
      // most a factor e^(ln(2)^2) ~ 1.62 per bit per key), and those of
      // kLargeFilterKeys and more (the measure) lose under 1/1000; a smaller
      // one that loses more is checked against the spec's FPR ceiling.
      const double lost = bits - 8.0 * BlockedBloomImpl::kBlockBytes *
                                     static_cast<double>(down);
      if (n >= kLargeFilterKeys || lost < 0.02 * static_cast<double>(n) ||
          WithinCeiling(spec,
                        8.0 * BlockedBloomImpl::kBlockBytes *
                            static_cast<double>(down) / n,
                        p.num_probes)) {
        blocks = down;
      }
    }
    p.kind = FilterKind::kBlockedBloom;
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

FilterSpec BloomSpecOfTotal(uint64_t total, uint64_t n,
                            const FilterSpec& spec) {
  // The trailer takes at least kCompactTrailerSize bytes, and a payload
  // one byte smaller never makes the filter larger: the first payload from
  // the top that fits is the largest.
  uint64_t bytes =
      total > kCompactTrailerSize ? total - kCompactTrailerSize : 1;
  if (bytes > kMaxCompactPayload) {
    // Payloads above the compact form's carry a full trailer of at least
    // this many bytes (a payload size of two varint bytes or more): the
    // larger ones cannot fit, and need no plan.
    const uint64_t least_full = 2 + 1 + 1 + kCheckedFullOverhead +
                                (spec.seed != 0 || spec.salt ? 8 : 0) +
                                (spec.keyed ? 4 : 0);
    bytes = total - least_full > kMaxCompactPayload ? total - least_full
                                                    : kMaxCompactPayload;
  }
  for (; bytes > 1; bytes--) {
    const FilterSpec s = BloomSpecForBytes(FilterKind::kBloom, bytes, n, spec);
    const KindPlan plan = PlanBloomFamily(s, n, /*with_fpr=*/false);
    if (plan.payload_bytes == bytes && PlannedFilterBytes(plan, s) <= total) {
      return s;
    }
  }
  return BloomSpecForBytes(FilterKind::kBloom, 1, n, spec);
}

namespace {

// Each insertion writes to random places; in a filter larger than the
// caches each is a cache miss. Prefetching the places of the key kAhead
// positions later overlaps those misses.
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
