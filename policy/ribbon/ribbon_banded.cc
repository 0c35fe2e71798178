// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind's banded form (docs/FORMAT.md, form 1; the fallback of
// filters too large for the segmented form): 64-bit rows sorted by start
// block, eliminated on the fly, back-substituted a block at a time.

#include <algorithm>
#include <string>

#include "policy/ribbon/ribbon_build.h"

namespace sstfilter {
namespace internal {
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

}  // namespace

bool AppendBanded(const FilterSpec& spec, const RibbonPlan& rp,
                  HashList* hashes, const RibbonBuildOptions& options,
                  RibbonScratch* scratch, RibbonBuildStats* stats,
                  std::string* dst) {
  const size_t start = dst->size();
  const int salts = std::clamp(options.salts_per_size, 0, 256);
  const int growths = std::clamp(options.growths, 0, 8);
  RibbonScratch local_scratch;
  RibbonSystem sys(scratch != nullptr ? scratch : &local_scratch);
  const uint64_t base = rp.slots / kRibbonBlockSlots;
  for (int growth = 0; growth <= growths; growth++) {
    RibbonBanded g;
    g.num_blocks = base + growth * std::max<uint64_t>(1, base / 32);
    uint64_t words = rp.plan.payload_bytes / 8;
    g.r = static_cast<uint32_t>(
        std::min<uint64_t>(words / g.num_blocks, kRibbonMaxColumns));
    if (g.r == 0 || g.num_blocks >= (uint64_t{1} << 32)) break;
    g.k = g.r == kRibbonMaxColumns ? 0 : words % g.num_blocks;
    words = g.num_blocks * g.r + g.k;
    for (int s = 0; s < salts; s++) {
      g.salt = static_cast<uint32_t>((growth * salts + s) & 255);
      stats->attempts++;
      const Trailer t =
          RibbonTrailer(spec, 8 * words, false, g.salt, g.num_blocks, 0);
      dst->resize(start);
      // One allocation: appending the trailer must not copy the payload.
      dst->reserve(start + 8 * words + TrailerSize(t));
      dst->resize(start + 8 * words);
      uint8_t* out = reinterpret_cast<uint8_t*>(&(*dst)[start]);
      if (!BuildBanded(hashes, g, &sys, out)) continue;
      AppendTrailer(t, dst);
      stats->kind = FilterKind::kRibbon;
      stats->slots = g.num_blocks * kRibbonBlockSlots;
      stats->columns = g.r;
      return true;
    }
  }
  dst->resize(start);
  return false;
}

}  // namespace internal
}  // namespace sstfilter
