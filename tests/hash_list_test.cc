// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// HashList and the builders' walk over it (policy/hash_list.h): every hash
// comes back once, in order, across chunk boundaries; and the Bloom kinds'
// payloads built through the prefetching walk (and, for blocked Bloom, at
// a 64-byte boundary then moved into place) equal, byte for byte, those of
// the plain loop "Add every hash in order" for many n and every alignment.

#include "policy/hash_list.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "policy/bloom/bloom.h"
#include "policy/bloom/bloom_impl.h"
#include "policy/cuckoo/cuckoo_impl.h"
#include "policy/format.h"

namespace sstfilter {
namespace {

using internal::HashList;

std::vector<uint64_t> Hashes(size_t n, uint64_t seed = 42) {
  std::vector<uint64_t> h(n);
  uint64_t state = seed;
  for (uint64_t& v : h) v = internal::CuckooNextRandom(&state);
  return h;
}

// Sizes around the chunk boundaries and the walk's look-ahead.
std::vector<size_t> Sizes() {
  constexpr size_t c = HashList::kChunkHashes;
  return {0,     1, 2,     15,         16,    17,         33,        1000,
          c - 1, c, c + 1, 2 * c - 17, 2 * c, 2 * c + 16, 3 * c + 5, 100003};
}

TEST(HashListTest, KeepsEveryHashInOrder) {
  for (size_t n : Sizes()) {
    const std::vector<uint64_t> want = Hashes(n);
    HashList list;
    for (int round = 0; round < 2; round++) {  // again after clear()
      list.clear();
      for (uint64_t h : want) {
        list.push_back(h);
        EXPECT_EQ(list.back(), h);
      }
      ASSERT_EQ(list.size(), n);
      std::vector<uint64_t> by_chunk, by_index, by_iterator;
      list.ForEachChunk([&](const uint64_t* p, size_t count) {
        EXPECT_GT(count, 0u);
        by_chunk.insert(by_chunk.end(), p, p + count);
      });
      for (size_t i = 0; i < n; i++) by_index.push_back(list[i]);
      for (uint64_t h : list) by_iterator.push_back(h);
      EXPECT_EQ(by_chunk, want) << n;
      EXPECT_EQ(by_index, want) << n;
      EXPECT_EQ(by_iterator, want) << n;
    }
  }
}

TEST(HashListTest, MovedFromListIsEmptyAndUsable) {
  const std::vector<uint64_t> want = Hashes(HashList::kChunkHashes + 5);
  HashList a(want);
  HashList b(std::move(a));
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): the contract
  a.push_back(1);
  a.push_back(2);
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(a.back(), 2u);
  ASSERT_EQ(b.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) ASSERT_EQ(b[i], want[i]);
  a = std::move(b);
  EXPECT_EQ(b.size(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(a.size(), want.size());
  EXPECT_EQ(a.back(), want.back());
}

TEST(HashListTest, ForEachPrefetchedVisitsInOrderWithItsOwnLocation) {
  for (size_t n : Sizes()) {
    const std::vector<uint64_t> want = Hashes(n);
    const HashList list(want);
    std::vector<uint64_t> located, visited;
    internal::ForEachPrefetched<16>(
        list,
        [&](uint64_t h) {
          located.push_back(h);
          return ~h;
        },
        [&](uint64_t h, uint64_t where) {
          EXPECT_EQ(where, ~h);
          // locate runs ahead: up to 16 hashes, never behind.
          EXPECT_GE(located.size(), visited.size() + 1);
          EXPECT_LE(located.size(), visited.size() + 1 + 16);
          visited.push_back(h);
        });
    EXPECT_EQ(located, want) << n;
    EXPECT_EQ(visited, want) << n;
  }
}

// The payload of the plain loop: every hash added in order, no prefetch.
std::string PlainPayload(FilterKind kind, uint64_t payload, int probes,
                         const std::vector<uint64_t>& hashes) {
  std::string out(payload, '\0');
  uint8_t* data = reinterpret_cast<uint8_t*>(&out[0]);
  for (uint64_t h : hashes) {
    if (kind == FilterKind::kBlockedBloom) {
      internal::BlockedBloomImpl::Add(
          h, data, payload / internal::BlockedBloomImpl::kBlockBytes, probes);
    } else {
      internal::StandardBloomImpl::Add(h, data, payload * 8, probes);
    }
  }
  return out;
}

TEST(HashListTest, BloomPayloadsEqualThePlainLoopsForEveryAlignment) {
  std::vector<size_t> sizes = Sizes();
  for (size_t n = 3; n < 200; n += 7) sizes.push_back(n);
  for (FilterKind kind : {FilterKind::kBloom, FilterKind::kBlockedBloom}) {
    for (size_t n : sizes) {
      if (n == 0) continue;
      FilterSpec spec;
      spec.kind = kind;
      spec.bits_per_key = 7.5 + static_cast<double>(n % 5);
      const std::vector<uint64_t> hashes = Hashes(n, n);
      const internal::KindPlan plan =
          internal::PlanBloomFamily(spec, n, /*with_fpr=*/false);
      const std::string want = PlainPayload(
          plan.params.kind, plan.payload_bytes, plan.params.num_probes, hashes);
      // 0..63 bytes already in dst put the payload at every alignment
      // (most n; the largest take a few to stay quick).
      const size_t offsets = n > 20000 ? 3 : 64;
      for (size_t before = 0; before < offsets; before++) {
        std::string dst(before, 'x');
        internal::AppendBloomFamilyFilter(spec, HashList(hashes), &dst);
        ASSERT_GE(dst.size(), before + want.size());
        EXPECT_EQ(dst.substr(0, before), std::string(before, 'x'));
        ASSERT_TRUE(dst.compare(before, want.size(), want) == 0)
            << FilterKindName(kind) << " n=" << n << " offset " << before;
      }
    }
  }
}

}  // namespace
}  // namespace sstfilter
