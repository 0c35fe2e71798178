// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind's dense form (up to 64 keys; docs/FORMAT.md, form 0 and
// the compact dense form): the system on the stack, solved under each salt
// in turn.

#include <algorithm>
#include <string>

#include "policy/primitives.h"
#include "policy/ribbon/ribbon_build.h"

namespace sstfilter {
namespace internal {
namespace {

// The dense system of at most 64 slots, on the stack: LevelDB builds one
// per ~36 keys, so its setup and memory traffic are most of the cost.
// A row is one word: its slots (bit t = slot t, t < m) and, when they fit
// (m + r <= 63, the usual case), its fingerprint above them, so a step
// loads and stores one word; otherwise (kWide) the fingerprint goes in a
// second array beside it. The pivot row of slot p has p as its lowest bit.
template <bool kWide>
class DenseSystem {
 public:
  explicit DenseSystem(uint32_t m) : m_(m) {}

  // Adds the rows w[i] (and, kWide, fingerprints fp[i]), i < n <= 64 (sets
  // w[n] and fp[n] to 0). False if they contradict each other (a repeated
  // row, a repeated key, is no contradiction); it may stop at the first
  // contradiction it meets, leaving the system unusable.
  //
  // Each row is reduced against the pivot rows until it finds a free slot:
  // a chain of dependent steps (find the lowest bit, load that slot's pivot
  // row, XOR it in), about n^2/4 steps for n rows in n slots. Four rows are
  // reduced at once, a step of each in turn, so their chains overlap; a row
  // reduced to 0 goes to a spare slot (always free), and a chain whose row
  // is placed takes the next (0 = 0 after the last). A step branches only
  // to place its row, predicted not to, so the XOR need not wait for the
  // load's value to be compared (branch-free selects measured 1.12x the
  // time; two chains 1.17x, eight 1.07x, at 36 rows). A row placed at slot
  // p meets the rows still being reduced only at p, which they have not
  // passed yet if they are to meet it (a row's lowest bit only rises), so
  // the system is the one of one row at a time: the same pivot slots (the
  // lowest set bits of the rows' span) and the same solution. A packed row
  // whose slots cancel keeps its fingerprint, whose lowest bit, at m or
  // above, marks the contradiction.
  SSTFILTER_ALWAYS_INLINE bool AddAll(uint64_t* w, uint32_t* fp, uint32_t n) {
    w[n] = 0;
    if constexpr (kWide) fp[n] = 0;
    uint32_t next = 0;  // rows handed out, 0 = 0 rows after the last
    uint64_t bad = 0;   // non-zero once a row is a contradiction
    // Slots m .. 62 hold fingerprint bits (packed); none when kWide.
    const uint32_t fp_slots = kWide ? 0 : 63 - m_;
    auto take = [&](uint64_t* x, uint32_t* fx) {
      const uint32_t i = std::min(next++, n);
      *x = w[i];
      *fx = kWide ? fp[i] : 0;
    };
    uint64_t x0, x1, x2, x3;
    uint32_t f0, f1, f2, f3;
    take(&x0, &f0);
    take(&x1, &f1);
    take(&x2, &f2);
    take(&x3, &f3);
    auto step = [&](uint64_t* x, uint32_t* fx) {
      // A zero row: slot 63 when packed (m + r <= 63, bit 63 never set),
      // else slot 64.
      const uint32_t p = kWide ? (*x != 0 ? __builtin_ctzll(*x) : 64)
                               : __builtin_ctzll(*x | uint64_t{1} << 63);
      const uint64_t pivot = row_[p];
      uint32_t pivot_fp = 0;
      if constexpr (kWide) pivot_fp = fp_[p];
      if (__builtin_expect(pivot != 0, 1)) {
        *x ^= pivot;
        if constexpr (kWide) *fx ^= pivot_fp;
        return;
      }
      // Slot p is free: place the row there, take the next.
      bad |= p - m_ < fp_slots;  // packed: slots cancelled, fingerprint not
      row_[p] = *x;
      if constexpr (kWide) {
        bad |= p == 64 ? *fx : 0;
        fp_[p] = *fx;
      }
      const uint32_t i = std::min(next++, n);
      *x = w[i];
      if constexpr (kWide) *fx = fp[i];
    };
    // Done at the first contradiction, or when every row was handed out and
    // every chain holds 0 = 0 (a kWide row reduced to 0 = v takes one more
    // step, into slot 64).
    do {
      step(&x0, &f0);
      step(&x1, &f1);
      step(&x2, &f2);
      step(&x3, &f3);
    } while (bad == 0 &&
             (next < n || (x0 | x1 | x2 | x3 | f0 | f1 | f2 | f3) != 0));
    row_[kWide ? 64 : 63] = 0;
    return bad == 0;
  }
  // The solution, free slots 0, in the r columns of m bits (bit t = slot
  // t): back-substitution from the last pivot down, each column a word, so
  // that slot p of column j is bit j of its fingerprint XOR the parity of
  // its pivot row's slots after p in column j, no branch per bit. (A packed
  // row's fingerprint bits meet no column bit: columns hold slots < m.)
  SSTFILTER_ALWAYS_INLINE void Solve(uint32_t r, uint64_t* columns) const {
    for (uint32_t j = 0; j < r; j++) columns[j] = 0;
    for (int p = static_cast<int>(m_) - 1; p >= 0; p--) {
      const uint64_t row = row_[p];
      if (row == 0) continue;  // a free slot
      const uint32_t v = kWide ? fp_[p] : static_cast<uint32_t>(row >> m_);
      for (uint32_t j = 0; j < r; j++) {
        const uint64_t bit =
            ((v >> j) ^ __builtin_parityll(row & columns[j])) & 1;
        columns[j] |= bit << p;
      }
    }
  }

 private:
  const uint32_t m_;
  // Per slot its pivot row (0: free) and, kWide, fingerprint; slot 63
  // (packed) or 64 takes rows reduced to 0 and stays free.
  uint64_t row_[kRibbonMaxDenseSlots + 1] = {};
  uint32_t fp_[kWide ? kRibbonMaxDenseSlots + 1 : 1] = {};
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

template <bool kWide>
SSTFILTER_ALWAYS_INLINE bool SolveDense(const HashList& hashes, uint32_t m,
                                        uint32_t r, uint32_t salt,
                                        uint8_t* out) {
  const uint64_t mask = m == 64 ? ~uint64_t{0} : (uint64_t{1} << m) - 1;
  uint64_t rows[kRibbonMaxDenseSlots + 1];  // and AddAll's 0 = 0 row
  uint32_t fps[kWide ? kRibbonMaxDenseSlots + 1 : 1];
  uint32_t n = 0;
  for (uint64_t h : hashes) {
    const RibbonKey key = RibbonHash(h, salt);
    const uint32_t fp = key.fp & LowBits(r);
    if constexpr (kWide) {
      rows[n] = key.row & mask;
      fps[n] = fp;
    } else {
      rows[n] = (key.row & mask) | uint64_t{fp} << m;
    }
    n++;
  }
  DenseSystem<kWide> sys(m);
  if (!sys.AddAll(rows, fps, n)) return false;
  uint64_t columns[kRibbonMaxColumns];
  sys.Solve(r, columns);
  for (uint32_t j = 0; j < r; j++) {
    OrBits(columns[j], uint64_t{j} * m, m, out);  // bits [j m, j m + m)
  }
  return true;
}

SSTFILTER_ALWAYS_INLINE bool SolveDenseAnyWidth(const HashList& hashes,
                                                uint32_t m, uint32_t r,
                                                uint32_t salt, uint8_t* out) {
  return m + r <= 63 ? SolveDense<false>(hashes, m, r, salt, out)
                     : SolveDense<true>(hashes, m, r, salt, out);
}

// SolveDenseAnyWidth compiled for CPUs with POPCNT and BMI2 (primitives.h):
// the back-substitution's parities become one instruction each. LevelDB's
// CreateFilter with ribbon:9 at 20, 33, 36 and 50 keys: 0.93, 0.95, 0.96
// and 0.98x the time of the portable build (medians of seven runs of each,
// interleaved). The same bytes (tests compare the two).
SSTFILTER_TARGET_BMI2 bool SolveDenseBmi2(const HashList& hashes, uint32_t m,
                                          uint32_t r, uint32_t salt,
                                          uint8_t* out) {
  return SolveDenseAnyWidth(hashes, m, r, salt, out);
}

// Solves the dense system of `hashes` (at most 64) under `salt` and ORs
// its r columns of m bits into the zeroed out[0, ceil(m r / 8)). False if
// unsolvable (out untouched).
bool BuildDense(const HashList& hashes, uint32_t m, uint32_t r, uint32_t salt,
                uint8_t* out) {
  if (UseBmi2()) return SolveDenseBmi2(hashes, m, r, salt, out);
  return SolveDenseAnyWidth(hashes, m, r, salt, out);
}

}  // namespace

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

}  // namespace internal
}  // namespace sstfilter
