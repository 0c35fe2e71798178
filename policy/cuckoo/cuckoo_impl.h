// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Hot code of the cuckoo kinds (static kind 3, dynamic kind 5), header-only
// so queries inline. The algorithm is Fan et al., "Cuckoo Filter: Practically
// Better Than Bloom" (CoNEXT 2014): partial-key cuckoo hashing of f-bit
// fingerprints ("tags") into buckets of 4 slots.
//
// From a key's 64-bit hash h and the filter's salt s (docs/FORMAT.md):
//   h'   = s == 0 ? h : Mix64(h + s * kGolden64)       (re-salting, below)
//   b1   = FastRange64(h', N)                           high bits of h'
//   tag  = 1 + FastRange32(low 32 bits of h', 2^f - 1)  in [1, 2^f - 1]
//   c    = FastRange64(tag * kGolden64, N)
//   b2   = Alt(b1, tag) = (c - b1) mod N
// Alt is its own inverse for every N (Alt(Alt(b)) = c - (c - b) = b), so a
// fingerprint can move between its two buckets knowing only where it is: no
// power-of-two table (the reference implementation's XOR needs one and wastes
// up to 2x space). When 2 b1 = c (mod N), both buckets are the same.
//
// A salt re-mixes h bijectively, so a builder that was handed only hashes
// (AddHash) can still retry a failed construction with fresh buckets and
// fingerprints; salt 0 costs nothing at query time.
//
// Layout: bucket i is payload bits [4 f i, 4 f (i + 1)), slot j of it bits
// [4 f i + f j, 4 f i + f (j + 1)), LSB-first as in the Bloom kinds, so a
// bucket is a little-endian bit field. With f even a bucket starts on a byte
// boundary, with f odd on a byte or half byte: for f <= 16 it lies inside the
// 8 bytes from its first byte, for f <= 32 inside 16. A slot holding 0 is
// empty; tags are never 0.
//
// FPR: a negative query compares its tag with the occupied slots of two
// buckets, 8 * load of them on average, each equal by chance with
// probability 1 / (2^f - 1): 1 - (1 - 1/(2^f - 1))^(8 load) (params.h).

#ifndef SSTFILTER_POLICY_CUCKOO_IMPL_H_
#define SSTFILTER_POLICY_CUCKOO_IMPL_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "policy/primitives.h"

namespace sstfilter {
namespace internal {

inline constexpr int kCuckooSlots = 4;
inline constexpr int kCuckooMinTagBits = 4;
inline constexpr int kCuckooMaxTagBits = 32;
// The load factor (keys / slots) static and dynamic cuckoo filters are
// sized for, and the kicks an insertion's random walk may make.
inline constexpr double kCuckooLoad = 0.95;
inline constexpr int kCuckooMaxKicks = 500;

// Buckets for n keys at load kCuckooLoad: ceil(n / 3.8) = ceil(5n / 19), in
// integers so that sizes are exact for every n (at least one bucket).
inline uint64_t CuckooBucketsFor(uint64_t n) {
  static_assert(kCuckooSlots * kCuckooLoad == 3.8, "5/19 is 1 / (4 * 0.95)");
  const uint64_t buckets = n / 19 * 5 + ((n % 19) * 5 + 18) / 19;
  return buckets == 0 ? 1 : buckets;
}

using Uint128 = unsigned __int128;

inline uint64_t CuckooSaltedHash(uint64_t h, uint32_t salt) {
  return salt == 0 ? h : Mix64(h + salt * kGolden64);
}

// Bytes of a payload of `num_buckets` buckets of f-bit tags: ceil(f N / 2).
inline uint64_t CuckooPayloadBytes(uint64_t num_buckets, int f) {
  return (num_buckets * static_cast<uint64_t>(f) + 1) / 2;
}
// The inverse: the number of buckets a payload of `bytes` holds. With
// bytes = ceil(f N / 2), 2 bytes / f lies in [N, N + 1/f], so floor is N.
inline uint64_t CuckooBucketsForPayload(uint64_t bytes, int f) {
  return bytes * 2 / static_cast<uint64_t>(f);
}

inline uint64_t CuckooAlt(uint64_t bucket, uint32_t tag, uint64_t num_buckets) {
  const uint64_t c = FastRange64(tag * kGolden64, num_buckets);
  return c >= bucket ? c - bucket : c + num_buckets - bucket;
}

// Where a hash lives: its two buckets and its tag.
struct CuckooLoc {
  uint64_t b1;
  uint64_t b2;
  uint32_t tag;
};

// Everything about buckets of f = F bits per slot, with F a compile-time
// constant so that every mask below is one (WithTagBits dispatches on f).
// A bucket is held in a Word: uint64_t for F <= 16, Uint128 for F <= 32.
template <int F>
struct CuckooBucket {
  static_assert(F >= kCuckooMinTagBits && F <= kCuckooMaxTagBits, "tag bits");
  using Word = std::conditional_t<(F <= 16), uint64_t, Uint128>;
  static constexpr size_t kWordBytes = sizeof(Word);
  static constexpr int kBits = kCuckooSlots * F;
  static constexpr Word kMask = kBits >= 8 * static_cast<int>(sizeof(Word))
                                    ? ~Word{0}
                                    : (Word{1} << kBits) - 1;
  // One bit at the bottom of every slot; at the top; all bits but the top.
  static constexpr Word kLow =
      Word{1} | Word{1} << F | Word{1} << (2 * F) | Word{1} << (3 * F);
  static constexpr Word kHigh = kLow << (F - 1);
  static constexpr Word kLowBits = kHigh - kLow;
  static constexpr uint64_t kTagMask = (uint64_t{1} << F) - 1;
  // Bytes from a bucket's first byte to its last.
  static constexpr uint64_t kSpanBytes = (kBits + (F % 2 == 1 ? 4 : 0) + 7) / 8;

  static CuckooLoc Locate(uint64_t h, uint64_t num_buckets, uint32_t salt) {
    const uint64_t x = CuckooSaltedHash(h, salt);
    CuckooLoc loc;
    loc.b1 = FastRange64(x, num_buckets);
    loc.tag = static_cast<uint32_t>(
        1 +
        ((static_cast<uint64_t>(static_cast<uint32_t>(x)) * kTagMask) >> 32));
    loc.b2 = CuckooAlt(loc.b1, loc.tag, num_buckets);
    assert(CuckooAlt(loc.b2, loc.tag, num_buckets) == loc.b1);
    return loc;
  }

  static Word LoadWord(const uint8_t* p) {
    if constexpr (sizeof(Word) == 8) {
      return DecodeFixed64(p);
    } else {
      return (Word{DecodeFixed64(p + 8)} << 64) | DecodeFixed64(p);
    }
  }
  static void StoreWord(uint8_t* p, Word v) {
    if constexpr (sizeof(Word) == 8) {
      EncodeFixed64(p, v);
    } else {
      EncodeFixed64(p, static_cast<uint64_t>(v));
      EncodeFixed64(p + 8, static_cast<uint64_t>(v >> 64));
    }
  }
  // Bucket b starts at bit 4 F b: at a byte boundary, or (F odd) 4 bits in.
  static uint64_t BitPos(uint64_t b) { return b * uint64_t{kBits}; }
  static const uint8_t* Address(const uint8_t* data, uint64_t b) {
    return data + (BitPos(b) >> 3);
  }

  // Bucket `b` of a payload of `size` bytes, never reading past its end.
  static Word Load(const uint8_t* data, uint64_t size, uint64_t b) {
    const uint64_t bit = BitPos(b);
    const uint64_t byte = bit >> 3;
    Word w;
    if (__builtin_expect(byte + kWordBytes <= size, 1)) {
      w = LoadWord(data + byte);
    } else {  // the last buckets: gather the bytes that exist
      w = 0;
      for (uint64_t i = byte; i < size; i++) {
        w |= Word{data[i]} << (8 * (i - byte));
      }
    }
    return (w >> (bit & 7)) & kMask;
  }
  // Loads from a buffer with at least kWordBytes of slack after the payload.
  static Word LoadSlack(const uint8_t* data, uint64_t b) {
    const uint64_t bit = BitPos(b);
    return (LoadWord(data + (bit >> 3)) >> (bit & 7)) & kMask;
  }
  static void StoreSlack(uint8_t* data, uint64_t b, Word bucket) {
    const uint64_t bit = BitPos(b);
    uint8_t* p = data + (bit >> 3);
    const int shift = static_cast<int>(bit & 7);
    Word w = LoadWord(p);
    w &= ~(kMask << shift);
    w |= bucket << shift;
    StoreWord(p, w);
  }

  // The top bit of every slot of `bucket` that is zero, and no other bit:
  // (x & kLowBits) + kLowBits sets a slot's top bit iff its low bits are
  // non-zero, with no carry into the next slot; or-ing x adds its top bit.
  static Word ZeroSlots(Word bucket) {
    return ~(((bucket & kLowBits) + kLowBits) | bucket) & kHigh;
  }
  static bool Contains(Word bucket, uint32_t tag) {
    return ZeroSlots(bucket ^ (kLow * tag)) != 0;
  }
  // Empty slots: the 4 flags of ZeroSlots, shifted to the slots' bottom
  // bits and summed by one multiplication into bits [3F, 3F + 3).
  static int CountEmpty(Word bucket) {
    return static_cast<int>(
        (((ZeroSlots(bucket) >> (F - 1)) * kLow) >> (3 * F)) & 7);
  }
  static int LowestBit(Word v) {
    if constexpr (sizeof(Word) == 8) {
      return __builtin_ctzll(v);
    } else {
      const uint64_t lo = static_cast<uint64_t>(v);
      return lo != 0 ? __builtin_ctzll(lo)
                     : 64 + __builtin_ctzll(static_cast<uint64_t>(v >> 64));
    }
  }
  // The lowest slot holding `tag` (0 for an empty slot), or -1.
  static int Find(Word bucket, uint32_t tag) {
    const Word z = ZeroSlots(bucket ^ (kLow * tag));
    return z == 0 ? -1 : LowestBit(z) / F;
  }
  static uint32_t Get(Word bucket, int slot) {
    return static_cast<uint32_t>(static_cast<uint64_t>(bucket >> (F * slot)) &
                                 kTagMask);
  }
  static Word Set(Word bucket, int slot, uint32_t tag) {
    const Word mask = Word{kTagMask} << (F * slot);
    return (bucket & ~mask) | (Word{tag} << (F * slot));
  }

  static bool MayMatch(const CuckooLoc& loc, const uint8_t* data,
                       uint64_t size) {
    // Both loads are issued before either test, so their misses overlap.
    const Word w1 = Load(data, size, loc.b1);
    const Word w2 = Load(data, size, loc.b2);
    return Contains(w1, loc.tag) || Contains(w2, loc.tag);
  }
  // Prefetches both buckets: the line of each bucket's first byte, and the
  // next line only for a bucket that straddles two (~8% of them for f =
  // 12): an unconditional second prefetch per bucket costs more than it
  // saves (docs/BENCHMARKS.md, "Cuckoo and mutable filters").
  // Always inlined, like PrefetchRead (primitives.h says why). `prefetch`
  // is PrefetchForRead but in tests, which record the addresses.
  template <typename Prefetcher = PrefetchForRead>
  SSTFILTER_ALWAYS_INLINE static void PrefetchBucket(const uint8_t* p,
                                                     Prefetcher prefetch = {}) {
    prefetch(p);
    if ((reinterpret_cast<uintptr_t>(p) & 63) + kSpanBytes > 64) {
      prefetch(p + kSpanBytes - 1);
    }
  }
  template <typename Prefetcher = PrefetchForRead>
  SSTFILTER_ALWAYS_INLINE static void Prefetch(const CuckooLoc& loc,
                                               const uint8_t* data,
                                               Prefetcher prefetch = {}) {
    PrefetchBucket(Address(data, loc.b1), prefetch);
    PrefetchBucket(Address(data, loc.b2), prefetch);
  }
};

// Calls fn(std::integral_constant<int, f>()) for f in [4, 32]: one switch,
// after which everything is specialised for f.
// REQUIRES: kCuckooMinTagBits <= f <= kCuckooMaxTagBits.
template <typename Fn>
inline decltype(auto) WithTagBits(int f, Fn&& fn) {
#define SSTFILTER_TAG_BITS_CASE(n) \
  case n:                          \
    return fn(std::integral_constant<int, n>());
  // One row per pair of cases.
  // clang-format off
  switch (f) {
    SSTFILTER_TAG_BITS_CASE(4)  SSTFILTER_TAG_BITS_CASE(5)
    SSTFILTER_TAG_BITS_CASE(6)  SSTFILTER_TAG_BITS_CASE(7)
    SSTFILTER_TAG_BITS_CASE(8)  SSTFILTER_TAG_BITS_CASE(9)
    SSTFILTER_TAG_BITS_CASE(10) SSTFILTER_TAG_BITS_CASE(11)
    SSTFILTER_TAG_BITS_CASE(12) SSTFILTER_TAG_BITS_CASE(13)
    SSTFILTER_TAG_BITS_CASE(14) SSTFILTER_TAG_BITS_CASE(15)
    SSTFILTER_TAG_BITS_CASE(16) SSTFILTER_TAG_BITS_CASE(17)
    SSTFILTER_TAG_BITS_CASE(18) SSTFILTER_TAG_BITS_CASE(19)
    SSTFILTER_TAG_BITS_CASE(20) SSTFILTER_TAG_BITS_CASE(21)
    SSTFILTER_TAG_BITS_CASE(22) SSTFILTER_TAG_BITS_CASE(23)
    SSTFILTER_TAG_BITS_CASE(24) SSTFILTER_TAG_BITS_CASE(25)
    SSTFILTER_TAG_BITS_CASE(26) SSTFILTER_TAG_BITS_CASE(27)
    SSTFILTER_TAG_BITS_CASE(28) SSTFILTER_TAG_BITS_CASE(29)
    SSTFILTER_TAG_BITS_CASE(30) SSTFILTER_TAG_BITS_CASE(31)
    default:
      assert(f == kCuckooMaxTagBits);
      return fn(std::integral_constant<int, kCuckooMaxTagBits>());
    // clang-format on
  }
#undef SSTFILTER_TAG_BITS_CASE
}

inline CuckooLoc CuckooLocate(uint64_t h, uint64_t num_buckets, int f,
                              uint32_t salt) {
  return WithTagBits(f, [&](auto F) {
    return CuckooBucket<F()>::Locate(h, num_buckets, salt);
  });
}

// Query of a cuckoo payload (kinds 3 and 5) of `size` bytes.
inline bool CuckooMayMatch(uint64_t h, const uint8_t* data, uint64_t size,
                           uint64_t num_buckets, int f, uint32_t salt) {
  return WithTagBits(f, [&](auto F) {
    using B = CuckooBucket<F()>;
    return B::MayMatch(B::Locate(h, num_buckets, salt), data, size);
  });
}
// The batched query (InBatches): locates and prefetches both buckets of
// every hash of a round, then tests them.
inline void CuckooMayMatchBatch(size_t n, const uint64_t* hashes,
                                const uint8_t* data, uint64_t size,
                                uint64_t num_buckets, int f, uint32_t salt,
                                bool* results) {
  WithTagBits(f, [&](auto F) {
    using B = CuckooBucket<F()>;
    InBatches(
        n,
        [&](size_t i) {
          const CuckooLoc loc = B::Locate(hashes[i], num_buckets, salt);
          B::Prefetch(loc, data);
          return loc;
        },
        [&](size_t i, const CuckooLoc& loc) {
          results[i] = B::MayMatch(loc, data, size);
          return true;
        });
  });
}

// One move of an insertion's random walk, kept for undoing it.
struct CuckooMove {
  uint64_t bucket;
  uint32_t old_tag;
  int slot;
};

inline uint64_t CuckooNextRandom(uint64_t* state) {  // splitmix64
  uint64_t z = (*state += kGolden64);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A mutable cuckoo table of F-bit tags over a buffer that has
// kCuckooSlack bytes after its payload (so every bucket is one unaligned
// word load). Used by the static builder and by DynamicCuckooFilter.
inline constexpr size_t kCuckooSlack = 16;

template <int F>
class CuckooTable {
 public:
  using B = CuckooBucket<F>;
  using Word = typename B::Word;

  // The buffer must hold CuckooPayloadBytes(num_buckets, F) + kCuckooSlack
  // bytes and outlive the table. `moves` is scratch space for Insert.
  CuckooTable(uint8_t* data, uint64_t num_buckets,
              std::vector<CuckooMove>* moves)
      : data_(data), num_buckets_(num_buckets), moves_(moves) {}

  CuckooLoc Locate(uint64_t h, uint32_t salt) const {
    return B::Locate(h, num_buckets_, salt);
  }
  SSTFILTER_ALWAYS_INLINE void Prefetch(const CuckooLoc& loc) const {
    B::Prefetch(loc, data_);
  }
  bool Contains(const CuckooLoc& loc) const {
    return B::Contains(B::LoadSlack(data_, loc.b1), loc.tag) ||
           B::Contains(B::LoadSlack(data_, loc.b2), loc.tag);
  }

  // Places loc.tag in one of its buckets, moving other tags between their
  // two buckets (at most max_kicks moves, chosen with *rng). If no place is
  // found, every move is undone and it returns false: the table is exactly
  // as before. With `skip_present`, a tag already in one of its buckets is
  // not added again (returns true): keys with equal (buckets, tag) answer
  // alike, so storing one of them loses none.
  bool Insert(const CuckooLoc& loc, bool skip_present, int max_kicks,
              uint64_t* rng) {
    const Word w1 = B::LoadSlack(data_, loc.b1);
    const Word w2 = B::LoadSlack(data_, loc.b2);
    if (skip_present &&
        (B::Contains(w1, loc.tag) || B::Contains(w2, loc.tag))) {
      return true;
    }
    // The emptier bucket (two choices keep buckets even, so walks are rare).
    const int e1 = B::CountEmpty(w1);
    const int e2 = B::CountEmpty(w2);
    if (e1 > 0 && e1 >= e2) {
      B::StoreSlack(data_, loc.b1, B::Set(w1, B::Find(w1, 0), loc.tag));
      return true;
    }
    if (e2 > 0) {
      B::StoreSlack(data_, loc.b2, B::Set(w2, B::Find(w2, 0), loc.tag));
      return true;
    }
    return Walk(loc, max_kicks, rng);
  }

  // Removes one copy of loc.tag from one of its buckets; false if none.
  bool Erase(const CuckooLoc& loc) {
    for (uint64_t b : {loc.b1, loc.b2}) {
      const Word w = B::LoadSlack(data_, b);
      const int slot = B::Find(w, loc.tag);
      if (slot >= 0) {
        B::StoreSlack(data_, b, B::Set(w, slot, 0));
        return true;
      }
    }
    return false;
  }

  // Occupied slots.
  uint64_t CountTags() const {
    uint64_t n = 0;
    for (uint64_t b = 0; b < num_buckets_; b++) {
      n += kCuckooSlots - B::CountEmpty(B::LoadSlack(data_, b));
    }
    return n;
  }

 private:
  // Both buckets of loc are full: a random walk. Each step first looks one
  // move ahead: if the other bucket of any of the 4 tags in bucket b has
  // room, that tag moves there and the carried tag takes its slot.
  // Otherwise a random slot's tag is evicted and carried to its other
  // bucket.
  bool Walk(const CuckooLoc& loc, int max_kicks, uint64_t* rng) {
    moves_->clear();
    uint64_t r = CuckooNextRandom(rng);
    uint64_t b = (r & 1) ? loc.b1 : loc.b2;
    uint32_t carried = loc.tag;
    for (int kick = 0; kick < max_kicks; kick++) {
      if ((kick & 15) == 0) r = CuckooNextRandom(rng);
      const Word w = B::LoadSlack(data_, b);
      uint64_t alt[kCuckooSlots];
      for (int j = 0; j < kCuckooSlots; j++) {
        alt[j] = CuckooAlt(b, B::Get(w, j), num_buckets_);
        PrefetchRead(B::Address(data_, alt[j]));
      }
      for (int j = 0; j < kCuckooSlots; j++) {
        if (alt[j] == b) continue;  // a tag whose two buckets coincide
        const Word wa = B::LoadSlack(data_, alt[j]);
        const int free_slot = B::Find(wa, 0);
        if (free_slot >= 0) {
          B::StoreSlack(data_, alt[j], B::Set(wa, free_slot, B::Get(w, j)));
          B::StoreSlack(data_, b, B::Set(w, j, carried));
          return true;
        }
      }
      const int slot = static_cast<int>((r >> (1 + 4 * (kick & 15))) & 3);
      const uint32_t evicted = B::Get(w, slot);
      B::StoreSlack(data_, b, B::Set(w, slot, carried));
      moves_->push_back({b, evicted, slot});
      carried = evicted;
      b = alt[slot];
    }
    // No room within the budget: undo every move, newest first.
    for (size_t i = moves_->size(); i-- > 0;) {
      const CuckooMove& m = (*moves_)[i];
      const Word w = B::LoadSlack(data_, m.bucket);
      B::StoreSlack(data_, m.bucket, B::Set(w, m.slot, m.old_tag));
    }
    return false;
  }

  uint8_t* data_;
  uint64_t num_buckets_;
  std::vector<CuckooMove>* moves_;
};

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_CUCKOO_IMPL_H_
