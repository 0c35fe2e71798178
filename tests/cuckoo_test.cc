// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The static cuckoo filter (kind 3): construction never fails and never
// loses a key, whatever the input; load, size and FPR targets; duplicates
// stored once; the alternate-bucket involution; the parameter math.

#include "policy/cuckoo/cuckoo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "policy/cuckoo/cuckoo_impl.h"
#include "policy/format.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/params.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using internal::CuckooBuildOptions;
using internal::CuckooBuildStats;
using test::AbsentKey;
using test::Key;

// n distinct pseudo-random hashes (splitmix64 of 1, 2, ...; no repeats).
std::vector<uint64_t> Hashes(uint64_t n, uint64_t stream = 0) {
  std::vector<uint64_t> h(n);
  uint64_t state = stream * 0x632be59bd9b4e019ull;
  for (uint64_t& v : h) v = internal::CuckooNextRandom(&state);
  return h;
}

std::string Build(const std::string& spec_text,
                  const std::vector<uint64_t>& hashes,
                  const CuckooBuildOptions& options = {},
                  CuckooBuildStats* stats = nullptr) {
  std::string out;
  internal::AppendCuckooFilter(test::MustParse(spec_text), hashes, &out,
                               options, stats);
  return out;
}

// The number of hashes of `hashes` the filter in `bytes` misses.
size_t CountMissing(std::string_view bytes,
                    const std::vector<uint64_t>& hashes) {
  const FilterReader r = FilterReader::Open(bytes);
  std::unique_ptr<bool[]> res(new bool[hashes.size() + 1]);
  r.MayMatchHashes(hashes.size(), hashes.data(), res.get());
  size_t missing = 0;
  for (size_t i = 0; i < hashes.size(); i++) {
    missing += !res[i];
    // The single query must agree with the batched one.
    if (i % 97 == 0) {
      EXPECT_EQ(r.MayMatchHash(hashes[i]), res[i]);
    }
  }
  return missing;
}

// Occupied slots of a kind-3 or kind-5 filter, read slot by slot as
// docs/FORMAT.md lays them out.
uint64_t CountStoredTags(std::string_view bytes) {
  internal::Trailer t;
  EXPECT_TRUE(internal::ParseTrailer(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t));
  const int f = t.params[0];
  const uint64_t buckets = internal::CuckooBucketsForPayload(t.payload_size, f);
  uint64_t n = 0;
  for (uint64_t slot = 0; slot < 4 * buckets; slot++) {
    uint64_t v = 0;
    for (int i = 0; i < f; i++) {
      const uint64_t bit = slot * f + i;
      v |= uint64_t{(static_cast<uint8_t>(bytes[bit / 8]) >> (bit % 8)) & 1u}
           << i;
    }
    n += v != 0;
  }
  return n;
}

// The number of distinct (bucket pair, tag) entries `hashes` make in the
// table of `bytes` (with its bucket count, width and salt): what the table
// must store, since hashes sharing an entry answer alike.
uint64_t DistinctEntries(std::string_view bytes,
                         const std::vector<uint64_t>& hashes) {
  internal::Trailer t;
  EXPECT_TRUE(internal::ParseTrailer(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t));
  const int f = t.params[0];
  const uint64_t buckets = internal::CuckooBucketsForPayload(t.payload_size, f);
  std::vector<std::pair<uint64_t, uint64_t>> entries;
  for (uint64_t h : hashes) {
    const internal::CuckooLoc loc =
        internal::CuckooLocate(h, buckets, f, t.params[1]);
    entries.emplace_back(std::min(loc.b1, loc.b2),
                         std::max(loc.b1, loc.b2) << 32 | loc.tag);
  }
  std::sort(entries.begin(), entries.end());
  return std::unique(entries.begin(), entries.end()) - entries.begin();
}

TEST(CuckooTest, AltBucketIsAnInvolutionForEveryBucketCount) {
  for (uint64_t buckets :
       {1ull, 2ull, 3ull, 7ull, 10ull, 64ull, 1000003ull, (1ull << 40) + 17}) {
    uint64_t state = buckets;
    for (int i = 0; i < 2000; i++) {
      const uint64_t r = internal::CuckooNextRandom(&state);
      const uint64_t b = internal::FastRange64(r, buckets);
      const uint32_t tag = static_cast<uint32_t>(r) | 1;
      const uint64_t alt = internal::CuckooAlt(b, tag, buckets);
      ASSERT_LT(alt, buckets);
      ASSERT_EQ(internal::CuckooAlt(alt, tag, buckets), b)
          << "buckets=" << buckets << " b=" << b << " tag=" << tag;
    }
  }
}

TEST(CuckooTest, TagsAreNonZeroAndUseEveryValue) {
  // f = 4: 15 tag values; every one must occur, and never 0.
  std::vector<int> seen(16, 0);
  for (uint64_t h : Hashes(20000)) {
    const internal::CuckooLoc loc = internal::CuckooLocate(h, 1000, 4, 0);
    ASSERT_NE(loc.tag, 0u);
    ASSERT_LT(loc.tag, 16u);
    seen[loc.tag]++;
  }
  for (int t = 1; t < 16; t++) EXPECT_GT(seen[t], 20000 / 15 / 2) << t;
}

TEST(CuckooTest, ConstructionNeverFailsForAnySmallCount) {
  // Every n from 0 to 5000: the filter is readable, holds every key, is
  // the kind and size the plan said (no fallback, no growth), and reseeds
  // rarely.
  const FilterSpec spec = test::MustParse("cuckoo:12");
  const std::vector<uint64_t> all = Hashes(5000, 1);
  int reseeded = 0;
  for (uint64_t n = 0; n <= all.size(); n++) {
    const std::vector<uint64_t> hashes(all.begin(), all.begin() + n);
    CuckooBuildStats stats;
    const std::string bytes = Build("cuckoo:12", hashes, {}, &stats);
    const FilterParams plan = internal::PlanFilter(spec, n);
    ASSERT_EQ(stats.kind, plan.kind) << "n=" << n;
    ASSERT_EQ(bytes.size(), plan.filter_bytes) << "n=" << n;
    ASSERT_TRUE(FilterReader::Open(bytes).valid()) << "n=" << n;
    ASSERT_EQ(CountMissing(bytes, hashes), 0u) << "n=" << n;
    reseeded += stats.attempts > 1;
  }
  EXPECT_LE(reseeded, 25);  // measured: 4 of 5001
}

TEST(CuckooTest, SmallFiltersPickTheSmallerKind) {
  const FilterSpec spec = test::MustParse("cuckoo:12");
  for (uint64_t n : {1, 2, 5, 19, 36, 100, 300, 600}) {
    const FilterParams p = internal::PlanFilter(spec, n);
    const uint64_t buckets = (5 * n + 18) / 19;  // ceil(n / 3.8)
    // Whatever is written reaches the cuckoo filter's FPR...
    EXPECT_LE(p.expected_fpr, CuckooFpr(12, n / (4.0 * buckets))) << n;
    // ...in at most the cuckoo filter's bytes, trailer (10 or 11) included.
    EXPECT_LE(p.filter_bytes, (buckets * 12 + 1) / 2 + 11) << n;
    // Per-filter overhead is a few bytes: the 36 keys of a LevelDB filter
    // block at FPR 0.18% (13.2 bits per key for an ideal Bloom filter)
    // cost under 15 bits each.
    if (n == 36) {
      EXPECT_LT(p.filter_bytes * 8, 36u * 15) << p.filter_bytes;
    }
  }
  // Large filters are cuckoo filters.
  EXPECT_EQ(internal::PlanFilter(spec, 1000).kind, FilterKind::kCuckoo);
}

TEST(CuckooTest, LoadFactorAndSpaceTargets) {
  for (uint64_t n : {700, 10000, 100000, 1000000}) {
    const std::vector<uint64_t> hashes = Hashes(n, 2);
    CuckooBuildStats stats;
    const std::string bytes = Build("cuckoo:12", hashes, {}, &stats);
    ASSERT_EQ(stats.kind, FilterKind::kCuckoo) << n;
    const double load = static_cast<double>(n) / (4.0 * stats.num_buckets);
    EXPECT_GE(load, 0.94) << "n=" << n;
    EXPECT_LE(load, 0.96) << "n=" << n;
    // Nothing lost, nothing doubled.
    EXPECT_EQ(CountStoredTags(bytes), DistinctEntries(bytes, hashes));
    if (n >= 10000) {
      EXPECT_LE(8.0 * bytes.size() / n, 12.7) << "n=" << n;
    }
  }
}

TEST(CuckooTest, FalsePositiveRateOfCuckoo12) {
  // 100k fixed keys, 1M fixed absent keys: <= 0.20% (paper: 0.18% at 12.6
  // bits per key; the formula gives 0.186%).
  const uint64_t n = 100000;
  const std::string bytes = test::BuildFilter(test::MustParse("cuckoo:12"), n);
  const FilterReader r = FilterReader::Open(bytes);
  ASSERT_EQ(r.kind(), FilterKind::kCuckoo);
  int fp = 0;
  const int kProbes = 1000000;
  for (int i = 0; i < kProbes; i++) fp += r.MayMatch(AbsentKey(i));
  const double fpr = static_cast<double>(fp) / kProbes;
  EXPECT_LE(fpr, 0.0020);
  EXPECT_GE(fpr, 0.0015);  // the probes do reach the filter
  EXPECT_LE(8.0 * bytes.size() / n, 12.7);
}

TEST(CuckooTest, EveryFingerprintWidthWorks) {
  // cuckoo:5 .. cuckoo:32 (64-bit and 128-bit bucket words, odd and even
  // widths): no false negatives, FPR near the formula.
  const std::vector<uint64_t> hashes = Hashes(3000, 3);
  const std::vector<uint64_t> absent = Hashes(200000, 4);
  for (int f = 5; f <= 32; f++) {
    const std::string text = "cuckoo:" + std::to_string(f);
    CuckooBuildStats stats;
    const std::string bytes = Build(text, hashes, {}, &stats);
    ASSERT_EQ(stats.kind, FilterKind::kCuckoo) << text;
    ASSERT_EQ(CountMissing(bytes, hashes), 0u) << text;
    const FilterReader r = FilterReader::Open(bytes);
    int fp = 0;
    for (uint64_t h : absent) fp += r.MayMatchHash(h);
    const double expected = CuckooFpr(f, 3000 / (4.0 * stats.num_buckets));
    // Within 2x the formula plus 5 sigma; where 20 or more false
    // positives are expected (f <= 16), at least half of them.
    EXPECT_LE(fp / 200000.0, 2 * expected + 5 * std::sqrt(expected / 200000))
        << text << " expected " << expected;
    if (expected * 200000 >= 20) {
      EXPECT_GE(fp / 200000.0, 0.5 * expected) << text;
    }
  }
}

TEST(CuckooTest, RepeatedKeysAreStoredOnce) {
  // A key added 1000 times between other keys: the same bytes as once.
  std::unique_ptr<FilterBuilder> b;
  ASSERT_TRUE(NewFilterBuilder(test::MustParse("cuckoo:12"), &b).ok());
  for (int i = 0; i < 1000; i++) {
    b->AddKey("prefix");
    b->AddKey(Key(i));
  }
  EXPECT_EQ(b->NumEntries(), 1001u);
  std::string repeated;
  b->Finish(&repeated);
  b->AddKey("prefix");
  for (int i = 0; i < 1000; i++) b->AddKey(Key(i));
  std::string once;
  b->Finish(&once);
  EXPECT_EQ(repeated, once);

  // Repeats far apart (beyond the builder's cache of recent hashes) are
  // still stored once; they only cost load.
  std::vector<uint64_t> hashes = Hashes(20000, 5);
  const size_t distinct = hashes.size();
  hashes.insert(hashes.end(), hashes.begin(), hashes.end());
  hashes.insert(hashes.end(), hashes.begin(), hashes.begin() + distinct);
  const std::string bytes = Build("cuckoo:12", hashes);
  EXPECT_EQ(CountMissing(bytes, hashes), 0u);
  EXPECT_EQ(CountStoredTags(bytes), DistinctEntries(bytes, hashes));
  EXPECT_GE(CountStoredTags(bytes), distinct - 20);
}

// Crafted hashes whose buckets, for salt 0, all lie in 10 adjacent buckets
// (40 slots) while ~300 distinct (bucket, tag) entries need them: the first
// table must overflow, so the builder has to reseed, which re-mixes every
// hash into fresh buckets and tags.
TEST(CuckooTest, HashesCrowdingTenBucketsForceAReseed) {
  const uint64_t n = 2000;
  const uint64_t buckets = (5 * n + 18) / 19;  // what the builder sizes
  const uint64_t first = 100, width = 10;
  auto in_range = [&](uint64_t b) { return b >= first && b < first + width; };
  std::vector<uint64_t> hashes;
  for (uint64_t b1 = first; b1 < first + width; b1++) {
    // The middle of bucket b1's hash range: FastRange64 maps it to b1,
    // whatever its low 32 bits (a bucket spans ~2^55 hash values).
    const uint64_t mid =
        static_cast<uint64_t>(((static_cast<internal::Uint128>(b1) << 64) +
                               (internal::Uint128{1} << 63)) /
                              buckets);
    for (uint32_t tag = 1; tag < 4096; tag++) {
      if (!in_range(internal::CuckooAlt(b1, tag, buckets))) continue;
      // The smallest low word whose tag is `tag`.
      const uint64_t low = (((uint64_t{tag} - 1) << 32) + 4094) / 4095;
      const uint64_t h = (mid & ~0xffffffffull) | low;
      const internal::CuckooLoc loc = internal::CuckooLocate(h, buckets, 12, 0);
      ASSERT_EQ(loc.b1, b1);
      ASSERT_EQ(loc.tag, tag);
      hashes.push_back(h);
    }
  }
  ASSERT_GT(hashes.size(), 8 * width);  // far more than 4 * width slots
  const std::vector<uint64_t> filler = Hashes(n - hashes.size(), 11);
  hashes.insert(hashes.end(), filler.begin(), filler.end());
  ASSERT_EQ(hashes.size(), n);

  CuckooBuildStats stats;
  const std::string bytes = Build("cuckoo:12", hashes, {}, &stats);
  EXPECT_EQ(stats.kind, FilterKind::kCuckoo);
  EXPECT_EQ(stats.num_buckets, buckets);
  EXPECT_GT(stats.attempts, 1);
  EXPECT_EQ(CountMissing(bytes, hashes), 0u);
  internal::Trailer t;
  ASSERT_TRUE(internal::ParseTrailer(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t));
  EXPECT_NE(t.params[1], 0) << "the salt is stored";
  EXPECT_EQ(CountStoredTags(bytes), DistinctEntries(bytes, hashes));
}

// Distinct hashes with the same buckets and fingerprint for salt 0 answer
// alike, so one slot holds them all: no reseed, no key lost.
TEST(CuckooTest, HashesSharingBucketAndFingerprint) {
  std::vector<uint64_t> hashes = Hashes(2000, 6);
  for (uint64_t i = 0; i < 3000; i++) {
    // Fixed top 20 and low 32 bits; bits 32..43 vary.
    hashes.push_back((0x5a5a5ull << 44) | (i << 32) | 0x12345678ull);
  }
  CuckooBuildStats stats;
  const std::string bytes = Build("cuckoo:12", hashes, {}, &stats);
  EXPECT_EQ(stats.kind, FilterKind::kCuckoo);
  EXPECT_EQ(CountMissing(bytes, hashes), 0u);
  EXPECT_EQ(CountStoredTags(bytes), DistinctEntries(bytes, hashes));
  EXPECT_LE(CountStoredTags(bytes), 2000u + 2);
}

TEST(CuckooTest, IdenticalHashesEverywhere) {
  // One hash repeated 10000 times between others, including hash 0.
  std::vector<uint64_t> hashes;
  const std::vector<uint64_t> others = Hashes(3000, 7);
  for (uint64_t i = 0; i < 10000; i++) {
    hashes.push_back(i % 2 == 0 ? 0 : 42);
    if (i < others.size()) hashes.push_back(others[i]);
  }
  std::unique_ptr<FilterBuilder> b;
  ASSERT_TRUE(NewFilterBuilder(test::MustParse("cuckoo:12"), &b).ok());
  for (uint64_t h : hashes) b->AddHash(h);
  std::string bytes;
  b->Finish(&bytes);
  EXPECT_EQ(CountMissing(bytes, hashes), 0u);
  EXPECT_EQ(CountStoredTags(bytes), DistinctEntries(bytes, hashes));
  EXPECT_GE(CountStoredTags(bytes), 3002u - 5);
}

TEST(CuckooTest, FallsBackToBlockedBloomWhenNoTableFits) {
  // No kicks allowed and no reseeding: a full table cannot be built, so
  // the builder writes a blocked Bloom filter of the same budget.
  const std::vector<uint64_t> hashes = Hashes(20000, 8);
  CuckooBuildOptions options;
  options.max_kicks = 0;
  options.salts_per_size = 1;
  options.growths = 0;
  CuckooBuildStats stats;
  const std::string bytes = Build("cuckoo:12", hashes, options, &stats);
  EXPECT_EQ(stats.kind, FilterKind::kBlockedBloom);
  const FilterReader r = FilterReader::Open(bytes);
  ASSERT_TRUE(r.valid());
  EXPECT_EQ(r.kind(), FilterKind::kBlockedBloom);
  EXPECT_EQ(CountMissing(bytes, hashes), 0u);
  const FilterParams plan =
      internal::PlanFilter(test::MustParse("cuckoo:12"), hashes.size());
  EXPECT_LE(bytes.size(), plan.filter_bytes + 64);
}

TEST(CuckooTest, GrowsTheTableBeforeGivingUp) {
  // A walk of 2 kicks rarely fills 95%, but a few percent more buckets can
  // do; whichever table is written holds every key.
  const std::vector<uint64_t> hashes = Hashes(20000, 9);
  CuckooBuildOptions options;
  options.max_kicks = 2;
  options.salts_per_size = 1;
  options.growths = 3;
  CuckooBuildStats stats;
  const std::string bytes = Build("cuckoo:12", hashes, options, &stats);
  EXPECT_GT(stats.attempts, 1);
  EXPECT_EQ(CountMissing(bytes, hashes), 0u);
  if (stats.kind == FilterKind::kCuckoo) {
    EXPECT_GT(stats.num_buckets, (20000u * 5 + 18) / 19);  // grown
  }
}

TEST(CuckooTest, TenMillionKeysInOneFilter) {
  // Hashes instead of keys keep this quick; the filter sees only hashes.
  const std::vector<uint64_t> hashes = Hashes(10000000, 10);
  CuckooBuildStats stats;
  const std::string bytes = Build("cuckoo:12", hashes, {}, &stats);
  ASSERT_EQ(stats.kind, FilterKind::kCuckoo);
  EXPECT_EQ(CountMissing(bytes, hashes), 0u);
  EXPECT_GE(10000000 / (4.0 * stats.num_buckets), 0.94);
}

TEST(CuckooParamsTest, Formula) {
  // 8 * 0.95 / 4095 = 0.186% for cuckoo:12 at 95% load.
  EXPECT_NEAR(CuckooFpr(12, 0.95), 0.001854, 0.000005);
  EXPECT_NEAR(CuckooFpr(8, 0.95), 1 - std::pow(1 - 1 / 255.0, 7.6), 1e-12);
  EXPECT_GT(CuckooFpr(32, 0.95), 0);
  EXPECT_LT(CuckooFpr(32, 0.95), 2e-9);
  EXPECT_EQ(CuckooFpr(12, 0), 0);
  EXPECT_EQ(CuckooFingerprintBits(12), 12);
  EXPECT_EQ(CuckooFingerprintBits(11.6), 12);
  EXPECT_EQ(CuckooFingerprintBits(5), 5);
  EXPECT_EQ(CuckooFingerprintBits(34), 32);
}

TEST(CuckooParamsTest, ParamsForSpecAndFpr) {
  FilterParams p;
  ASSERT_TRUE(ParamsForSpec(test::MustParse("cuckoo:12"), 1000000, &p).ok());
  EXPECT_EQ(p.kind, FilterKind::kCuckoo);
  EXPECT_EQ(p.fingerprint_bits, 12);
  EXPECT_NEAR(p.expected_fpr, 0.00185, 0.00002);
  EXPECT_NEAR(8.0 * p.filter_bytes / 1000000, 12.63, 0.01);

  for (double target : {0.05, 0.01, 0.002, 0.0001, 1e-6}) {
    ASSERT_TRUE(ParamsForFpr(FilterKind::kCuckoo, 1000000, target, &p).ok());
    EXPECT_EQ(p.kind, FilterKind::kCuckoo);
    EXPECT_LE(p.expected_fpr, target);
    // One fingerprint bit less would miss the target.
    EXPECT_GT(CuckooFpr(p.fingerprint_bits - 1, 0.95), target);
  }
  // Below ~0.5%, cuckoo needs fewer bits per key than blocked Bloom.
  for (double target : {0.004, 0.002, 0.0005, 0.0001}) {
    FilterParams c, b;
    ASSERT_TRUE(ParamsForFpr(FilterKind::kCuckoo, 1000000, target, &c).ok());
    ASSERT_TRUE(
        ParamsForFpr(FilterKind::kBlockedBloom, 1000000, target, &b).ok());
    EXPECT_LT(c.filter_bytes, b.filter_bytes) << target;
  }
  EXPECT_FALSE(ParamsForFpr(FilterKind::kCuckoo, 1000, 1e-12, &p).ok());
}

}  // namespace
}  // namespace sstfilter
