// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind's segmented form (docs/FORMAT.md, form 2; every filter
// of more than 64 keys it fits): 128-bit rows in independent segments,
// each sized to its keys and solved with its own salt.

#include <algorithm>
#include <string>

#include "policy/ribbon/ribbon_build.h"

namespace sstfilter {
namespace internal {
namespace {

// A 128-bit row being eliminated: coefficients lo/hi relative to slot i
// (bit 0 set) = fp.
struct Row128 {
  uint64_t i, lo, hi;
  uint32_t fp;
};

// One step of adding `r` to the system in s->row and s->rhs: stores it in
// a free slot (1), or XORs in the pivot row there and moves to the next set
// bit (0), or finds it a combination of the rows there (1 if consistent,
// -1 if it contradicts them). The row is kept as two words: after a pivot
// row is XORed in, bit 0 is clear, so the shift to the next set bit is
// 1..127 and needs no 128-bit shift's test for 64 or more (the loop is
// most of the build; this is its dependency chain).
SSTFILTER_ALWAYS_INLINE int Step128(Row128* r, RibbonRow* rows, uint32_t* rhs) {
  const RibbonRow pivot = rows[r->i];
  if (pivot == 0) {
    rows[r->i] = static_cast<RibbonRow>(r->hi) << 64 | r->lo;
    rhs[r->i] = r->fp;
    return 1;
  }
  r->lo ^= static_cast<uint64_t>(pivot);
  r->hi ^= static_cast<uint64_t>(pivot >> 64);
  r->fp ^= rhs[r->i];
  if (r->lo != 0) {
    const int tz = __builtin_ctzll(r->lo);  // 1..63
    r->lo = (r->lo >> tz) | (r->hi << (64 - tz));
    r->hi >>= tz;
    r->i += tz;
  } else if (r->hi != 0) {
    const int tz = __builtin_ctzll(r->hi);
    r->lo = r->hi >> tz;
    r->hi = 0;
    r->i += 64 + tz;
  } else {
    return r->fp == 0 ? 1 : -1;  // a repeated row (a repeated key)
  }
  return 0;
}

// The salted hashes (RibbonSegmentMix) of the segment's hashes list[lo,
// hi) under v.salt into s->keys, sorted by start block: a counting sort
// out of place, so the hashes stay as they are for the next salt, and
// elimination reads each key's salted hash instead of mixing it again.
// In order of start block elimination walks the slots almost
// sequentially (the order changes neither solvability nor the solution).
SSTFILTER_ALWAYS_INLINE void SortSegmentKeys(const HashList& list, uint64_t lo,
                                             uint64_t hi,
                                             const RibbonSegmentView& v,
                                             RibbonScratch* s) {
  const uint64_t starts = v.NumStarts();
  std::vector<uint64_t>& next = s->next;
  next.assign(v.blocks, 0);
  for (uint64_t j = lo; j < hi; j++) {
    const uint64_t a = RibbonSegmentMix(list[j], v.salt);
    next[FastRange64(a, starts) / kRibbonWideSlots + 1]++;
  }
  for (uint64_t b = 1; b < v.blocks; b++) next[b] += next[b - 1];
  s->keys.resize(hi - lo);
  uint64_t* keys = s->keys.data();
  for (uint64_t j = lo; j < hi; j++) {
    const uint64_t a = RibbonSegmentMix(list[j], v.salt);
    keys[next[FastRange64(a, starts) / kRibbonWideSlots]++] = a;
  }
}

// Back-substitution of a solved segment into its columns v.words, last
// slot first, with per column j a window w[j] of the 128 solution bits
// after the current slot (bit 0 = the next slot; as the banded form). The
// value at slot i with pivot row c is rhs bit j XOR parity(c & (w << 1)),
// which is parity((c >> 1) & w): independent of the window's shift.
SSTFILTER_ALWAYS_INLINE void BackSubstitute128(const RibbonSegmentView& v,
                                               const RibbonScratch& s) {
  uint64_t lo[kRibbonMaxColumns + 1] = {}, hi[kRibbonMaxColumns + 1] = {};
  uint8_t* out = const_cast<uint8_t*>(v.words);
  for (uint64_t t = v.blocks; t-- > 0;) {
    const uint32_t cols = v.Columns(t);
    for (uint64_t u = kRibbonWideSlots; u-- > 0;) {
      const uint64_t i = t * kRibbonWideSlots + u;
      const RibbonRow c = s.row[i] >> 1;
      const uint64_t c_lo = static_cast<uint64_t>(c);
      const uint64_t c_hi = static_cast<uint64_t>(c >> 64);
      // A free slot (no pivot row) is 0: rhs 0 and c 0 give 0.
      const uint32_t rhs = s.rhs[i];
      for (uint32_t j = 0; j < cols; j++) {
        const uint64_t x = ((rhs >> j) & 1) ^
                           (Parity64((c_lo & lo[j]) ^ (c_hi & hi[j])) ? 1 : 0);
        hi[j] = (hi[j] << 1) | (lo[j] >> 63);
        lo[j] = (lo[j] << 1) | x;
      }
    }
    uint8_t* p = out + kRibbonColumnBytes * v.BlockColumn(t);
    for (uint32_t j = 0; j < cols; j++) {
      EncodeFixed64(p + kRibbonColumnBytes * j, lo[j]);
      EncodeFixed64(p + kRibbonColumnBytes * j + 8, hi[j]);
    }
  }
}

// Solves one segment, hashes list[lo, hi), into its columns v.words (v.salt
// chosen by the caller). False if the system has no solution.
SSTFILTER_ALWAYS_INLINE bool SolveSegment(const HashList& list, uint64_t lo,
                                          uint64_t hi,
                                          const RibbonSegmentView& v,
                                          RibbonScratch* s) {
  const uint64_t slots = v.blocks * kRibbonWideSlots;
  s->row.assign(slots, 0);
  s->rhs.assign(slots, 0);
  SortSegmentKeys(list, lo, hi, v, s);
  // Two rows are eliminated at a time, one from each half of the keys
  // (far apart in the slots), their steps interleaved: each step waits on
  // the last, so one chain alone leaves the core idle. Any order of adding
  // rows gives the same pivot slots and, free slots being 0, the same
  // solution, so the bytes do not depend on it.
  const uint64_t starts = v.NumStarts();
  const uint64_t* keys = s->keys.data();
  const uint64_t n = s->keys.size(), half = n / 2;
  RibbonRow* rows = s->row.data();
  uint32_t* rhs = s->rhs.data();
  auto load = [&](uint64_t j) {
    const RibbonKey k = RibbonHash(keys[j], 0);
    const RibbonRow c = RibbonRow128(k);
    Row128 r;
    r.i = FastRange64(keys[j], starts);
    r.lo = static_cast<uint64_t>(c);
    r.hi = static_cast<uint64_t>(c >> 64);
    r.fp = k.fp & LowBits(v.Columns(r.i / kRibbonWideSlots));
    return r;
  };
  uint64_t ja = 0, jb = half;
  Row128 a{}, b{};
  bool has_a = ja < half, has_b = jb < n;
  if (has_a) a = load(ja++);
  if (has_b) b = load(jb++);
  while (has_a && has_b) {
    const int ra = Step128(&a, rows, rhs);
    const int rb = Step128(&b, rows, rhs);
    if (ra < 0 || rb < 0) return false;
    if (ra > 0) {
      has_a = ja < half;
      if (has_a) a = load(ja++);
    }
    if (rb > 0) {
      has_b = jb < n;
      if (has_b) b = load(jb++);
    }
  }
  // One chain is left: its row in progress, then its other keys.
  Row128* r = has_a ? &a : &b;
  uint64_t j = has_a ? ja : jb;
  const uint64_t end = has_a ? half : n;
  for (bool more = has_a || has_b; more;) {
    int done;
    while ((done = Step128(r, rows, rhs)) == 0) {
    }
    if (done < 0) return false;
    more = j < end;
    if (more) *r = load(j++);
  }
  BackSubstitute128(v, *s);
  return true;
}

// SolveSegment compiled for CPUs with POPCNT and BMI2 (primitives.h):
// 5-8% less build time from 200 to 23,000 keys, measured beside the
// portable build in one process. (The dense form's solver is switched the
// same way: ribbon_dense.cc.)
SSTFILTER_TARGET_BMI2 bool SolveSegmentBmi2(const HashList& list, uint64_t lo,
                                            uint64_t hi,
                                            const RibbonSegmentView& v,
                                            RibbonScratch* s) {
  return SolveSegment(list, lo, hi, v, s);
}

bool BuildSegment(const HashList& list, uint64_t lo, uint64_t hi,
                  const RibbonSegmentView& v, RibbonScratch* s) {
  if (UseBmi2()) return SolveSegmentBmi2(list, lo, hi, v, s);
  return SolveSegment(list, lo, hi, v, s);
}

}  // namespace

bool AppendSegmented(const FilterSpec& spec, const RibbonPlan& rp, int salts,
                     HashList* hashes, std::string* dst,
                     RibbonBuildStats* stats, RibbonScratch* s) {
  const uint64_t segments = rp.segments;
  SortRangeInPlace(
      *hashes, 0, hashes->size(), segments,
      [&](uint64_t h) { return RibbonSegment(h, segments); }, s);
  s->bounds.assign(1, 0);
  s->bounds.insert(s->bounds.end(), s->end.begin(), s->end.end());
  uint64_t blocks = 0, most_keys = 0;
  for (uint64_t i = 0; i < segments; i++) {
    const uint64_t keys = s->bounds[i + 1] - s->bounds[i];
    blocks += RibbonSegmentBlocks(keys);
    most_keys = std::max(most_keys, keys);
  }
  // One allocation for the largest segment's sorted keys (growing it
  // segment by segment could double it).
  s->keys.reserve(most_keys);
  const uint64_t r = rp.columns / blocks;
  if (r == 0 || r >= kRibbonMaxColumns || blocks >= kRibbonMaxWideBlocks) {
    return false;
  }
  const uint64_t wide = rp.columns - r * blocks;
  const size_t start = dst->size();
  Trailer t;
  t.kind = FilterKind::kRibbon;
  t.payload_size = rp.plan.payload_bytes;
  SetTrailerHashing(spec, &t);
  t.params[0] = 2;
  t.params[1] = static_cast<uint8_t>(r);
  EncodeFixed32(&t.params[2], static_cast<uint32_t>(segments));
  t.params_size = kRibbonParamsSize;
  dst->reserve(start + t.payload_size + TrailerSize(t));
  dst->resize(start + t.payload_size);
  uint8_t* dir = reinterpret_cast<uint8_t*>(&(*dst)[start]);
  RibbonSegmentView v;
  v.r = static_cast<uint32_t>(r);
  uint64_t first_block = 0, first_column = 0;
  for (uint64_t i = 0; i < segments; i++) {
    v.blocks = RibbonSegmentBlocks(s->bounds[i + 1] - s->bounds[i]);
    // Wide blocks split in proportion to the blocks (SegmentedFpr).
    v.wide =
        wide * (first_block + v.blocks) / blocks - wide * first_block / blocks;
    v.words = dir + kRibbonEntryBytes * (segments + 1) +
              kRibbonColumnBytes * first_column;
    bool ok = false;
    for (v.salt = 0; !ok && v.salt < static_cast<uint32_t>(salts); v.salt++) {
      stats->attempts++;
      ok = BuildSegment(*hashes, s->bounds[i], s->bounds[i + 1], v, s);
    }
    if (!ok) {
      dst->resize(start);
      return false;
    }
    v.salt--;
    EncodeFixed32(dir + kRibbonEntryBytes * i,
                  static_cast<uint32_t>(first_column));
    EncodeFixed32(dir + kRibbonEntryBytes * i + 4,
                  static_cast<uint32_t>(first_block << 8 | v.salt));
    first_block += v.blocks;
    first_column += r * v.blocks + v.wide;
  }
  EncodeFixed32(dir + kRibbonEntryBytes * segments,
                static_cast<uint32_t>(first_column));
  EncodeFixed32(dir + kRibbonEntryBytes * segments + 4,
                static_cast<uint32_t>(first_block << 8));
  AppendTrailer(t, dst);
  stats->kind = FilterKind::kRibbon;
  stats->slots = blocks * kRibbonWideSlots;
  stats->columns = static_cast<uint32_t>(r);
  return true;
}

}  // namespace internal
}  // namespace sstfilter
