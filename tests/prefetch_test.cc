// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Prefetches fetch what is then accessed: for the same hash, the addresses
// a kind's prefetch yields (recorded instead of prefetched) cover exactly
// the bytes its insertion writes. A prefetch that walks another probe
// sequence than the access costs time and no test of results can see it
// (issue 10: the standard Bloom build prefetched double-hashing probes
// while Add used the re-mixed sequence).

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "policy/bloom/bloom_impl.h"
#include "policy/bloom/counting_bloom_impl.h"
#include "policy/cuckoo/cuckoo_impl.h"

namespace sstfilter {
namespace {

using internal::BlockedBloomImpl;
using internal::CountingBloomImpl;
using internal::StandardBloomImpl;

// A prefetcher that records the byte offsets (from `base`) it is asked for.
struct Recorder {
  const uint8_t* base;
  std::set<uint64_t>* offsets;
  void operator()(const void* p) const {
    offsets->insert(static_cast<const uint8_t*>(p) - base);
  }
};

std::vector<uint64_t> Hashes(size_t n) {
  std::vector<uint64_t> h(n);
  uint64_t state = 42;
  for (uint64_t& v : h) v = internal::CuckooNextRandom(&state);
  return h;
}

// Offsets of the bytes of `buf` that are non-zero.
std::set<uint64_t> Written(const std::vector<uint8_t>& buf, size_t from = 0) {
  std::set<uint64_t> out;
  for (size_t i = from; i < buf.size(); i++) {
    if (buf[i] != 0) out.insert(i - from);
  }
  return out;
}

// The 64-byte cache lines (of addresses base + offset) of `offsets`.
std::set<uintptr_t> Lines(const uint8_t* base, const std::set<uint64_t>& o) {
  std::set<uintptr_t> out;
  for (uint64_t off : o)
    out.insert(reinterpret_cast<uintptr_t>(base + off) / 64);
  return out;
}

TEST(PrefetchTest, StandardBloomPrefetchesTheBytesAddWrites) {
  for (uint64_t num_bits : {16ull, 1000ull, 80000ull, 8000008ull}) {
    std::vector<uint8_t> buf((num_bits + 7) / 8);
    for (int k : {1, 2, 7, 30}) {
      for (uint64_t h : Hashes(200)) {
        std::fill(buf.begin(), buf.end(), 0);
        StandardBloomImpl::Add(h, buf.data(), num_bits, k);
        std::set<uint64_t> prefetched;
        StandardBloomImpl::Prefetch(h, buf.data(), num_bits, k,
                                    Recorder{buf.data(), &prefetched});
        ASSERT_EQ(prefetched, Written(buf))
            << "bits " << num_bits << " k " << k << " hash " << h;
      }
    }
    // A query prefetches its first probes: the bytes Add writes for them.
    for (uint64_t h : Hashes(200)) {
      const int k = StandardBloomImpl::kQueryPrefetchProbes;
      std::fill(buf.begin(), buf.end(), 0);
      StandardBloomImpl::Add(h, buf.data(), num_bits, k);
      std::set<uint64_t> prefetched;
      StandardBloomImpl::Prefetch(h, buf.data(), num_bits, k,
                                  Recorder{buf.data(), &prefetched});
      ASSERT_EQ(prefetched, Written(buf)) << "bits " << num_bits;
    }
  }
}

TEST(PrefetchTest, CountingBloomPrefetchesTheCountersInsertWrites) {
  for (uint64_t num_counters : {3ull, 1000ull, 2000001ull}) {
    std::vector<uint8_t> buf((num_counters + 1) / 2);
    for (int k : {1, StandardBloomImpl::kQueryPrefetchProbes, 7, 30}) {
      for (uint64_t h : Hashes(200)) {
        std::fill(buf.begin(), buf.end(), 0);
        CountingBloomImpl::Insert(h, buf.data(), num_counters, k);
        std::set<uint64_t> prefetched;
        CountingBloomImpl::Prefetch(h, buf.data(), num_counters, k,
                                    Recorder{buf.data(), &prefetched});
        ASSERT_EQ(prefetched, Written(buf))
            << "counters " << num_counters << " k " << k << " hash " << h;
        // Counting and standard Bloom share one probe sequence: the same
        // hash probes counter i where the standard kind probes bit i.
        std::vector<uint8_t> bits((num_counters + 7) / 8);
        StandardBloomImpl::Add(h, bits.data(), num_counters, k);
        for (uint64_t c = 0; c < num_counters; c++) {
          const bool bit = (bits[c >> 3] >> (c & 7)) & 1;
          ASSERT_EQ(bit, CountingBloomImpl::Get(buf.data(), c) != 0) << c;
        }
        if (num_counters > 100000) break;  // the loop above is slow there
      }
    }
  }
}

TEST(PrefetchTest, BlockedBloomPrefetchesTheLinesAddWrites) {
  constexpr uint64_t kBlocks = 1000;
  // An aligned payload, and payloads whose blocks straddle two cache lines
  // (RocksDB hands filters 16 bytes off a line).
  for (size_t misalign : {0, 16, 63}) {
    std::vector<uint8_t> storage(kBlocks * 64 + 128);
    uint8_t* aligned = storage.data() +
                       (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64);
    uint8_t* data = aligned + misalign;
    for (uint64_t h : Hashes(500)) {
      std::fill(storage.begin(), storage.end(), 0);
      BlockedBloomImpl::Add(h, data, kBlocks, 7);
      std::set<uint64_t> prefetched;
      BlockedBloomImpl::Prefetch(h, data, kBlocks, Recorder{data, &prefetched});
      const std::vector<uint8_t> payload(data, data + kBlocks * 64);
      const std::set<uint64_t> written = Written(payload);
      ASSERT_FALSE(written.empty());
      // Both ends of the block Add wrote into, and every line it wrote.
      const uint64_t block = *written.begin() / 64 * 64;
      EXPECT_EQ(*written.rbegin() / 64 * 64, block);
      EXPECT_EQ(prefetched, (std::set<uint64_t>{block, block + 63}));
      for (uintptr_t line : Lines(data, written)) {
        EXPECT_EQ(Lines(data, prefetched).count(line), 1u) << "hash " << h;
      }
    }
  }
}

template <int F>
void CheckCuckooPrefetch() {
  using B = internal::CuckooBucket<F>;
  constexpr uint64_t kBuckets = 997;
  std::vector<uint8_t> storage(internal::CuckooPayloadBytes(kBuckets, F) +
                               internal::kCuckooSlack + 64);
  uint8_t* data = storage.data() + 16;
  for (uint64_t h : Hashes(300)) {
    const internal::CuckooLoc loc = B::Locate(h, kBuckets, 0);
    std::set<uint64_t> prefetched;
    B::Prefetch(loc, data, Recorder{data, &prefetched});
    const std::set<uintptr_t> lines = Lines(data, prefetched);
    for (uint64_t b : {loc.b1, loc.b2}) {
      // Fill every slot of the bucket: the bytes of its whole span.
      std::fill(storage.begin(), storage.end(), 0);
      B::StoreSlack(data, b, B::kLow * loc.tag);
      EXPECT_EQ(B::Load(data, storage.size() - 16, b), B::kLow * loc.tag);
      for (uintptr_t line : Lines(data, Written(storage, 16))) {
        EXPECT_EQ(lines.count(line), 1u) << "f " << F << " bucket " << b;
      }
    }
  }
}

TEST(PrefetchTest, CuckooPrefetchesTheLinesOfBothBuckets) {
  CheckCuckooPrefetch<4>();
  CheckCuckooPrefetch<7>();
  CheckCuckooPrefetch<12>();
  CheckCuckooPrefetch<13>();
  CheckCuckooPrefetch<16>();
  CheckCuckooPrefetch<17>();
  CheckCuckooPrefetch<32>();
}

}  // namespace
}  // namespace sstfilter
