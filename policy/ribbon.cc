// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind (kind 6): sizing, construction and its builder. The hot
// code and the hashing are in ribbon_impl.h; the format and the measurements
// behind the choices in docs/FORMAT.md.
//
// Construction solves the linear system by Gaussian elimination in the
// order keys arrive (each row is reduced against the rows already placed
// until it finds a free pivot slot; "on-the-fly" elimination of the Ribbon
// paper), then back-substitutes column by column into the payload.
// Construction never fails: a system without a solution (rows that reduce to
// zero with a non-zero fingerprint) is retried with the next salt, then with
// more slots (fewer columns: the payload never grows), and as a last resort
// the hashes are written as a Bloom filter of no more bytes.

#include "policy/ribbon.h"

#include <algorithm>
#include <cmath>

#include "policy/bloom_builder.h"
#include "policy/format.h"
#include "policy/ribbon_impl.h"
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

// A Bloom spec whose PlanBloomFamily payload is at most `bytes` for n keys
// (blocked Bloom rounds down to whole 64-byte blocks), hashed as `spec`.
FilterSpec BloomSpecWithin(uint64_t bytes, uint64_t n, const FilterSpec& spec) {
  FilterSpec s;
  s.seed = spec.seed;
  s.keyed = spec.keyed;
  s.salt = spec.salt;
  if (bytes >= kMinBlockedPayload) {
    s.kind = FilterKind::kBlockedBloom;
    bytes -= bytes % 64;
  } else {
    s.kind = FilterKind::kBloom;
  }
  s.bits_per_key = (8.0 * static_cast<double>(bytes) - 0.5) / n;
  return s;
}

double BandedFpr(uint64_t num_blocks, uint32_t r, uint64_t k) {
  // A key checks cols(b) columns for b uniform in [0, num_blocks - 2]:
  // r + 1 for the k - 1 values b >= num_blocks - k.
  const double hi =
      k == 0 ? 0.0 : static_cast<double>(k - 1) / (num_blocks - 1);
  return hi * std::ldexp(1.0, -static_cast<int>(r) - 1) +
         (1 - hi) * std::ldexp(1.0, -static_cast<int>(r));
}

}  // namespace

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

RibbonPlan PlanRibbon(const FilterSpec& spec, uint64_t n) {
  RibbonPlan rp;
  KindPlan& plan = rp.plan;
  FilterParams& p = plan.params;
  p.num_keys = n;
  p.bits_per_key = spec.bits_per_key;
  if (n == 0) {
    p.kind = FilterKind::kEmpty;
    return rp;
  }
  const uint64_t budget = BudgetBits(spec, n);
  p.kind = FilterKind::kRibbon;
  plan.kind_params_size = kRibbonParamsSize;
  if (n <= kRibbonMaxDenseSlots) {
    // Compact dense (seed 0, unkeyed, docs/FORMAT.md): a header byte
    // (salt, high bit of r - 1) inside the budget, then the columns; the
    // trailer holds the low 4 bits of r - 1. Chosen whenever the payload
    // fits a compact trailer.
    if (MayUseCompactTrailer(spec) && budget > 8) {
      const uint64_t r =
          std::min<uint64_t>((budget - 8) / n, kRibbonMaxColumns);
      const uint64_t m =
          r == 0 ? 0
                 : std::min<uint64_t>((budget - 8) / r, kRibbonMaxDenseSlots);
      const uint64_t payload = 1 + (m * r + 7) / 8;
      if (r >= 1 && payload >= kMinCompactPayload &&
          payload <= kMaxCompactPayload) {
        rp.dense = rp.compact = true;
        rp.r = static_cast<uint32_t>(r);
        plan.payload_bytes = payload;
        plan.kind_params_size = 1;
        plan.first_param = static_cast<uint8_t>((r - 1) & 15);
        rp.slots = RibbonCompactSlots(payload, rp.r);
        p.expected_fpr = std::ldexp(1.0, -rp.r);
        return rp;
      }
    }
    // Dense: r = floor(b) columns, as many slots as the budget buys (spare
    // slots make the system solvable more often), at most 64, and then as
    // many as the payload's whole bytes hold: the padding bits become
    // slots, and m = min(64, floor(8 payload_size / r)) follows from the
    // payload size and r (a compact trailer need not store it).
    const uint64_t r = std::min<uint64_t>(budget / n, kRibbonMaxColumns);
    if (r >= 1) {
      rp.dense = true;
      rp.r = static_cast<uint32_t>(r);
      const uint64_t m = std::min<uint64_t>(budget / r, kRibbonMaxDenseSlots);
      plan.payload_bytes = (m * r + 7) / 8;
      rp.slots =
          std::min<uint64_t>(plan.payload_bytes * 8 / r, kRibbonMaxDenseSlots);
      p.expected_fpr = std::ldexp(1.0, -rp.r);
      return rp;
    }
  } else {
    const uint64_t blocks = RibbonBandedBlocks(n);
    const uint64_t words = budget / 64;
    uint64_t r = words / blocks;
    if (r >= 1 && blocks < (uint64_t{1} << 32)) {
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
      // Below a few hundred keys the first and last blocks, half loaded,
      // weigh more than a standard Bloom filter's inaccuracy: write the
      // Bloom filter when it is more accurate in no more bytes. (Only small
      // payloads, where that Bloom filter is the standard one and its FPR
      // formula cheap: FilterSize plans often.)
      if (plan.payload_bytes >= kMinBlockedPayload) return rp;
      const KindPlan bloom = PlanBloomFamily(
          BloomSpecWithin(plan.payload_bytes, n, spec), n, true);
      if (bloom.params.kind != FilterKind::kBloom ||
          bloom.params.expected_fpr >= p.expected_fpr) {
        return rp;
      }
      plan = bloom;
      plan.params.bits_per_key = spec.bits_per_key;
      return rp;
    }
  }
  // Too few bits for even one column: a Bloom filter of the budget.
  plan = PlanBloomFamily(
      BloomSpecWithin(std::max<uint64_t>(1, budget / 8), n, spec), n,
      /*with_fpr=*/true);
  plan.params.bits_per_key = spec.bits_per_key;
  return rp;
}

namespace {

// Gaussian elimination over the slots of a RibbonScratch: per slot the
// pivot row's coefficients (relative to the slot, bit 0 set; 0 = free) and
// fingerprint.
class RibbonSystem {
 public:
  explicit RibbonSystem(RibbonScratch* s) : s_(s) {}
  void Reset(uint64_t slots) { s_->slots.assign(slots, RibbonScratch::Slot{}); }
  // Adds row (coefficients `c` relative to slot `i`) = `fp`. False if it
  // contradicts the rows already added.
  bool Add(uint64_t i, uint64_t c, uint32_t fp) {
    RibbonScratch::Slot* slots = s_->slots.data();
    while (c != 0) {
      const int tz = __builtin_ctzll(c);
      i += tz;
      c >>= tz;
      RibbonScratch::Slot& s = slots[i];
      if (s.coeff == 0) {
        s.coeff = c;
        s.rhs = fp;
        return true;
      }
      c ^= s.coeff;
      fp ^= s.rhs;
    }
    return fp == 0;  // a repeated row (a repeated key) is no contradiction
  }
  // Value of column j at slot i given the window w of the slots after i
  // (bit t = slot i + t, bit 0 clear).
  uint32_t Solve(uint64_t i, uint64_t w, uint32_t j) const {
    const RibbonScratch::Slot& s = s_->slots[i];
    return ((s.rhs >> j) & 1) ^ (Parity64(s.coeff & w) ? 1 : 0);
  }
  bool Free(uint64_t i) const { return s_->slots[i].coeff == 0; }
  RibbonScratch& scratch() { return *s_; }

 private:
  RibbonScratch* s_;
};

uint32_t LowBits(uint32_t cols) {
  return cols >= 32 ? ~uint32_t{0} : (uint32_t{1} << cols) - 1;
}

bool BuildDense(const HashList& hashes, uint32_t m, uint32_t r, uint32_t salt,
                RibbonSystem* sys, uint8_t* out) {
  sys->Reset(m);
  const uint64_t mask = m == 64 ? ~uint64_t{0} : (uint64_t{1} << m) - 1;
  for (uint64_t h : hashes) {
    const RibbonKey key = RibbonHash(h, salt);
    if (!sys->Add(0, key.row & mask, key.fp & LowBits(r))) return false;
  }
  for (uint32_t j = 0; j < r; j++) {
    uint64_t w = 0;
    for (uint32_t i = m; i-- > 0;) {
      w <<= 1;
      if (!sys->Free(i)) w |= sys->Solve(i, w, j);
    }
    // Column j at payload bits [j m, j m + m).
    for (uint32_t t = 0; t < m; t++) {
      if ((w >> t) & 1) {
        const uint64_t bit = uint64_t{j} * m + t;
        out[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
      }
    }
  }
  return true;
}

bool BuildBanded(const HashList& hashes, const RibbonBanded& g,
                 RibbonSystem* sys, uint8_t* out) {
  sys->Reset(g.num_blocks * kRibbonBlockSlots);
  // Rows are added in order of their start block (a counting sort of the
  // hashes): elimination then walks the slots almost sequentially instead
  // of missing the cache once or more per row (measured: 3x faster at 1M
  // keys). Any order gives the same solvability.
  const uint64_t starting_blocks = g.num_blocks - 1;
  std::vector<uint64_t>& counts = sys->scratch().counts;
  counts.assign(starting_blocks + 1, 0);
  for (uint64_t h : hashes) {
    counts[g.Start(RibbonHash(h, g.salt)) / kRibbonBlockSlots + 1]++;
  }
  for (uint64_t b = 1; b <= starting_blocks; b++) counts[b] += counts[b - 1];
  std::vector<uint64_t>& sorted = sys->scratch().sorted;
  sorted.resize(hashes.size());
  for (uint64_t h : hashes) {
    sorted[counts[g.Start(RibbonHash(h, g.salt)) / kRibbonBlockSlots]++] = h;
  }
  for (uint64_t h : sorted) {
    const RibbonKey key = RibbonHash(h, g.salt);
    const uint64_t start = g.Start(key);
    const uint32_t cols = g.Columns(start / kRibbonBlockSlots);
    if (!sys->Add(start, key.row | 1, key.fp & LowBits(cols))) return false;
  }
  // Back-substitution, last slot first, keeping per column a window of the
  // 64 solution bits after the current slot. Column r exists only in the
  // last k blocks; rows that check it start there, and elimination never
  // moves a pivot backwards, so they are all solved before it ends.
  uint64_t w[kRibbonMaxColumns + 1] = {};
  for (uint64_t b = g.num_blocks; b-- > 0;) {
    const uint32_t cols = g.Columns(b);
    for (uint64_t t = kRibbonBlockSlots; t-- > 0;) {
      const uint64_t i = b * kRibbonBlockSlots + t;
      const bool free = sys->Free(i);
      for (uint32_t j = 0; j < cols; j++) {
        w[j] <<= 1;
        if (!free) w[j] |= sys->Solve(i, w[j], j);
      }
    }
    uint8_t* p = out + 8 * g.BlockWord(b);
    for (uint32_t j = 0; j < cols; j++) EncodeFixed64(p + 8 * j, w[j]);
  }
  return true;
}

void AppendRibbonTrailer(const FilterSpec& spec, uint64_t payload, bool dense,
                         uint32_t salt, uint64_t a, uint64_t b,
                         std::string* dst) {
  Trailer t;
  t.kind = FilterKind::kRibbon;
  t.payload_size = payload;
  SetTrailerHashing(spec, &t);
  t.params[0] = dense ? 0 : 1;
  t.params[1] = static_cast<uint8_t>(salt);
  if (dense) {
    t.params[2] = static_cast<uint8_t>(a);  // m
    t.params[3] = static_cast<uint8_t>(b);  // r
    t.params[4] = t.params[5] = 0;
  } else {
    EncodeFixed32(&t.params[2], static_cast<uint32_t>(a));  // num_blocks
  }
  t.params_size = kRibbonParamsSize;
  AppendTrailer(t, dst);
}

}  // namespace

void AppendRibbonFilter(const FilterSpec& spec, const HashList& hashes,
                        std::string* dst, const RibbonBuildOptions& options,
                        RibbonBuildStats* stats, RibbonScratch* scratch) {
  RibbonBuildStats local;
  if (stats == nullptr) stats = &local;
  *stats = RibbonBuildStats();
  const uint64_t n = hashes.size();
  const RibbonPlan rp = PlanRibbon(spec, n);
  const KindPlan& plan = rp.plan;
  if (plan.params.kind == FilterKind::kEmpty) {
    stats->kind = FilterKind::kEmpty;
    AppendEmptyFilter(spec, dst);
    return;
  }
  const size_t start = dst->size();
  if (plan.params.kind == FilterKind::kBloom && !rp.dense && rp.r > 0) {
    AppendBloomFamilyFilter(BloomSpecWithin(plan.payload_bytes, n, spec),
                            hashes, dst);
    stats->kind = FilterKind::kBloom;
    return;
  }
  if (plan.params.kind == FilterKind::kRibbon) {
    const uint64_t budget_words = plan.payload_bytes / 8;  // banded
    const int salts = rp.dense
                          ? std::clamp(options.dense_salts, 0,
                                       rp.compact ? kRibbonCompactSalts : 256)
                          : std::clamp(options.salts_per_size, 0, 256);
    const int growths = rp.dense ? 0 : std::clamp(options.growths, 0, 8);
    RibbonScratch local_scratch;
    RibbonSystem sys(scratch != nullptr ? scratch : &local_scratch);
    for (int growth = 0; growth <= growths; growth++) {
      for (int s = 0; s < salts; s++) {
        const uint32_t salt = static_cast<uint32_t>((growth * salts + s) & 255);
        stats->attempts++;
        if (rp.dense) {
          // Dense: more slots would cost bits; only salts are tried.
          dst->resize(start);
          dst->resize(start + plan.payload_bytes);
          uint8_t* out = reinterpret_cast<uint8_t*>(&(*dst)[start]);
          if (rp.compact) {
            // Header byte: salt (bits 0..5), bit 4 of r - 1 (bit 6), 0.
            *out++ = static_cast<uint8_t>(salt | (((rp.r - 1) >> 4) << 6));
          }
          if (!BuildDense(hashes, static_cast<uint32_t>(rp.slots), rp.r, salt,
                          &sys, out)) {
            continue;
          }
          stats->kind = FilterKind::kRibbon;
          stats->slots = rp.slots;
          stats->columns = rp.r;
          if (rp.compact) {
            Trailer t;
            t.kind = FilterKind::kRibbon;
            t.payload_size = plan.payload_bytes;
            t.params[0] = plan.first_param;
            t.params_size = 1;
            AppendTrailer(t, dst);
            return;
          }
          AppendRibbonTrailer(spec, plan.payload_bytes, true, salt, rp.slots,
                              rp.r, dst);
          stats->kind = FilterKind::kRibbon;
          stats->slots = rp.slots;
          stats->columns = rp.r;
          return;
        }
        // Banded: each growth adds ~3% blocks; the words stay the same.
        const uint64_t base = rp.slots / kRibbonBlockSlots;
        RibbonBanded g;
        g.num_blocks = base + growth * std::max<uint64_t>(1, base / 32);
        uint64_t words = budget_words;
        g.r = static_cast<uint32_t>(
            std::min<uint64_t>(words / g.num_blocks, kRibbonMaxColumns));
        if (g.r == 0 || g.num_blocks >= (uint64_t{1} << 32)) break;
        g.k = g.r == kRibbonMaxColumns ? 0 : words % g.num_blocks;
        words = g.num_blocks * g.r + g.k;
        g.salt = salt;
        dst->resize(start);
        dst->resize(start + 8 * words);
        uint8_t* out = reinterpret_cast<uint8_t*>(&(*dst)[start]);
        if (!BuildBanded(hashes, g, &sys, out)) continue;
        AppendRibbonTrailer(spec, 8 * words, false, salt, g.num_blocks, 0, dst);
        stats->kind = FilterKind::kRibbon;
        stats->slots = g.num_blocks * kRibbonBlockSlots;
        stats->columns = g.r;
        return;
      }
    }
  }
  // No column fits, or no system was solvable: a Bloom filter of no more
  // bytes than planned.
  dst->resize(start);
  const uint64_t bytes = plan.params.kind == FilterKind::kRibbon
                             ? plan.payload_bytes
                             : std::max<uint64_t>(1, BudgetBits(spec, n) / 8);
  const FilterSpec bloom = BloomSpecWithin(bytes, n, spec);
  stats->kind = PlanBloomFamily(bloom, n, false).params.kind;
  AppendBloomFamilyFilter(bloom, hashes, dst);
}

namespace {

class RibbonBuilder final : public HashListBuilder {
 public:
  explicit RibbonBuilder(const FilterSpec& spec) : HashListBuilder(spec) {}

  void Finish(std::string* dst) override {
    const size_t start = dst->size();
    AppendRibbonFilter(FilterSpecNow(), hashes_, dst, {}, nullptr, &scratch_);
    EndFilter(start, dst);
    hashes_.clear();
  }

 private:
  RibbonScratch scratch_;
};

}  // namespace

std::unique_ptr<FilterBuilder> NewRibbonBuilder(const FilterSpec& spec) {
  return std::make_unique<RibbonBuilder>(spec);
}

}  // namespace internal
}  // namespace sstfilter
