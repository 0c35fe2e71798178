// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Hot code of the ribbon kind (kind 6), header-only so queries inline. The
// construction is in policy/ribbon/ribbon.cc (one file per form beside
// it), the sizing in ribbon_plan.cc; the byte layout and the choice of
// construction in docs/FORMAT.md ("Kind 6: ribbon").
//
// A ribbon filter stores the solution X of a linear system over GF(2): one
// row per key, X has one column per fingerprint bit. A key matches if its
// row times X equals its fingerprint, so a present key always matches and an
// absent one with probability 2^-(columns it checks). Each key's row and
// fingerprint come from its 64-bit hash h and the filter's salt s:
//
//   a     = h ^ (s * kGolden64)
//   start = FastRange64(a, num_starts)                  (banded form only)
//   x     = a * kRibbonMul1; x ^= x >> 28; x *= kRibbonMul2; x ^= x >> 31
//   row   = x | 1 (banded: 64 slots from start; bit 0 is slot start)
//         = x & (2^m - 1) (dense: the m slots of the filter)
//   fp    = high 32 bits of a * kRibbonMul3; column j checks bit j of fp
//
// Banded form (Dillinger & Walzer, "Ribbon filter", 2021, standard Ribbon
// with w = 64): slots are grouped into num_blocks >= 2 blocks of 64, keys
// start in [0, 64 (num_blocks - 1)), so a row spans block b = start / 64
// and b + 1. Block b stores cols(b) words, one per column (bit t of word j
// is column j at slot 64 b + t), blocks one after another: interleaved, so
// the words of one query are contiguous. Columns per block are r for the
// first num_blocks - k blocks and r + 1 for the last k (W = payload words =
// num_blocks r + k, k < num_blocks), which spends any fractional bits per
// key. A key checks cols(b) columns, the fewer of its two blocks. Columns
// grow with the slot because elimination moves a row's pivot only forward,
// past its own 64 slots at times: a row that checks r + 1 columns starts,
// and so is reduced and solved, where every slot has r + 1 columns.
//
// Segmented form (form 2, what builders write for more than 64 keys): the
// banded construction with 128-bit rows and blocks of 128 slots, in S
// independent segments, each sized to its keys and with its own salt; a
// directory at the payload's start gives each segment's first column,
// first block and salt (RibbonSegmented below; docs/FORMAT.md).
//
// Dense form (tiny filters, m <= 64 slots): one row of m bits per key, r
// columns of m bits packed LSB first one after another (column j at payload
// bits [j m, j m + m)). A compact dense filter puts a header byte (salt, a
// bit of r) before those bits and derives m (RibbonCompactSlots).
//
// Queries check the first three columns together, then stop at the first
// column that disagrees: an absent key checks three columns and a little
// more on average, whatever r is.

#ifndef SSTFILTER_POLICY_RIBBON_IMPL_H_
#define SSTFILTER_POLICY_RIBBON_IMPL_H_

#include <cstddef>
#include <cstdint>

#include "policy/primitives.h"

namespace sstfilter {
namespace internal {

inline constexpr uint64_t kRibbonMul1 = 0xbf58476d1ce4e5b9ull;
inline constexpr uint64_t kRibbonMul2 = 0x94d049bb133111ebull;
inline constexpr uint64_t kRibbonMul3 = 0xd6e8feb86659fd93ull;
// Slots per block of the banded form (form 1), = bits of its rows.
inline constexpr uint64_t kRibbonBlockSlots = 64;
// Most columns (fingerprint bits) a ribbon filter checks.
inline constexpr int kRibbonMaxColumns = 32;
// Most slots of the dense form.
inline constexpr int kRibbonMaxDenseSlots = 64;

struct RibbonKey {
  uint64_t a;    // salted hash: the banded form's start is FastRange64(a, .)
  uint64_t row;  // coefficients, before the form's | 1 or mask
  uint32_t fp;   // column j checks bit j
};

inline RibbonKey RibbonHash(uint64_t h, uint32_t salt) {
  RibbonKey k;
  k.a = h ^ (salt * kGolden64);
  uint64_t x = k.a * kRibbonMul1;
  x ^= x >> 28;
  x *= kRibbonMul2;
  k.row = x ^ (x >> 31);
  k.fp = static_cast<uint32_t>((k.a * kRibbonMul3) >> 32);
  return k;
}

SSTFILTER_ALWAYS_INLINE bool Parity64(uint64_t x) {
  return (__builtin_popcountll(x) & 1) != 0;
}

// Columns a query evaluates without a branch between them: an absent key
// fails them with probability 7/8 and pays one well-predicted branch,
// where a branch per column mispredicts about once per query; measured
// against two: 0.90x the time of a single absent query at 10^6 keys
// (docs/BENCHMARKS.md).
inline constexpr uint32_t kRibbonFirstColumns = 3;

// Whether bit(j) equals bit j of fp for every column j < cols: the first
// kRibbonFirstColumns at once, then stopping at the first that differs.
template <typename Bit>
SSTFILTER_ALWAYS_INLINE bool ColumnsMatch(uint32_t cols, uint32_t fp,
                                          const Bit& bit) {
  const uint32_t first =
      cols < kRibbonFirstColumns ? cols : kRibbonFirstColumns;
  uint32_t got = 0;
  for (uint32_t j = 0; j < first; j++) got |= bit(j) << j;
  if (got != (fp & ((1u << first) - 1))) return false;
  for (uint32_t j = first; j < cols; j++) {
    if (bit(j) != ((fp >> j) & 1)) return false;
  }
  return true;
}

// The banded form's geometry, from its trailer.
struct RibbonBanded {
  const uint8_t* data = nullptr;  // payload: 8 W bytes
  uint64_t num_blocks = 0;        // >= 2
  uint32_t r = 0;                 // columns of blocks >= k
  uint64_t k = 0;  // last blocks with r + 1 columns, < num_blocks
  uint32_t salt = 0;

  uint64_t NumStarts() const { return (num_blocks - 1) * kRibbonBlockSlots; }
  // Blocks [num_blocks - k, num_blocks) have r + 1 columns, the others r.
  uint64_t FirstWide() const { return num_blocks - k; }
  // Index of the first word of block b.
  uint64_t BlockWord(uint64_t b) const {
    return b * r + (b > FirstWide() ? b - FirstWide() : 0);
  }
  uint32_t Columns(uint64_t b) const { return r + (b >= FirstWide() ? 1 : 0); }
  uint64_t Word(uint64_t i) const { return DecodeFixed64(data + 8 * i); }

  uint64_t Start(const RibbonKey& key) const {
    return FastRange64(key.a, NumStarts());
  }
  void Prefetch(uint64_t h) const {
    const uint64_t b = Start(RibbonHash(h, salt)) / kRibbonBlockSlots;
    const uint8_t* p = data + 8 * BlockWord(b);
    PrefetchRead(p);
    PrefetchRead(p + 8 * (Columns(b) + Columns(b + 1)) - 1);
  }
  bool MayMatch(uint64_t h) const {
    const RibbonKey key = RibbonHash(h, salt);
    const uint64_t start = Start(key);
    const uint64_t b = start / kRibbonBlockSlots;
    const unsigned off = static_cast<unsigned>(start % kRibbonBlockSlots);
    const uint64_t row = key.row | 1;
    const uint64_t lo = BlockWord(b), hi = lo + Columns(b);
    const uint32_t cols = Columns(b);
    // Slots start .. start + 63 of column j; (x << 1) << (63 - off) is
    // x << (64 - off), and 0 for off = 0.
    auto bit = [&](uint32_t j) -> uint32_t {
      const uint64_t seg =
          (Word(lo + j) >> off) | ((Word(hi + j) << 1) << (63 - off));
      return Parity64(seg & row) ? 1 : 0;
    };
    return ColumnsMatch(cols, key.fp, bit);
  }
};

// --- Segmented form (form 2): 128-bit rows in independent segments ---
//
// Slots per block of the segmented form, = bits of its rows.
inline constexpr uint64_t kRibbonWideSlots = 128;
// Bytes of one directory entry (u32le first word, u32le first block << 8
// | salt) and of one column of one block (two little-endian words).
inline constexpr uint64_t kRibbonEntryBytes = 8;
inline constexpr uint64_t kRibbonColumnBytes = 16;
// Most blocks of a segmented filter (24 bits of a directory entry).
inline constexpr uint64_t kRibbonMaxWideBlocks = uint64_t{1} << 24;

using RibbonRow = unsigned __int128;

// The 128-bit row of a key: the row word of RibbonHash (bit 0 set, the
// start slot) and, above it, the same finalizer on a + kGolden64.
inline RibbonRow RibbonRow128(const RibbonKey& k) {
  uint64_t x = (k.a + kGolden64) * kRibbonMul1;
  x ^= x >> 28;
  x *= kRibbonMul2;
  x ^= x >> 31;
  return (static_cast<RibbonRow>(x) << 64) | (k.row | 1);
}
// The key of hash h in a segment with salt s is RibbonHash(a, 0) of this
// salted hash a = Mix64(h ^ (s * kGolden64)). The start must be re-mixed per
// salt: under a = h ^ (s * kGolden64) alone, keys whose hashes share their
// high bits share their starts under every salt, so a segment whose starts
// happen to crowd somewhere fails under every salt (measured: 1 key set in
// ~50 of 2^15 keys at 1.03 slots per key).
inline uint64_t RibbonSegmentMix(uint64_t h, uint32_t salt) {
  return Mix64(h ^ (salt * kGolden64));
}
// The segment of hash h: the low 32 bits choose (the start within the
// segment comes from the high bits of the salted hash).
inline uint64_t RibbonSegment(uint64_t h, uint64_t segments) {
  return ((h & 0xffffffffu) * segments) >> 32;
}
SSTFILTER_ALWAYS_INLINE bool Parity128(RibbonRow x) {
  return Parity64(static_cast<uint64_t>(x) ^ static_cast<uint64_t>(x >> 64));
}
inline RibbonRow LoadColumn(const uint8_t* p) {
  return (static_cast<RibbonRow>(DecodeFixed64(p + 8)) << 64) |
         DecodeFixed64(p);
}

// One segment of the segmented form: a banded system of `blocks` blocks of
// 128 slots, whose last `wide` blocks have r + 1 columns, the others r.
struct RibbonSegmentView {
  const uint8_t* words = nullptr;  // its first column
  uint64_t blocks = 0;             // >= 2
  uint64_t wide = 0;               // <= blocks
  uint32_t r = 0;
  uint32_t salt = 0;

  uint64_t NumStarts() const { return (blocks - 1) * kRibbonWideSlots; }
  uint64_t FirstWide() const { return blocks - wide; }
  uint32_t Columns(uint64_t t) const { return r + (t >= FirstWide() ? 1 : 0); }
  // Index of the first column of block t, in columns from `words`.
  uint64_t BlockColumn(uint64_t t) const {
    return t * r + (t > FirstWide() ? t - FirstWide() : 0);
  }
  const uint8_t* Block(uint64_t t) const {
    return words + kRibbonColumnBytes * BlockColumn(t);
  }
};

// The segmented form's geometry, from its trailer: S segments, a directory
// of S + 1 entries, then W columns of 16 bytes (docs/FORMAT.md).
struct RibbonSegmented {
  const uint8_t* data = nullptr;  // payload: directory, then the columns
  uint64_t segments = 0;          // S >= 1
  uint64_t columns = 0;           // W
  uint32_t r = 0;                 // 1..32

  const uint8_t* Words() const {
    return data + kRibbonEntryBytes * (segments + 1);
  }
  // Segment i from directory entries i and i + 1; false if they are not
  // what a writer makes (the reader then answers "may match").
  bool Segment(uint64_t i, RibbonSegmentView* v) const {
    const uint8_t* e = data + kRibbonEntryBytes * i;
    const uint64_t w0 = DecodeFixed32(e), w1 = DecodeFixed32(e + 8);
    const uint32_t b0 = DecodeFixed32(e + 4), b1 = DecodeFixed32(e + 12);
    v->blocks = (b1 >> 8) - (b0 >> 8);
    if ((b1 >> 8) < (b0 >> 8) + 2 || w1 < w0 || w1 > columns) return false;
    const uint64_t n = w1 - w0, narrow = v->blocks * r;
    const uint64_t most = r == kRibbonMaxColumns ? narrow : narrow + v->blocks;
    if (n < narrow || n > most) return false;
    v->words = Words() + kRibbonColumnBytes * w0;
    v->wide = n - narrow;
    v->r = r;
    v->salt = b0 & 255;
    return true;
  }
  // Where a key of hash h is checked and against what: Locate computes it
  // (and nothing is read but the directory), Check reads the two blocks.
  // MayMatch is Check(Locate(h)); a batch locates and prefetches a round
  // of keys first, then checks them (ribbon_reader.cc).
  struct Probe {
    const uint8_t* block = nullptr;  // column 0 of block t; null: may match
    uint64_t next = 0;               // bytes from block t to block t + 1
    RibbonRow lo = 0, hi = 0;        // the row's bits in blocks t, t + 1
    uint32_t cols = 0;               // columns to check
    uint32_t fp = 0;
  };
  SSTFILTER_ALWAYS_INLINE Probe Locate(uint64_t h) const {
    Probe probe;
    // Most segments are solved with salt 0: its key is computed while the
    // directory entry loads, and recomputed only for another salt.
    uint64_t a = RibbonSegmentMix(h, 0);
    RibbonSegmentView v;
    if (!Segment(RibbonSegment(h, segments), &v)) return probe;
    if (__builtin_expect(v.salt != 0, 0)) a = RibbonSegmentMix(h, v.salt);
    const RibbonKey key = RibbonHash(a, 0);
    const uint64_t start = FastRange64(key.a, v.NumStarts());
    const uint64_t t = start / kRibbonWideSlots;
    const unsigned off = static_cast<unsigned>(start % kRibbonWideSlots);
    // The row at slots start .. start + 127 as a 256-bit mask over blocks
    // t and t + 1: (row << off) in block t, the bits it pushes out in
    // t + 1 ((row >> 1) >> (127 - off) is row >> (128 - off), 0 if off 0).
    const RibbonRow row = RibbonRow128(key);
    probe.lo = row << off;
    probe.hi = (row >> 1) >> (127 - off);
    probe.cols = v.Columns(t);
    probe.next = kRibbonColumnBytes * probe.cols;
    probe.block = v.Block(t);
    probe.fp = key.fp;
    return probe;
  }
  // The lines an absent key reads: its first columns in both blocks.
  SSTFILTER_ALWAYS_INLINE static void Prefetch(const Probe& probe) {
    if (probe.block == nullptr) return;
    constexpr uint64_t kLast = kRibbonFirstColumns * kRibbonColumnBytes - 1;
    PrefetchRead(probe.block);
    PrefetchRead(probe.block + kLast);
    PrefetchRead(probe.block + probe.next);
    PrefetchRead(probe.block + probe.next + kLast);
  }
  SSTFILTER_ALWAYS_INLINE static bool Check(const Probe& probe) {
    if (probe.block == nullptr) return true;
    const uint8_t* p = probe.block;
    const uint8_t* q = p + probe.next;
    auto bit = [&](uint32_t j) -> uint32_t {
      return Parity128((LoadColumn(p + kRibbonColumnBytes * j) & probe.lo) ^
                       (LoadColumn(q + kRibbonColumnBytes * j) & probe.hi))
                 ? 1
                 : 0;
    };
    return ColumnsMatch(probe.cols, probe.fp, bit);
  }
  SSTFILTER_ALWAYS_INLINE bool MayMatch(uint64_t h) const {
    return Check(Locate(h));
  }
};

// ceil(2^21 / r) for r = 1..kRibbonMaxColumns: x / r for x < 2^11 is
// (x ceil(2^21 / r)) >> 21, exactly (the error is under 2^11 / 2^21 < 1 / r).
struct RibbonInverses {
  uint32_t of[kRibbonMaxColumns + 1];
  constexpr RibbonInverses() : of() {
    for (uint32_t r = 1; r <= kRibbonMaxColumns; r++) {
      of[r] = ((uint32_t{1} << 21) + r - 1) / r;
    }
  }
};
inline constexpr RibbonInverses kRibbonInverses;

// Slots of a compact dense filter (docs/FORMAT.md, "Compact dense form"): as
// many as the column bytes after the header byte hold, at most 64;
// payload_size >= 1, 1 <= r <= kRibbonMaxColumns. LevelDB decodes a filter
// on every call, so there is no division: below 64 slots the quotient
// 8 (payload_size - 1) / r is under 64 r <= 2^11.
inline uint64_t RibbonCompactSlots(uint64_t payload_size, uint32_t r) {
  if (payload_size - 1 >= uint64_t{8} * r) return kRibbonMaxDenseSlots;
  return (8 * (payload_size - 1) * kRibbonInverses.of[r]) >> 21;
}
// Most salts a compact dense filter can name (6 bits of its header byte).
inline constexpr int kRibbonCompactSalts = 64;

// The dense form's geometry, from its trailer.
struct RibbonDense {
  const uint8_t* data = nullptr;  // payload: ceil(m r / 8) bytes
  uint32_t m = 0;                 // slots, 1..64
  uint32_t r = 0;                 // columns, 1..kRibbonMaxColumns
  uint32_t salt = 0;

  uint64_t RowMask() const {
    return m == 64 ? ~uint64_t{0} : (uint64_t{1} << m) - 1;
  }
  // Bits [pos, pos + m) of the payload; reads only the payload's
  // ceil(m r / 8) bytes. Payloads of 8 bytes or more load the 8 bytes from
  // the column's first byte, or the payload's last 8 where fewer remain;
  // a column of more than 57 slots may end in a ninth byte.
  uint64_t Column(uint32_t j) const {
    const uint64_t pos = uint64_t{j} * m;
    const uint64_t first = pos / 8;
    const unsigned shift = static_cast<unsigned>(pos % 8);
    const uint64_t bytes = (uint64_t{m} * r + 7) / 8;
    uint64_t v = 0;
    if (bytes >= 8) {
      const uint64_t at = first + 8 <= bytes ? first : bytes - 8;
      v = (DecodeFixed64(data + at) >> (8 * (first - at))) >> shift;
      if (m > 57) {
        const uint64_t last = (pos + m - 1) / 8;
        if (last == first + 8)
          v |= static_cast<uint64_t>(data[last]) << (64 - shift);
      }
    } else {
      const uint64_t last = (pos + m - 1) / 8;
      for (uint64_t i = first; i <= last; i++) {
        v |= static_cast<uint64_t>(data[i]) << (8 * (i - first));
      }
      v >>= shift;
    }
    return v & RowMask();
  }
  // Columns in groups of four, with one branch per group: an absent key
  // passes a group with chance 1/16, so that branch is predicted, where a
  // branch per column (each failing half the time) cost about one
  // misprediction per call. A group's four columns are independent loads;
  // payloads of 8 bytes or more with columns of at most 57 slots (all
  // LevelDB filters of tens of keys) read each column with one load.
  // Always inlined, so that a caller compiled for POPCNT computes the
  // parities with it (ribbon_reader.cc).
  SSTFILTER_ALWAYS_INLINE bool MayMatch(uint64_t h) const {
    const RibbonKey key = RibbonHash(h, salt);
    const uint64_t mask = RowMask();
    const uint64_t row = key.row & mask;
    const uint64_t bytes = (uint64_t{m} * r + 7) / 8;
    if (bytes < 8 || m > 57) return MatchesFrom(0, key.fp, row);
    auto bit = [&](uint32_t j) -> uint32_t {
      const uint64_t pos = uint64_t{j} * m;
      const uint64_t first = pos / 8;
      const uint64_t at = first + 8 <= bytes ? first : bytes - 8;
      const unsigned shift = static_cast<unsigned>(8 * (first - at) + pos % 8);
      return Parity64((DecodeFixed64(data + at) >> shift) & row) ? 1 : 0;
    };
    uint32_t j = 0;
    for (; j + 4 <= r; j += 4) {
      const uint32_t got =
          bit(j) | (bit(j + 1) << 1) | (bit(j + 2) << 2) | (bit(j + 3) << 3);
      if (got != ((key.fp >> j) & 15)) return false;
    }
    return MatchesFrom(j, key.fp, row);
  }

 private:
  // Whether columns [j, r) give fp's bits, by Column.
  bool MatchesFrom(uint32_t j, uint32_t fp, uint64_t row) const {
    for (; j < r; j += 4) {
      const uint32_t end = j + 4 < r ? j + 4 : r;
      uint32_t diff = 0;
      for (uint32_t c = j; c < end; c++) {
        diff |= (Parity64(Column(c) & row) ? 1u : 0u) ^ ((fp >> c) & 1);
      }
      if (diff != 0) return false;
    }
    return true;
  }
};

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_RIBBON_IMPL_H_
