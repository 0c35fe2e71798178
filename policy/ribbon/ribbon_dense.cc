// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind's dense form (up to 64 keys; docs/FORMAT.md, form 0 and
// the compact dense form): the system on the stack, solved under each salt
// in turn, a row at a time or, with AVX2 and from 16 keys, a column at a
// time (the same solution).

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

// Four 64-bit words (GCC's and clang's vector extensions): an operation
// on it is one AVX2 instruction where the code is compiled for AVX2, else
// two SSE2 ones.
typedef uint64_t Words4 __attribute__((vector_size(32)));
// A word of a Words4 array, read and written as a word.
typedef uint64_t AliasWord __attribute__((may_alias));

// Lanes (2, 3, 0, 1) and (1, 0, 3, 2) of x.
#if defined(__clang__)
#define SSTFILTER_SWAP_HALVES(x) __builtin_shufflevector(x, x, 2, 3, 0, 1)
#define SSTFILTER_SWAP_PAIRS(x) __builtin_shufflevector(x, x, 1, 0, 3, 2)
#else
#define SSTFILTER_SWAP_HALVES(x) __builtin_shuffle(x, Words4{2, 3, 0, 1})
#define SSTFILTER_SWAP_PAIRS(x) __builtin_shuffle(x, Words4{1, 0, 3, 2})
#endif

// Transposes the 64 x 64 bit matrix of words a[0, 16) (word i is lane i % 4
// of a[i / 4]): bit j of word i goes to bit i of word j. Six rounds; round
// k swaps the off-diagonal blocks of side 2^(5 - k) in each diagonal block
// of twice that side. Blocks of 4 words or more are whole vectors; the last
// two rounds swap within a vector, lane with lane.
SSTFILTER_ALWAYS_INLINE void Transpose64(Words4* a) {
  uint64_t mask = 0x00000000ffffffffull;  // the low half of each block
  for (int half = 32; half >= 4; half >>= 1, mask ^= mask << half) {
    const Words4 mv = {mask, mask, mask, mask};
    for (int block = 0; block < 64; block += 2 * half) {
      for (int i = block / 4; i < (block + half) / 4; i++) {
        const Words4 t = ((a[i] >> half) ^ a[i + half / 4]) & mv;
        a[i] ^= t << half;
        a[i + half / 4] ^= t;
      }
    }
  }
  constexpr uint64_t k2 = 0x3333333333333333ull, k1 = 0x5555555555555555ull;
  const Words4 m2 = {k2, k2, k2, k2}, m1 = {k1, k1, k1, k1};
  const Words4 low2 = {~uint64_t{0}, ~uint64_t{0}, 0, 0};  // lanes 0, 1
  const Words4 low1 = {~uint64_t{0}, 0, ~uint64_t{0}, 0};  // lanes 0, 2
  for (int i = 0; i < 16; i++) {
    Words4 x = a[i];
    Words4 t = ((x >> 2) ^ SSTFILTER_SWAP_HALVES(x)) & m2;
    x ^= ((t << 2) & low2) | (SSTFILTER_SWAP_HALVES(t) & ~low2);
    t = ((x >> 1) ^ SSTFILTER_SWAP_PAIRS(x)) & m1;
    x ^= ((t << 1) & low1) | (SSTFILTER_SWAP_PAIRS(t) & ~low1);
    a[i] = x;
  }
}

// The dense system of n <= 64 keys in m <= 64 slots with r fingerprint
// bits, solved by Gauss-Jordan elimination on its transpose: word q holds
// slot q's coefficient in every key's row (bit i: key i), so a step
// (eliminate slot p from every row but its pivot's) is an XOR into each
// later word, four words per vector operation, with no branch and no chain
// of dependent loads. When m + r <= 64 (kPacked, the usual case) a key's
// fingerprint bits sit above its slots in one row word, so one transpose
// gives words m .. m + r - 1 the fingerprints; else they are transposed on
// their own into words 64 .. 64 + r - 1.
//
// Slot p's pivot is the lowest key without a pivot that has slot p, so the
// pivot slots are the lowest set bits of the rows' span, whatever the
// order of the keys, and the solution (free slots 0: a pivot slot takes
// its key's fingerprint, once every other pivot slot is eliminated from
// it) is DenseSystem's, bit for bit (tests compare the two). A key left
// without a pivot has had every slot eliminated: its row says 0 = its
// fingerprint, a contradiction unless that is 0 (a repeated key).
template <bool kPacked>
SSTFILTER_ALWAYS_INLINE bool SolveDenseByColumns(const HashList& hashes,
                                                 uint32_t m, uint32_t r,
                                                 uint32_t salt, uint8_t* out) {
  Words4 sys[kPacked ? 16 : 32];
  AliasWord* word = reinterpret_cast<AliasWord*>(sys);
  const uint64_t mask = m == 64 ? ~uint64_t{0} : (uint64_t{1} << m) - 1;
  const uint32_t n = static_cast<uint32_t>(hashes.size());
  // Rows (and, not packed, fingerprints) four at a time, each vector put
  // together in registers: stored as single words, a vector read soon
  // after would wait for them (a failed store-to-load forwarding).
  auto row = [&](uint32_t i, uint64_t* fp) -> uint64_t {
    if (i >= n) return *fp = 0;
    const RibbonKey key = RibbonHash(hashes[i], salt);
    *fp = key.fp & LowBits(r);
    return kPacked ? (key.row & mask) | *fp << m : key.row & mask;
  };
  for (uint32_t v = 0; v < 16; v++) {
    uint64_t f[4];
    const uint64_t w0 = row(4 * v, &f[0]), w1 = row(4 * v + 1, &f[1]);
    const uint64_t w2 = row(4 * v + 2, &f[2]), w3 = row(4 * v + 3, &f[3]);
    sys[v] = Words4{w0, w1, w2, w3};
    if constexpr (!kPacked) sys[16 + v] = Words4{f[0], f[1], f[2], f[3]};
  }
  Transpose64(sys);
  if constexpr (!kPacked) Transpose64(sys + 16);
  const uint32_t fp0 = kPacked ? m : 64;  // the word of fingerprint bit 0
  // Vectors [p / 4, end) hold the words a step changes, and when not
  // packed also [16, fp_end).
  const uint32_t end = (kPacked ? m + r + 3 : m + 3) / 4;
  const uint32_t fp_end = kPacked ? 16 : 16 + (r + 3) / 4;
  uint64_t unpivoted = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  int pivot[kRibbonMaxDenseSlots];  // -1: a free slot
  for (uint32_t p = 0; p < m; p++) {
    const uint64_t has_p = word[p];
    const uint64_t candidates = has_p & unpivoted;
    if (candidates == 0) {
      pivot[p] = -1;
      continue;
    }
    const int j = __builtin_ctzll(candidates);
    unpivoted ^= uint64_t{1} << j;
    pivot[p] = j;
    // Rows other than j with slot p take row j: in each word, bit i ^= bit
    // j for every i in `others`. (Words before p, done, have bit j clear.)
    const uint64_t others = has_p ^ (uint64_t{1} << j);
    const Words4 ov = {others, others, others, others};
    for (uint32_t v = p / 4; v < end; v++) {
      sys[v] ^= ov & (0 - ((sys[v] >> j) & 1));
    }
    for (uint32_t v = 16; v < fp_end; v++) {
      sys[v] ^= ov & (0 - ((sys[v] >> j) & 1));
    }
  }
  uint64_t any_fp = 0;
  for (uint32_t c = 0; c < r; c++) any_fp |= word[fp0 + c];
  if ((any_fp & unpivoted) != 0) return false;
  // Column c's bit p: bit pivot[p] of fingerprint word c (0 if p is free).
  Words4 fps[kRibbonMaxColumns / 4] = {}, columns[kRibbonMaxColumns / 4] = {};
  AliasWord* fp_word = reinterpret_cast<AliasWord*>(fps);
  for (uint32_t c = 0; c < r; c++) fp_word[c] = word[fp0 + c];
  const uint32_t fp_vectors = (r + 3) / 4;
  for (uint32_t p = 0; p < m; p++) {
    if (pivot[p] < 0) continue;
    const int j = pivot[p];
    for (uint32_t v = 0; v < fp_vectors; v++) {
      columns[v] |= ((fps[v] >> j) & 1) << p;
    }
  }
  const AliasWord* column = reinterpret_cast<const AliasWord*>(columns);
  for (uint32_t c = 0; c < r; c++) {
    OrBits(column[c], uint64_t{c} * m, m, out);  // bits [c m, c m + m)
  }
  return true;
}

// SolveDenseByColumns compiled for CPUs with AVX2 (primitives.h), used from
// kByColumnsMinKeys keys. Its transposes cost a fixed ~130 ns. One call
// (one salt) with ribbon:9 against SolveDenseBmi2, in one process, two
// runs: 1.35x the time at 8 keys, 0.85-0.89x at 16, 0.61-0.71x at 36
// (LevelDB's filters), 0.46-0.50x at 64. Compiled without AVX2 it gained
// less (0.86x at 36 keys) and lost at 64 keys (1.2x: two transposes), so
// portable builds keep DenseSystem.
inline constexpr size_t kByColumnsMinKeys = 16;
SSTFILTER_TARGET_AVX2 bool SolveDenseByColumnsAvx2(const HashList& hashes,
                                                   uint32_t m, uint32_t r,
                                                   uint32_t salt,
                                                   uint8_t* out) {
  return m + r <= 64 ? SolveDenseByColumns<true>(hashes, m, r, salt, out)
                     : SolveDenseByColumns<false>(hashes, m, r, salt, out);
}

// Solves the dense system of `hashes` (at most 64) under `salt` and ORs
// its r columns of m bits into the zeroed out[0, ceil(m r / 8)). False if
// unsolvable (out untouched).
bool BuildDense(const HashList& hashes, uint32_t m, uint32_t r, uint32_t salt,
                uint8_t* out) {
  if (UseAvx2() && hashes.size() >= kByColumnsMinKeys) {
    return SolveDenseByColumnsAvx2(hashes, m, r, salt, out);
  }
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
