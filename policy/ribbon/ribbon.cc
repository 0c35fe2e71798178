// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind (kind 6): sizing, construction and its builder. The hot
// code and the hashing are in ribbon_impl.h; the format and the measurements
// behind the choices in docs/FORMAT.md.
//
// Construction solves the linear system by Gaussian elimination, row by
// row in order of start block (each row is reduced against the rows
// already placed until it finds a free pivot slot; "on-the-fly" elimination
// of the Ribbon paper), then back-substitutes column by column into the
// payload.
// Construction never fails: a system without a solution (rows that reduce to
// zero with a non-zero fingerprint) is retried with the next salt, then with
// more slots (fewer columns: the payload never grows), and as a last resort
// the hashes are written as a Bloom filter of no more bytes.

#include "policy/ribbon/ribbon.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "policy/bloom/bloom_builder.h"
#include "policy/format.h"
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
  void Reset(uint64_t slots) {
    s_->coeff.assign(slots, 0);
    s_->rhs.assign(slots, 0);
  }
  // Adds row (coefficients `c` relative to slot `i`) = `fp`. False if it
  // contradicts the rows already added.
  bool Add(uint64_t i, uint64_t c, uint32_t fp) {
    uint64_t* coeff = s_->coeff.data();
    uint32_t* rhs = s_->rhs.data();
    while (c != 0) {
      const int tz = __builtin_ctzll(c);
      i += tz;
      c >>= tz;
      if (coeff[i] == 0) {
        coeff[i] = c;
        rhs[i] = fp;
        return true;
      }
      c ^= coeff[i];
      fp ^= rhs[i];
    }
    return fp == 0;  // a repeated row (a repeated key) is no contradiction
  }
  // Value of column j at slot i given the window w of the slots after i
  // (bit t = slot i + t, bit 0 clear).
  uint32_t Solve(uint64_t i, uint64_t w, uint32_t j) const {
    return ((s_->rhs[i] >> j) & 1) ^ (Parity64(s_->coeff[i] & w) ? 1 : 0);
  }
  bool Free(uint64_t i) const { return s_->coeff[i] == 0; }
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

// Sorts list[lo, hi) in place by key(h), which is in [0, keys): a
// counting sort that moves each hash along its cycle to its key's next
// place, with two words per key (s->next, s->end) and no copy.
template <typename Key>
void SortRangeInPlace(HashList& list, uint64_t lo, uint64_t hi, uint64_t keys,
                      const Key& key, RibbonScratch* s) {
  s->next.assign(keys + 1, 0);
  for (uint64_t i = lo; i < hi; i++) s->next[key(list[i]) + 1]++;
  s->next[0] = lo;
  for (uint64_t b = 1; b <= keys; b++) s->next[b] += s->next[b - 1];
  s->end.assign(s->next.begin() + 1, s->next.end());
  for (uint64_t b = 0; b < keys; b++) {
    while (s->next[b] < s->end[b]) {
      uint64_t h = list[s->next[b]];
      for (uint64_t d = key(h); d != b; d = key(h)) {
        std::swap(h, list[s->next[d]++]);
      }
      list[s->next[b]++] = h;
    }
  }
}

// Sorts `hashes` by start block under `g`, in place, in two passes: into
// groups of kGroupBlocks blocks first, then each group by block. One pass
// by block would move each hash to one of ~n/50 places across all the
// hashes, a cache miss per move, chained (measured 6x slower than a sort
// into a copy at 10^7 keys). Into a few groups the places are a few
// sequential streams; within a group (some 100 KiB of hashes) the moves
// stay in the cache. 256 blocks measured faster than 1024 and 64.
constexpr uint64_t kGroupBlocks = 256;
void SortByStartBlock(HashList* hashes, const RibbonBanded& g,
                      RibbonScratch* s) {
  const uint64_t blocks = g.num_blocks - 1;  // blocks where rows start
  const uint64_t groups = (blocks + kGroupBlocks - 1) / kGroupBlocks;
  auto block = [&](uint64_t h) {
    return g.Start(RibbonHash(h, g.salt)) / kRibbonBlockSlots;
  };
  HashList& list = *hashes;
  SortRangeInPlace(
      list, 0, list.size(), groups,
      [&](uint64_t h) { return block(h) / kGroupBlocks; }, s);
  s->bounds.assign(1, 0);
  s->bounds.insert(s->bounds.end(), s->end.begin(), s->end.end());
  for (uint64_t i = 0; i < groups; i++) {
    const uint64_t first = i * kGroupBlocks;
    SortRangeInPlace(
        list, s->bounds[i], s->bounds[i + 1],
        std::min(kGroupBlocks, blocks - first),
        [&](uint64_t h) { return block(h) - first; }, s);
  }
}

bool BuildBanded(HashList* hashes, const RibbonBanded& g, RibbonSystem* sys,
                 uint8_t* out) {
  sys->Reset(g.num_blocks * kRibbonBlockSlots);
  // Rows are added in order of their start block: elimination then walks
  // the slots almost sequentially instead of missing the cache once or
  // more per row (measured: 3x faster at 1M keys). The order changes
  // neither solvability nor the solution written (the pivot slots of an
  // echelon form are those of the rows' span, and free slots are 0).
  SortByStartBlock(hashes, g, &sys->scratch());
  bool ok = true;
  hashes->ForEachChunk([&](const uint64_t* p, size_t count) {
    for (size_t j = 0; ok && j < count; j++) {
      const RibbonKey key = RibbonHash(p[j], g.salt);
      const uint64_t start = g.Start(key);
      const uint32_t cols = g.Columns(start / kRibbonBlockSlots);
      ok = sys->Add(start, key.row | 1, key.fp & LowBits(cols));
    }
  });
  if (!ok) return false;
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

Trailer RibbonTrailer(const FilterSpec& spec, uint64_t payload, bool dense,
                      uint32_t salt, uint64_t a, uint64_t b) {
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
  return t;
}

}  // namespace

void AppendRibbonFilter(const FilterSpec& spec, HashList* hash_list,
                        std::string* dst, const RibbonBuildOptions& options,
                        RibbonBuildStats* stats, RibbonScratch* scratch) {
  const HashList& hashes = *hash_list;
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
          AppendTrailer(RibbonTrailer(spec, plan.payload_bytes, true, salt,
                                      rp.slots, rp.r),
                        dst);
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
        const Trailer t =
            RibbonTrailer(spec, 8 * words, false, salt, g.num_blocks, 0);
        dst->resize(start);
        // One allocation: appending the trailer must not copy the payload.
        dst->reserve(start + 8 * words + TrailerSize(t));
        dst->resize(start + 8 * words);
        uint8_t* out = reinterpret_cast<uint8_t*>(&(*dst)[start]);
        if (!BuildBanded(hash_list, g, &sys, out)) continue;
        AppendTrailer(t, dst);
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
    AppendRibbonFilter(FilterSpecNow(), &hashes_, dst, {}, nullptr, &scratch_);
    EndFilter(start, dst);
    hashes_.clear();
    // Keep the scratch of small filters only (LevelDB builds many).
    if (scratch_.coeff.capacity() > HashList::kChunkHashes) {
      scratch_ = RibbonScratch();
    }
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
