// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Small primitives shared by every kind's hot code and the format code:
// mapping a hash onto a range, prefetching, the golden-ratio constants of
// the probe sequences, and the little-endian codec of the format.

#ifndef SSTFILTER_POLICY_PRIMITIVES_H_
#define SSTFILTER_POLICY_PRIMITIVES_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

// For functions whose only effect is a prefetch: GCC 12 -O2 judges such a
// function free of side effects and may delete calls to it before inlining
// them (the batched queries then ran without prefetches; found with
// objdump). Always inlining them keeps the prefetch instructions.
#define SSTFILTER_ALWAYS_INLINE inline __attribute__((always_inline))

// For a function whose hot loop takes parities and shifts by variable
// counts (the ribbon kind's segmented solver): compiled for x86-64 CPUs
// with POPCNT, BMI1 and BMI2 (Intel's since 2013, AMD's since 2015), a
// parity is one instruction instead of a chain of six. Call such a
// function only when UseBmi2(); it computes exactly what the portable
// build does (tests compare the two).
#if defined(__x86_64__) && defined(__GNUC__)
#define SSTFILTER_HAVE_TARGET_BMI2 1
#define SSTFILTER_TARGET_BMI2 __attribute__((target("popcnt,bmi,bmi2")))
#else
#define SSTFILTER_HAVE_TARGET_BMI2 0
#define SSTFILTER_TARGET_BMI2
#endif

namespace sstfilter {
namespace internal {

// Whether this CPU runs SSTFILTER_TARGET_BMI2 code (false off x86-64).
inline bool CpuHasBmi2() {
#if SSTFILTER_HAVE_TARGET_BMI2
  static const bool has = [] {
    __builtin_cpu_init();  // in case libgcc's constructor has not run yet
    return __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi") &&
           __builtin_cpu_supports("bmi2");
  }();
  return has;
#else
  return false;
#endif
}

// Whether to run the SSTFILTER_TARGET_BMI2 code: CpuHasBmi2(), unless a
// test turned it off to compare the portable code's output with it.
inline std::atomic<bool>& PortableOnlyForTest() {
  static std::atomic<bool> portable_only{false};
  return portable_only;
}
inline bool UseBmi2() {
  return CpuHasBmi2() && !PortableOnlyForTest().load(std::memory_order_relaxed);
}

// For a function whose hot loop works on vectors of four 64-bit words (the
// ribbon kind's dense solver): compiled for x86-64 CPUs with AVX2 (Intel's
// since 2013, AMD's since 2015), a vector step is one instruction instead
// of two SSE2 ones. Call such a function only when UseAvx2(); like
// SSTFILTER_TARGET_BMI2 it computes exactly what the portable build does.
#if SSTFILTER_HAVE_TARGET_BMI2
#define SSTFILTER_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define SSTFILTER_TARGET_AVX2
#endif

// Whether this CPU runs SSTFILTER_TARGET_AVX2 code, and whether to
// (PortableOnlyForTest turns it off too).
inline bool CpuHasAvx2() {
#if SSTFILTER_HAVE_TARGET_BMI2
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
#else
  return false;
#endif
}
inline bool UseAvx2() {
  return CpuHasAvx2() && !PortableOnlyForTest().load(std::memory_order_relaxed);
}

// floor(2^64 / phi) and floor(2^32 / phi): odd multipliers whose products
// spread consecutive values (Knuth's multiplicative hashing).
inline constexpr uint64_t kGolden64 = 0x9E3779B97F4A7C15ull;
inline constexpr uint32_t kGolden32 = 0x9E3779B9u;

// The MurmurHash3 64-bit finalizer: a bijection of 64-bit words with full
// avalanche. Re-salts a hash: cuckoo's salt, a keyed filter's seed
// (FilterSecret::Hash), the salted builders' seed sequence.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// floor(h * n / 2^64): maps a uniform 64-bit h onto [0, n) without '%'
// (Lemire's fastrange; the high bits of h choose).
inline uint64_t FastRange64(uint64_t h, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

SSTFILTER_ALWAYS_INLINE void PrefetchRead(const void* p) {
  __builtin_prefetch(p, 0, 3);
}
SSTFILTER_ALWAYS_INLINE void PrefetchWrite(const void* p) {
  __builtin_prefetch(p, 1, 3);
}

// The same, as function objects: the hot code takes the prefetch operation
// as a parameter, so that tests can record the addresses instead.
struct PrefetchForRead {
  SSTFILTER_ALWAYS_INLINE void operator()(const void* p) const {
    PrefetchRead(p);
  }
};
struct PrefetchForWrite {
  SSTFILTER_ALWAYS_INLINE void operator()(const void* p) const {
    PrefetchWrite(p);
  }
};

// Items per round of a batched query or build: enough to overlap many
// cache misses, few enough for the stack.
inline constexpr size_t kPrefetchBatch = 32;

// The batched loop, written once. Runs items [0, n) in rounds of up to
// kPrefetchBatch: first locate(i) for every item of a round, which returns
// where item i lives and prefetches it, then visit(i, location) for each,
// so that the cache misses of a round overlap. Stops and returns false as
// soon as visit returns false.
template <typename Locate, typename Visit>
SSTFILTER_ALWAYS_INLINE bool InBatches(size_t n, Locate&& locate,
                                       Visit&& visit) {
  decltype(locate(size_t{0})) locations[kPrefetchBatch];
  for (size_t i = 0; i < n; i += kPrefetchBatch) {
    const size_t m = n - i < kPrefetchBatch ? n - i : kPrefetchBatch;
    for (size_t j = 0; j < m; j++) locations[j] = locate(i + j);
    for (size_t j = 0; j < m; j++) {
      if (!visit(i + j, locations[j])) return false;
    }
  }
  return true;
}

// Little-endian 64-bit words at any alignment, whatever the host's order.
inline uint64_t DecodeFixed64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}
inline uint32_t DecodeFixed32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline void EncodeFixed32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void EncodeFixed64(uint8_t* p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, 8);
}

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_PRIMITIVES_H_
