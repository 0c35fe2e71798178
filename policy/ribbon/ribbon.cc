// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind (kind 6): construction and its builder. Sizing is in
// ribbon_plan.cc; the hot code and the hashing are in ribbon_impl.h; the
// format and the measurements behind the choices in docs/FORMAT.md.
//
// Construction solves the linear system by Gaussian elimination, row by
// row in order of start block (each row is reduced against the rows
// already placed until it finds a free pivot slot; "on-the-fly" elimination
// of the Ribbon paper), then back-substitutes column by column into the
// payload.
// Construction never fails: a system without a solution (rows that reduce to
// zero with a non-zero fingerprint) is retried with the next salt (the
// segmented form: that segment only), then (banded form) with more slots
// (fewer columns: the payload never grows), and as a last resort the hashes
// are written as a Bloom filter of no more bytes.

#include "policy/ribbon/ribbon.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "policy/bloom_fallback.h"
#include "policy/format.h"
#include "policy/ribbon/ribbon_impl.h"
#include "sstfilter/params.h"

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

uint32_t LowBits(uint32_t cols) {
  return cols >= 32 ? ~uint32_t{0} : (uint32_t{1} << cols) - 1;
}

// The dense system of at most 64 slots, on the stack: LevelDB builds one
// per ~36 keys, so its setup and memory traffic are most of the cost.
// Rows are absolute (bit t = slot t); the pivot row of slot p has p as its
// lowest bit.
class DenseSystem {
 public:
  // Adds the rows c[i] = fp[i], i < n <= 64 (and sets c[n] and fp[n] to 0).
  // False if they contradict each other (a repeated row, a repeated key, is
  // no contradiction).
  //
  // Each row is reduced against the pivot rows until it finds a free slot:
  // a chain of dependent steps (find the lowest bit, load that slot's pivot
  // row, XOR it in), about n^2/4 steps for n rows in n slots. Four rows are
  // reduced at once, a step of each in turn, so their chains overlap; a
  // step has no branch: a free slot reads as a pivot row of 0, a row
  // reduced to 0 goes to slot 64 (always free), and the chain's next row
  // (0 = 0 after the last) is selected, not branched to. (Measured at 36
  // rows: 0.67x the time of one row at a time.) A row placed at slot p
  // meets the rows still being reduced only at p, which they have not
  // passed yet if they are to meet it (a row's lowest bit only rises), so
  // the system is the one of one row at a time: the same pivot slots (the
  // lowest set bits of the rows' span) and the same solution.
  bool AddAll(uint64_t* c, uint32_t* fp, uint32_t n) {
    c[n] = 0;
    fp[n] = 0;
    uint32_t next = 0;  // rows handed out, 0 = 0 rows after the last
    uint32_t bad = 0;   // fingerprints of rows reduced to 0
    auto take = [&](uint64_t* x, uint32_t* fx) {
      const uint32_t i = std::min(next++, n);
      *x = c[i];
      *fx = fp[i];
    };
    uint64_t x0, x1, x2, x3;
    uint32_t f0, f1, f2, f3;
    take(&x0, &f0);
    take(&x1, &f1);
    take(&x2, &f2);
    take(&x3, &f3);
    auto step = [&](uint64_t* x, uint32_t* fx) {
      const uint32_t p = *x != 0 ? __builtin_ctzll(*x) : 64;
      const uint64_t pivot = coeff_[p];
      const uint32_t pivot_fp = rhs_[p];
      const bool free = pivot == 0;
      bad |= p == 64 ? *fx : 0;
      coeff_[p] = free ? *x : pivot;
      rhs_[p] = free ? *fx : pivot_fp;
      const uint32_t i = std::min(next, n);
      next += free;
      const uint64_t next_c = c[i];
      const uint32_t next_fp = fp[i];
      *x = free ? next_c : *x ^ pivot;
      *fx = free ? next_fp : *fx ^ pivot_fp;
    };
    // Done when every row was handed out and every chain holds 0 = 0 (a
    // row reduced to 0 = v takes one more step, into slot 64).
    do {
      step(&x0, &f0);
      step(&x1, &f1);
      step(&x2, &f2);
      step(&x3, &f3);
    } while (next < n || (x0 | x1 | x2 | x3 | f0 | f1 | f2 | f3) != 0);
    coeff_[64] = 0;
    return bad == 0;
  }
  // The solution, free slots 0, in the r columns of m bits (bit t = slot
  // t): back-substitution from the last pivot down, each column a word, so
  // that slot p of column j is bit j of its fingerprint XOR the parity of
  // its pivot row's slots after p in column j, no branch per bit.
  void Solve(uint32_t r, uint64_t* columns) const {
    for (uint32_t j = 0; j < r; j++) columns[j] = 0;
    for (int p = kRibbonMaxDenseSlots - 1; p >= 0; p--) {
      const uint64_t row = coeff_[p];
      if (row == 0) continue;  // a free slot
      const uint32_t v = rhs_[p];
      for (uint32_t j = 0; j < r; j++) {
        const uint64_t bit =
            ((v >> j) ^ __builtin_parityll(row & columns[j])) & 1;
        columns[j] |= bit << p;
      }
    }
  }

 private:
  // Per slot its pivot row (0: free) and fingerprint; slot 64 takes rows
  // reduced to 0 and stays free.
  uint64_t coeff_[kRibbonMaxDenseSlots + 1] = {};
  uint32_t rhs_[kRibbonMaxDenseSlots + 1] = {};
};

// ORs the low `bits` (<= 64) bits of v into out at bit `pos` (LSB first).
void OrBits(uint64_t v, uint64_t pos, uint32_t bits, uint8_t* out) {
  const unsigned shift = static_cast<unsigned>(pos % 8);
  const uint64_t lo = v << shift;
  const uint64_t hi = shift == 0 ? 0 : v >> (64 - shift);  // bits 64..71
  uint8_t* p = out + pos / 8;
  for (uint32_t i = 0; 8 * i < bits + shift; i++) {
    p[i] |= static_cast<uint8_t>(i < 8 ? lo >> (8 * i) : hi);
  }
}

// Solves the dense system of `hashes` (at most 64) under `salt` and ORs
// its r columns of m bits into the zeroed out[0, ceil(m r / 8)). False if
// unsolvable (out untouched).
bool BuildDense(const HashList& hashes, uint32_t m, uint32_t r, uint32_t salt,
                uint8_t* out) {
  const uint64_t mask = m == 64 ? ~uint64_t{0} : (uint64_t{1} << m) - 1;
  uint64_t rows[kRibbonMaxDenseSlots + 1];  // and AddAll's 0 = 0 row
  uint32_t fps[kRibbonMaxDenseSlots + 1];
  uint32_t n = 0;
  for (uint64_t h : hashes) {
    const RibbonKey key = RibbonHash(h, salt);
    rows[n] = key.row & mask;
    fps[n] = key.fp & LowBits(r);
    n++;
  }
  DenseSystem sys;
  if (!sys.AddAll(rows, fps, n)) return false;
  uint64_t columns[kRibbonMaxColumns];
  sys.Solve(r, columns);
  for (uint32_t j = 0; j < r; j++) {
    OrBits(columns[j], uint64_t{j} * m, m, out);  // bits [j m, j m + m)
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
inline int Step128(Row128* r, RibbonRow* rows, uint32_t* rhs) {
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
void SortSegmentKeys(const HashList& list, uint64_t lo, uint64_t hi,
                     const RibbonSegmentView& v, RibbonScratch* s) {
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
void BackSubstitute128(const RibbonSegmentView& v, const RibbonScratch& s) {
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
bool BuildSegment(const HashList& list, uint64_t lo, uint64_t hi,
                  const RibbonSegmentView& v, RibbonScratch* s) {
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

// Appends the segmented filter `rp` plans: hashes sorted by segment, each
// segment sized to its keys and solved on its own (its first salt that
// solves it), in scratch memory of one segment. False (dst as it was) if a
// segment has no solution within `salts` or the blocks do not fit.
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

// Appends the dense filter `rp` plans, trying up to `salts` salts in
// order. False, dst unchanged, if no system was solvable.
bool AppendDense(const FilterSpec& spec, const RibbonPlan& rp,
                 const HashList& hashes, int salts, RibbonBuildStats* stats,
                 std::string* dst) {
  const size_t start = dst->size();
  const uint64_t payload = rp.plan.payload_bytes;
  const uint32_t m = static_cast<uint32_t>(rp.slots);
  const size_t header = rp.compact ? 1 : 0;
  // Zeroed once: BuildDense writes the columns only when it succeeds.
  dst->resize(start + payload);
  for (int s = 0; s < salts; s++) {
    const uint32_t salt = static_cast<uint32_t>(s);
    stats->attempts++;
    uint8_t* out = reinterpret_cast<uint8_t*>(&(*dst)[start]);
    if (!BuildDense(hashes, m, rp.r, salt, out + header)) continue;
    stats->kind = FilterKind::kRibbon;
    stats->slots = rp.slots;
    stats->columns = rp.r;
    if (!rp.compact) {
      AppendTrailer(RibbonTrailer(spec, payload, true, salt, m, rp.r), dst);
      return true;
    }
    // Header byte: salt (bits 0..5), bit 4 of r - 1 (bit 6), 0.
    out[0] = static_cast<uint8_t>(salt | (((rp.r - 1) >> 4) << 6));
    Trailer t;
    t.kind = FilterKind::kRibbon;
    t.payload_size = payload;
    t.params[0] = rp.plan.first_param;
    t.params_size = 1;
    AppendTrailer(t, dst);
    return true;
  }
  dst->resize(start);
  return false;
}

// Appends the banded filter `rp` plans, trying salts_per_size salts at
// each size, then ~3% more blocks (the same words: fewer columns) up to
// `growths` times. False, dst unchanged, if no system was solvable.
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

}  // namespace

void AppendRibbonFilter(const FilterSpec& spec, HashList* hash_list,
                        std::string* dst, const RibbonBuildOptions& options,
                        RibbonBuildStats* stats, RibbonScratch* scratch) {
  const HashList& hashes = *hash_list;
  RibbonBuildStats local;
  if (stats == nullptr) stats = &local;
  *stats = RibbonBuildStats();
  const uint64_t n = hashes.size();
  const RibbonPlan rp = PlanRibbon(spec, n, options.segmented);
  RibbonScratch local_scratch;
  if (scratch == nullptr) scratch = &local_scratch;
  const KindPlan& plan = rp.plan;
  if (plan.params.kind == FilterKind::kEmpty) {
    stats->kind = FilterKind::kEmpty;
    AppendEmptyFilter(spec, dst);
    return;
  }
  if (plan.params.kind != FilterKind::kRibbon) {
    // The plan writes Bloom: more accurate for a few hundred keys, or no
    // column fits.
    AppendBloomFamilyFilter(rp.bloom, hashes, dst);
    stats->kind = plan.params.kind;
    return;
  }
  // Segmented: a segment not solvable within its salts (about 1/4 of them
  // fail each) leaves the Bloom filter below, of the planned bytes.
  if (rp.segmented) {
    if (AppendSegmented(spec, rp, std::clamp(options.segment_salts, 0, 256),
                        hash_list, dst, stats, scratch)) {
      return;
    }
  } else {
    // Dense: more slots would cost bits; only salts are tried.
    const int dense_salts = std::clamp(options.dense_salts, 0,
                                       rp.compact ? kRibbonCompactSalts : 256);
    if (rp.dense
            ? AppendDense(spec, rp, hashes, dense_salts, stats, dst)
            : AppendBanded(spec, rp, hash_list, options, scratch, stats, dst)) {
      return;
    }
  }
  // No system was solvable: a Bloom filter of no more payload bytes.
  const FilterSpec bloom = BloomSpecWithin(plan.payload_bytes, n, spec);
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
    if (scratch_.coeff.capacity() > HashList::kChunkHashes ||
        scratch_.row.capacity() > HashList::kChunkHashes ||
        scratch_.keys.capacity() > HashList::kChunkHashes) {
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
