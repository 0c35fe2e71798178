// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind (kind 6): sizing. Which form (dense, segmented, banded)
// a filter of n keys takes at a spec's bits, its columns and slots, its
// expected FPR, and the Bloom filter of no more bytes written in its place
// where that is more accurate. Construction is in ribbon.cc and
// ribbon_<form>.cc; the format and the formulas in docs/FORMAT.md.

#include <algorithm>
#include <cmath>

#include "policy/bloom_fallback.h"
#include "policy/format.h"
#include "policy/ribbon/ribbon.h"
#include "policy/ribbon/ribbon_impl.h"
#include "sstfilter/params.h"

namespace sstfilter {
namespace internal {
namespace {

// The payload bit budget: floor(n b), so the filter never spends more than
// its bits per key (plus the trailer).
uint64_t BudgetBits(const FilterSpec& spec, uint64_t n) {
  return static_cast<uint64_t>(
      std::floor(static_cast<double>(n) * spec.bits_per_key));
}

double BandedFpr(uint64_t num_blocks, uint32_t r, uint64_t k) {
  // A key checks cols(b) columns for b uniform in [0, num_blocks - 2]:
  // r + 1 for the k - 1 values b >= num_blocks - k.
  const double hi =
      k == 0 ? 0.0 : static_cast<double>(k - 1) / (num_blocks - 1);
  return hi * std::ldexp(1.0, -static_cast<int>(r) - 1) +
         (1 - hi) * std::ldexp(1.0, -static_cast<int>(r));
}

// The segmented form's FPR: a key checks r + 1 columns if it starts in a
// wide block. Segment i has k_i wide blocks of its B_i, the last of which
// no row starts in, so (k_i - 1)+ / (B_i - 1) of its keys check r + 1;
// with k_i proportional to B_i (the builder's split) that sums to
// (K - S)+ / (T - S) of all keys, exactly whenever every k_i >= 1 or
// every k_i <= 1 (K = W - r T wide blocks, T blocks, S segments).
double SegmentedFpr(uint64_t segments, uint64_t blocks, uint32_t r,
                    uint64_t wide) {
  const double hi = wide <= segments ? 0.0
                                     : static_cast<double>(wide - segments) /
                                           (blocks - segments);
  return hi * std::ldexp(1.0, -static_cast<int>(r) - 1) +
         (1 - hi) * std::ldexp(1.0, -static_cast<int>(r));
}

// Blocks a segmented filter of n keys in `segments` segments is expected to
// have: exact for one segment; for more, each segment's key count varies
// (binomial, sd > 1 block) and the ceiling of its blocks adds 1/2 on average.
uint64_t ExpectedSegmentedBlocks(uint64_t n, uint64_t segments) {
  if (segments == 1) return RibbonSegmentBlocks(n);
  return static_cast<uint64_t>(std::llround(
      static_cast<double>(n) * kRibbonSlotsPerKey / kRibbonWideSlots +
      0.5 * static_cast<double>(segments)));
}

// The fewest columns W of a system of `blocks` blocks in `segments`
// segments (the banded form: one) whose FPR, SegmentedFpr of r = W /
// blocks columns and W mod blocks wide blocks, is at most `ceiling`
// (in (0, 1]). Non-decreasing in blocks and in segments.
uint64_t MinColumns(uint64_t segments, uint64_t blocks, double ceiling) {
  // The fewest columns everywhere that reach it: 2^-r <= ceiling.
  int r = 1;
  while (r < 64 && std::ldexp(1.0, -r) > ceiling) r++;
  if (r == 1) return blocks;
  // r - 1 columns and wide blocks (r columns) for a share of at least
  // (2^-(r-1) - ceiling) / 2^-r of the keys, if that leaves one narrow.
  const uint32_t base = static_cast<uint32_t>(r - 1);
  const double share = std::clamp(2 - std::ldexp(ceiling, r), 0.0, 1.0);
  const uint64_t spread = blocks > segments ? blocks - segments : 0;
  uint64_t wide =
      segments +
      static_cast<uint64_t>(std::ceil(share * static_cast<double>(spread)));
  // The share in floating point may be a hair off: step to the exact one.
  while (wide > 0 &&
         SegmentedFpr(segments, blocks, base, wide - 1) <= ceiling) {
    wide--;
  }
  while (wide < blocks &&
         SegmentedFpr(segments, blocks, base, wide) > ceiling) {
    wide++;
  }
  return base * blocks + wide;
}

}  // namespace

uint64_t RibbonSegmentBlocks(uint64_t n) {
  const double slots = static_cast<double>(n) * kRibbonSlotsPerKey;
  return std::max<uint64_t>(
      2, static_cast<uint64_t>(std::ceil(slots / kRibbonWideSlots)));
}

uint64_t RibbonBandedBlocks(uint64_t n) {
  // Slots = n (1 + overhead) over the (num_blocks - 1) blocks where rows
  // start; the overhead is the measured need of 64-bit rows (docs/FORMAT.md).
  const double slots = static_cast<double>(n) * (1.0 + RibbonOverhead(n));
  return std::max<uint64_t>(
      2, static_cast<uint64_t>(std::ceil(slots / kRibbonBlockSlots)) + 1);
}

double RibbonOverhead(uint64_t n) {
  // Measured with 64-bit rows: the least overhead at which at least ~half
  // of the first salts succeed (docs/FORMAT.md). It grows with log n.
  if (n <= 10000) return 0.05;
  if (n <= 30000) return 0.07;
  if (n <= 300000) return 0.08;
  if (n <= 3000000) return 0.10;
  return 0.13;
}

namespace {

// Bytes of a full ribbon trailer (either form) after `payload` bytes.
uint64_t RibbonTrailerBytes(const FilterSpec& spec, uint64_t payload) {
  Trailer t;
  t.kind = FilterKind::kRibbon;
  t.payload_size = payload;
  SetTrailerHashing(spec, &t);
  t.params_size = kRibbonParamsSize;
  return TrailerSize(t);
}

// The compact dense geometry of r columns with `column_bits` bits for
// them: as many slots as the bits hold, at most 64. Sets *rp if every key
// has a slot and the payload is `want` bytes (0: any compact size, 16 to
// 127).
uint64_t CompactDenseSlots(uint64_t column_bits, uint64_t r) {
  return r == 0 ? 0 : std::min<uint64_t>(column_bits / r, kRibbonMaxDenseSlots);
}
uint64_t CompactDensePayload(uint64_t column_bits, uint64_t r) {
  return 1 + (CompactDenseSlots(column_bits, r) * r + 7) / 8;
}
bool PlanCompactDense(uint64_t column_bits, uint64_t n, uint64_t r,
                      uint64_t want, RibbonPlan* rp) {
  if (r == 0 || r > kRibbonMaxColumns) return false;
  const uint64_t m = CompactDenseSlots(column_bits, r);
  const uint64_t payload = CompactDensePayload(column_bits, r);
  if (m < n || payload < kMinCompactPayload || payload > kMaxCompactPayload ||
      (want != 0 && payload != want)) {
    return false;
  }
  rp->dense = rp->compact = true;
  rp->r = static_cast<uint32_t>(r);
  rp->slots = RibbonCompactSlots(payload, rp->r);
  KindPlan& plan = rp->plan;
  plan.payload_bytes = payload;
  plan.kind_params_size = 1;
  plan.first_param = static_cast<uint8_t>((r - 1) & 15);
  plan.params.expected_fpr = std::ldexp(1.0, -rp->r);
  return true;
}

// A dense filter's least geometry: r columns, the fewest that reach its
// FPR ceiling (2^-r <= ceiling), over n slots, and from 16 keys on one
// spare slot (at most 64 slots). n keys in n slots are solvable under 29%
// of salts, in n + 1 under 58%, so the writer solves ~1.7 systems instead
// of ~3.5 (LevelDB's filters of ~33 keys build in ~0.66x the time) for r
// bits more; below 16 keys a system costs little. (Two spare slots, 77%,
// would take LevelDB's filters past its Bloom filters' bytes.)
constexpr uint64_t kDenseSpareSlots = 1;
constexpr uint64_t kDenseSpareMinKeys = 16;

uint64_t DenseCeilingColumns(double ceiling) {
  uint64_t r = 1;
  while (r < kRibbonMaxColumns &&
         std::ldexp(1.0, -static_cast<int>(r)) > ceiling) {
    r++;
  }
  return r;
}

// The bits of that least geometry for n <= 64 keys, with the compact
// form's header byte.
uint64_t DenseLeastBits(const FilterSpec& spec, uint64_t n, double ceiling) {
  const uint64_t spare = n >= kDenseSpareMinKeys ? kDenseSpareSlots : 0;
  const uint64_t m = std::min(n + spare, uint64_t{kRibbonMaxDenseSlots});
  return m * DenseCeilingColumns(ceiling) +
         (MayUseCompactTrailer(spec) ? 8 : 0);
}

// The dense forms, for n <= 64 keys (r >= 1: b >= 2 bits per key), within
// `budget` bits; the compact filter that may take the place of a small
// dense one must reach `ceiling`.
void PlanDense(const FilterSpec& spec, uint64_t n, uint64_t budget,
               double ceiling, RibbonPlan* rp) {
  // Compact dense (seed 0, unkeyed, docs/FORMAT.md): a header byte (salt,
  // high bit of r - 1) inside the budget, then the columns; the trailer
  // holds the low 4 bits of r - 1. Chosen whenever the payload fits a
  // compact trailer.
  const bool may_compact = MayUseCompactTrailer(spec);
  const uint64_t column_bits = budget > 8 ? budget - 8 : 0;
  const uint64_t compact_r =
      std::min<uint64_t>(column_bits / n, kRibbonMaxColumns);
  if (may_compact &&
      PlanCompactDense(column_bits, n, compact_r, /*want=*/0, rp)) {
    return;
  }
  // Dense: r = floor(b) columns, as many slots as the budget buys (spare
  // slots make the system solvable more often), at most 64, and then as
  // many as the payload's whole bytes hold: the padding bits become
  // slots, and m = min(64, floor(8 payload_size / r)) follows from the
  // payload size and r (a compact trailer need not store it).
  const uint64_t r = std::min<uint64_t>(budget / n, kRibbonMaxColumns);
  rp->dense = true;
  rp->r = static_cast<uint32_t>(r);
  const uint64_t m = std::min<uint64_t>(budget / r, kRibbonMaxDenseSlots);
  KindPlan& plan = rp->plan;
  plan.payload_bytes = (m * r + 7) / 8;
  rp->slots =
      std::min<uint64_t>(plan.payload_bytes * 8 / r, kRibbonMaxDenseSlots);
  plan.params.expected_fpr = std::ldexp(1.0, -rp->r);
  if (!may_compact ||
      CompactDensePayload(column_bits, compact_r) > kMinCompactPayload) {
    return;
  }
  // The budget was too small for the compact form. If the
  // full trailer makes this filter at least as large as a compact one, the
  // compact filter of the smallest payload (16 bytes or more) that gives
  // every key a slot takes its place, with the most columns whose slots
  // fill that payload: otherwise a smaller compact filter at n + 1 keys
  // would follow this one.
  const uint64_t total =
      plan.payload_bytes + RibbonTrailerBytes(spec, plan.payload_bytes);
  // (A compact filter whose columns miss `ceiling` is passed over.)
  const RibbonPlan dense = *rp;
  for (uint64_t p = kMinCompactPayload; p + kCompactTrailerSize <= total; p++) {
    for (uint64_t c = 8 * (p - 1) / n; c >= 1; c--) {
      if (PlanCompactDense(8 * (p - 1), n, c, p, rp)) {
        if (rp->plan.params.expected_fpr <= ceiling) return;
        break;
      }
    }
  }
  *rp = dense;
}

// The Bloom filter a ribbon spec writes instead, given the bytes of the
// ribbon filter it replaces (trailer included).
void PlanBloomInstead(const FilterSpec& spec, uint64_t n, uint64_t total,
                      RibbonPlan* rp) {
  rp->bloom = BloomSpecOfTotal(total, n, spec);
  rp->plan = PlanBloomFamily(rp->bloom, n, /*with_fpr=*/true);
  rp->plan.params.bits_per_key = spec.bits_per_key;
}

// The segmented form's plan (rp.segmented false if it does not fit: then
// the banded form).
void PlanSegmented(uint64_t n, uint64_t budget, uint64_t min_payload,
                   double ceiling, RibbonPlan* rp) {
  const uint64_t segments = (n + kRibbonSegmentKeys - 1) / kRibbonSegmentKeys;
  const uint64_t blocks = ExpectedSegmentedBlocks(n, segments);
  // The directory's 64 (S + 1) bits, charged as 128 + floor(64 n / 2^15)
  // (no less, as S < n / 2^15 + 1): smooth in n, so that the payload,
  // directory plus columns, never shrinks as n grows (the directory's
  // step at a new segment would take a column away).
  const uint64_t dir_bits = 128 + 64 * n / kRibbonSegmentKeys;
  if (budget <= dir_bits || 2 * blocks >= kRibbonMaxWideBlocks) return;
  // At least min_payload bytes: the first segmented sizes must not fall
  // below the largest dense filter (FilterSize is non-decreasing in n).
  const uint64_t dir_bytes = kRibbonEntryBytes * (segments + 1);
  const uint64_t floor_columns =
      min_payload > dir_bytes
          ? (min_payload - dir_bytes + kRibbonColumnBytes - 1) /
                kRibbonColumnBytes
          : 0;
  uint64_t columns =
      std::max<uint64_t>((budget - dir_bits) / 128, floor_columns);
  // Too few columns for the FPR the spec promises: the fewest that reach
  // it (non-decreasing in n, as the blocks are).
  bool raised = false;
  if (SegmentedFpr(segments, blocks, static_cast<uint32_t>(columns / blocks),
                   columns % blocks) > ceiling) {
    const uint64_t need = MinColumns(segments, blocks, ceiling);
    raised = need > columns;
    columns = std::max(columns, need);
  }
  const uint64_t r = columns / blocks;
  if (r == 0 || r >= kRibbonMaxColumns) return;
  rp->segmented = true;
  rp->raised = raised;
  rp->segments = segments;
  rp->columns = columns;
  rp->slots = blocks * kRibbonWideSlots;
  rp->r = static_cast<uint32_t>(r);
  rp->k = columns - r * blocks;
  rp->plan.payload_bytes =
      kRibbonEntryBytes * (segments + 1) + kRibbonColumnBytes * columns;
  rp->plan.params.expected_fpr = SegmentedFpr(segments, blocks, rp->r, rp->k);
}

}  // namespace

namespace {

// The smallest total size, from `lo` and below `hi` bytes, of the standard
// Bloom filter a ribbon spec would write (BloomSpecOfTotal) for n keys
// whose FPR is at most `ceiling`; 0 if none is.
uint64_t BloomTotalWithin(const FilterSpec& spec, uint64_t n, double ceiling,
                          uint64_t lo, uint64_t hi) {
  // No standard Bloom filter reaches it in fewer than n ln(1/ceiling) /
  // ln(2)^2 bits.
  const double least =
      static_cast<double>(n) * StandardBloomOptimumBits(ceiling) / 8;
  uint64_t total = std::max<uint64_t>(
      lo, static_cast<uint64_t>(least) + kCompactTrailerSize);
  if (total >= hi) return 0;
  // The FPR of BloomSpecOfTotal's filter never rises as the total grows
  // (checked for every total to 8 bytes per key and 300 more, at every n
  // to 2,000 and sampled n to 67,000, plain, seeded and keyed): the totals
  // that reach the ceiling are those from the first that does. Where even
  // the largest candidate misses, none does: most plans stop here.
  auto fpr_of = [&](uint64_t t) {
    return PlanBloomFamily(BloomSpecOfTotal(t, n, spec), n, /*with_fpr=*/true)
        .params.expected_fpr;
  };
  if (fpr_of(hi - 1) > ceiling) return 0;
  // The first total that reaches it, by halving [total, hi - 1].
  for (uint64_t last = hi - 1; total < last;) {
    const uint64_t mid = total + (last - total) / 2;
    if (fpr_of(mid) <= ceiling) {
      last = mid;
    } else {
      total = mid + 1;
    }
  }
  // The first from there that a filter fills exactly (the trailer's
  // size steps over some totals).
  for (; total < hi; total++) {
    const FilterSpec bloom = BloomSpecOfTotal(total, n, spec);
    if (PlannedFilterBytes(PlanBloomFamily(bloom, n, /*with_fpr=*/false),
                           bloom) == total) {
      return total;
    }
  }
  return 0;
}

// `rp` (segmented or banded), or the standard Bloom filter of its bytes if
// that is more accurate: below a few hundred keys the half-loaded first
// and last blocks weigh more than a Bloom filter's inaccuracy. (Only small
// payloads are compared, where the Bloom FPR formula is cheap: FilterSize
// plans often.)
RibbonPlan BloomIfMoreAccurate(const FilterSpec& spec, uint64_t n,
                               const RibbonPlan& rp) {
  if (rp.plan.payload_bytes >= kMinBlockedPayload) return rp;
  const uint64_t total = PlannedFilterBytes(rp.plan, spec);
  RibbonPlan bloom;
  PlanBloomInstead(spec, n, total, &bloom);
  if (PlannedFilterBytes(bloom.plan, bloom.bloom) != total ||
      bloom.plan.params.expected_fpr >= rp.plan.params.expected_fpr) {
    return rp;
  }
  bloom.raised = rp.raised;
  return bloom;
}

// PlanRibbon's ribbon forms for the FPR ceiling `ceiling` (1: none),
// and the Bloom filters of their bytes that are more accurate.
RibbonPlan PlanRibbonForms(const FilterSpec& spec, uint64_t n, bool segmented,
                           double ceiling) {
  RibbonPlan rp;
  rp.plan = StartPlan(spec, n);
  if (n == 0) return rp;
  KindPlan& plan = rp.plan;
  FilterParams& p = plan.params;
  const uint64_t budget = BudgetBits(spec, n);
  p.kind = FilterKind::kRibbon;
  plan.kind_params_size = kRibbonParamsSize;
  if (n <= kRibbonMaxDenseSlots) {
    // The budget's bits, unless they miss the ceiling or, from 16 keys
    // on, the least geometry: then the least geometry's bits (as many
    // columns as they buy: r, more only for at most r + 8 keys, as
    // docs/FORMAT.md says). Each is non-decreasing in n, and so is the
    // larger.
    const uint64_t least = DenseLeastBits(spec, n, ceiling);
    const bool spare = n >= kDenseSpareMinKeys && budget < least;
    const RibbonPlan start = rp;
    if (!spare) PlanDense(spec, n, budget, ceiling, &rp);
    if (spare || p.expected_fpr > ceiling) {
      rp = start;
      PlanDense(spec, n, std::max(budget, least), ceiling, &rp);
    }
    return rp;
  }
  // Segmented (docs/FORMAT.md), for every filter it fits: no smaller than
  // the dense filter of 64 keys, and non-decreasing in n.
  uint64_t min_payload = 0;
  if (segmented) {
    const RibbonPlan dense64 =
        PlanRibbonForms(spec, kRibbonMaxDenseSlots, segmented, ceiling);
    min_payload = dense64.plan.payload_bytes;
    PlanSegmented(n, budget, min_payload, ceiling, &rp);
  }
  if (rp.segmented) return BloomIfMoreAccurate(spec, n, rp);
  // Banded, and every Bloom filter written in its place, take 8 W payload
  // bytes and a full ribbon trailer, W = floor(floor(n b) / 64) words:
  // non-decreasing in n, and never below the dense filter of 64 keys.
  // Where the builder writes it (filters too large for the segmented
  // form), W is at least the fewest words that reach the ceiling.
  uint64_t words = budget / 64;
  const uint64_t blocks = RibbonBandedBlocks(n);
  if (segmented && blocks < (uint64_t{1} << 32) &&
      BandedFpr(blocks, static_cast<uint32_t>(words / blocks), words % blocks) >
          ceiling) {
    const uint64_t need = MinColumns(1, blocks, ceiling);
    rp.raised = need > words;
    words = std::max(words, need);
  }
  const uint64_t total = 8 * words + RibbonTrailerBytes(spec, 8 * words);
  uint64_t r = words / blocks;
  if (r == 0 || blocks >= (uint64_t{1} << 32)) {
    // Too few bits for even one column, or too many blocks: Bloom.
    PlanBloomInstead(spec, n, total, &rp);
    return rp;
  }
  uint64_t k = words % blocks;
  if (r >= kRibbonMaxColumns) {
    r = kRibbonMaxColumns;
    k = 0;
  }
  rp.slots = blocks * kRibbonBlockSlots;
  rp.r = static_cast<uint32_t>(r);
  rp.k = k;
  plan.payload_bytes = 8 * (blocks * r + k);
  p.expected_fpr = BandedFpr(blocks, rp.r, k);
  return BloomIfMoreAccurate(spec, n, rp);
}

}  // namespace

double RibbonFprCeiling(const FilterSpec& spec) {
  return kSmallFilterFprSlack *
         PlanRibbonForms(spec, kLargeFilterKeys, /*segmented=*/true, 1.0)
             .plan.params.expected_fpr;
}

RibbonPlan PlanRibbon(const FilterSpec& spec, uint64_t n, bool segmented,
                      double ceiling) {
  if (ceiling <= 0) ceiling = n == 0 ? 1.0 : RibbonFprCeiling(spec);
  RibbonPlan rp = PlanRibbonForms(spec, n, segmented, ceiling);
  if (!rp.raised) return rp;
  // The budget's bits missed the ceiling, and the ribbon form took more
  // columns. The smallest standard Bloom filter that reaches it takes its
  // place if it is smaller (a half-loaded segment of a few hundred keys),
  // but no smaller than the filter of the budget's bits or the dense
  // filter of 64 keys (FilterSize is non-decreasing in n).
  const uint64_t lo = std::max(
      PlannedFilterBytes(PlanRibbonForms(spec, n, segmented, 1.0).plan, spec),
      PlannedFilterBytes(
          PlanRibbonForms(spec, kRibbonMaxDenseSlots, segmented, ceiling).plan,
          spec));
  const uint64_t bloom_total =
      BloomTotalWithin(spec, n, ceiling, lo, PlannedFilterBytes(rp.plan, spec));
  if (bloom_total != 0) {
    RibbonPlan bloom;
    PlanBloomInstead(spec, n, bloom_total, &bloom);
    return bloom;
  }
  return rp;
}

}  // namespace internal
}  // namespace sstfilter
