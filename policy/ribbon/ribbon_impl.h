// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Hot code of the ribbon kind (kind 6), header-only so queries inline. The
// construction and sizing are in policy/ribbon/ribbon.cc; the byte layout and the
// choice of construction in docs/FORMAT.md ("Kind 6: ribbon").
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
// Dense form (tiny filters, m <= 64 slots): one row of m bits per key, r
// columns of m bits packed LSB first one after another (column j at payload
// bits [j m, j m + m)). A compact dense filter puts a header byte (salt, a
// bit of r) before those bits and derives m (RibbonCompactSlots).
//
// Queries stop at the first column that disagrees: an absent key checks two
// columns on average, whatever r is.

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
// Slots per block of the banded form, = bits of a row.
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

inline bool Parity64(uint64_t x) { return (__builtin_popcountll(x) & 1) != 0; }

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
    // The first two columns without a branch between them: an absent key
    // fails them with probability 3/4 and pays one branch, where a branch
    // per column mispredicts about once per query (docs/BENCHMARKS.md).
    const uint32_t first = cols < 2 ? cols : 2;
    uint32_t got = 0;
    for (uint32_t j = 0; j < first; j++) got |= bit(j) << j;
    if (got != (key.fp & ((1u << first) - 1))) return false;
    for (uint32_t j = first; j < cols; j++) {
      if (bit(j) != ((key.fp >> j) & 1)) return false;
    }
    return true;
  }
};

// Slots of a compact dense filter (docs/FORMAT.md, "Kind 6 compact"): as
// many as the column bytes after the header byte hold, at most 64.
inline uint64_t RibbonCompactSlots(uint64_t payload_size, uint32_t r) {
  const uint64_t m = 8 * (payload_size - 1) / r;
  return m < kRibbonMaxDenseSlots ? m : kRibbonMaxDenseSlots;
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
  // Bits [pos, pos + m) of the payload; reads only bytes that hold them.
  uint64_t Column(uint32_t j) const {
    const uint64_t pos = uint64_t{j} * m;
    const uint64_t first = pos / 8, last = (pos + m - 1) / 8;
    const unsigned shift = static_cast<unsigned>(pos % 8);
    uint64_t v = 0;
    for (uint64_t i = first; i <= last && i < first + 8; i++) {
      v |= static_cast<uint64_t>(data[i]) << (8 * (i - first));
    }
    v >>= shift;
    if (last == first + 8)
      v |= static_cast<uint64_t>(data[last]) << (64 - shift);
    return v & RowMask();
  }
  bool MayMatch(uint64_t h) const {
    const RibbonKey key = RibbonHash(h, salt);
    const uint64_t row = key.row & RowMask();
    for (uint32_t j = 0; j < r; j++) {
      if (Parity64(Column(j) & row) != ((key.fp >> j) & 1)) return false;
    }
    return true;
  }
};

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_RIBBON_IMPL_H_
