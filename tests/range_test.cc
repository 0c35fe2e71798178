// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The range kind (sstfilter/range.h): spec, segment images, no false
// negatives for random and adversarial ranges, the measured FPR of empty
// ranges against the bound L / 2^(B-2), golden bytes, damaged bytes.

#include "sstfilter/range.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "policy/range/range_impl.h"
#include "sstfilter/filter.h"
#include "tests/format_versions.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::Hex;

RangeFilterSpec MustParseRange(std::string_view text) {
  RangeFilterSpec spec;
  Status s = ParseRangeFilterSpec(text, &spec);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return spec;
}

std::string BuildImages(const RangeFilterSpec& spec,
                        const std::vector<uint64_t>& images) {
  RangeFilterBuilder b(spec);
  for (uint64_t x : images) b.AddImage(x);
  std::string out;
  b.Finish(&out);
  return out;
}

// `filter` (written now, with the checked full trailer of format version
// 4) with its trailer in the unchecked form of earlier versions: both read
// valid and answer alike for 2000 ranges.
std::string Unchecked(const std::string& filter) {
  const std::string old = test::UncheckedBytes(filter);
  const RangeFilterReader now = RangeFilterReader::Open(filter);
  const RangeFilterReader before = RangeFilterReader::Open(old);
  EXPECT_TRUE(now.valid());
  EXPECT_TRUE(before.valid());
  std::mt19937_64 rng(1);
  for (int i = 0; i < 2000; i++) {
    const uint64_t lo = rng() % (before.universe() * 4 + 1);
    const uint64_t hi = lo + rng() % 8;
    EXPECT_EQ(now.MayContain(lo, hi), before.MayContain(lo, hi)) << lo;
  }
  return old;
}

// Whether a sorted `keys` holds a value in [lo, hi].
bool Holds(const std::vector<uint64_t>& keys, uint64_t lo, uint64_t hi) {
  auto it = std::lower_bound(keys.begin(), keys.end(), lo);
  return it != keys.end() && *it <= hi;
}

std::vector<uint64_t> RandomImages(size_t n, uint64_t seed, uint64_t mask) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> v(n);
  for (uint64_t& x : v) x = rng() & mask;
  std::sort(v.begin(), v.end());
  return v;
}

TEST(RangeSpecTest, ParsesAndRoundTrips) {
  const RangeFilterSpec s =
      MustParseRange("sstfilter.range:16:offset=4:len=6:max_range=256:seed=9");
  EXPECT_EQ(s.bits_per_key, 16);
  EXPECT_EQ(s.offset, 4u);
  EXPECT_EQ(s.len, 6u);
  EXPECT_EQ(s.max_range, 256u);
  EXPECT_EQ(s.seed, 9u);
  EXPECT_EQ(s.ToString(), "range:16:offset=4:len=6:max_range=256:seed=9");
  EXPECT_EQ(MustParseRange(s.ToString()), s);
  EXPECT_EQ(MustParseRange("range:14").ToString(), "range:14");
  EXPECT_EQ(MustParseRange("range:9.5:len=8").ToString(), "range:9.5");
}

TEST(RangeSpecTest, RejectsBadSpecsNamingTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"bloom:10", "expected range:"},
      {"range:", "not a decimal number"},
      {"range:x", "not a decimal number"},
      {"range:3", "within [4, 32]"},
      {"range:33", "within [4, 32]"},
      {"range:14:len=0", "len must be within [1, 8]"},
      {"range:14:len=9", "len must be within [1, 8]"},
      {"range:14:offset=65536", "offset must be at most 65535"},
      {"range:14:max_range=0", "max_range"},
      {"range:14:len=4:len=4", "given twice"},
      {"range:14:salt", "needs a value"},
      {"range:14:foo=1", "unknown option"},
      {"range:14:seed=-1", "not an unsigned integer"},
  };
  for (const auto& [text, why] : cases) {
    RangeFilterSpec spec;
    spec.seed = 77;
    Status s = ParseRangeFilterSpec(text, &spec);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_NE(s.message().find(why), std::string::npos)
        << text << ": " << s.message();
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
    EXPECT_EQ(spec.seed, 77u) << "unchanged on error";
  }
}

// Every error names the spec once: "range filter spec \"X\": why", with
// neither the prefix nor the spec repeated, whichever check refuses it.
TEST(RangeSpecTest, EveryErrorNamesTheSpecOnce) {
  const char* const bad[] = {
      "",
      "range",
      "range:",
      "range:x",
      "range:1e3",
      "range:nan",
      "range:-4",
      "range:3",
      "range:33",
      "range:3.99",
      "range:32.01",
      "range:14:",
      "range:14::",
      "range:14:len",
      "range:14:len=",
      "range:14:len=0",
      "range:14:len=9",
      "range:14:len=x",
      "range:14:len=-1",
      "range:14:offset=65536",
      "range:14:offset=1e3",
      "range:14:offset=",
      "range:14:max_range=0",
      "range:14:max_range=4611686018427387905",
      "range:14:max_range=x",
      "range:14:seed=",
      "range:14:seed=-1",
      "range:14:seed=18446744073709551616",
      "range:14:len=4:len=4",
      "range:14:seed=1:seed=1",
      "range:14:salt",
      "range:14:keyed",
      "range:14:foo=1",
      "range:14:len=4:bar",
      "sstfilter.range:3",
      "sstfilter.range:14:len=0",
      "sstfilter.range:14:foo=1",
      "sstfilter.bloom:10",
      "bloom:10",
      "range:14:offset=70000:len=0",
      "range:40:len=9",
      "range:14:max_range=0:seed=x",
      "range:4:len=8:offset=65536",
      "ribbon:10:len=4",
  };
  for (const char* text : bad) {
    RangeFilterSpec spec;
    const Status s = ParseRangeFilterSpec(text, &spec);
    ASSERT_FALSE(s.ok()) << text;
    const std::string& m = s.message();
    const std::string prefix =
        std::string("range filter spec \"") + text + "\": ";
    EXPECT_EQ(m.rfind(prefix, 0), 0u) << m;
    EXPECT_EQ(m.find("range filter spec", 1), std::string::npos) << m;
    EXPECT_GT(m.size(), prefix.size()) << "says why: " << m;
  }
}

TEST(RangeSpecTest, RangeIsAKindButNotAPointSpec) {
  EXPECT_STREQ(FilterKindName(FilterKind::kRange), "range");
  FilterSpec spec;
  EXPECT_FALSE(ParseFilterSpec("range:14", &spec).ok());
}

TEST(KeySegmentImageTest, BigEndianZeroPadded) {
  EXPECT_EQ(KeySegmentImage("", 0, 8), 0u);
  EXPECT_EQ(KeySegmentImage("\x01", 0, 8), uint64_t{1} << 56);
  EXPECT_EQ(KeySegmentImage("\x01\x02", 0, 2), 0x0102u);
  EXPECT_EQ(KeySegmentImage("\x01", 0, 2), 0x0100u);
  EXPECT_EQ(KeySegmentImage("ab\x01\x02\x03", 2, 2), 0x0102u);
  EXPECT_EQ(KeySegmentImage("ab", 2, 4), 0u);  // shorter than the offset
  EXPECT_EQ(KeySegmentImage("\xff\xff\xff\xff\xff\xff\xff\xff\xff", 0, 8),
            ~uint64_t{0});
}

TEST(KeySegmentImageTest, NeverDecreasesInBytewiseOrder) {
  std::mt19937_64 rng(5);
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; i++) {
    std::string k(rng() % 12, '\0');
    for (char& c : k) c = static_cast<char>(rng() % 4 == 0 ? 0 : rng());
    keys.push_back("p" + k);  // one shared first byte, for offset 1
  }
  std::sort(keys.begin(), keys.end());
  for (uint32_t offset : {0u, 1u}) {
    for (uint32_t len : {1u, 3u, 8u}) {
      for (size_t i = 1; i < keys.size(); i++) {
        ASSERT_LE(KeySegmentImage(keys[i - 1], offset, len),
                  KeySegmentImage(keys[i], offset, len))
            << offset << " " << len << " " << i;
      }
    }
  }
}

// No false negatives: every range holding a key answers true, for random
// and adversarial ranges, at several sizes.
TEST(RangeFilterTest, NoFalseNegatives) {
  std::mt19937_64 rng(11);
  for (const char* text : {"range:4", "range:10:max_range=1",
                           "range:14:max_range=16", "range:18:max_range=256",
                           "range:8:max_range=4096:seed=3", "range:32:len=8"}) {
    for (size_t n : {1, 2, 37, 3000}) {
      // Dense keys (small mask) make neighbours share blocks.
      for (uint64_t mask : {uint64_t{0xffff}, ~uint64_t{0}}) {
        const auto keys = RandomImages(n, n * 31 + mask, mask);
        const std::string bytes = BuildImages(MustParseRange(text), keys);
        const RangeFilterReader r = RangeFilterReader::Open(bytes);
        ASSERT_TRUE(r.valid()) << text;
        for (uint64_t k : keys) {
          // lo == hi on a key, ranges ending and starting at a key, ranges
          // crossing the key's block boundaries, the whole space.
          ASSERT_TRUE(r.MayContain(k, k)) << text;
          for (uint64_t d : {1ull, 15ull, 16ull, 255ull, 4096ull, 1ull << 20}) {
            ASSERT_TRUE(r.MayContain(k >= d ? k - d : 0, k)) << text << d;
            ASSERT_TRUE(r.MayContain(k, k + d < k ? ~0ull : k + d)) << text;
          }
        }
        ASSERT_TRUE(r.MayContain(0, ~uint64_t{0}));
        for (int q = 0; q < 20000; q++) {
          const uint64_t lo = rng() & mask;
          const uint64_t len = uint64_t{1} << (rng() % 14);
          const uint64_t hi = lo + std::min(len - 1, ~uint64_t{0} - lo);
          if (Holds(keys, lo, hi)) {
            ASSERT_TRUE(r.MayContain(lo, hi)) << text;
          }
        }
      }
    }
  }
}

// The reader answers exactly "a stored hash lies in a piece's window":
// checked against the set of hashes, computed here from the images.
TEST(RangeFilterTest, AnswersExactlyFromTheHashes) {
  std::mt19937_64 rng(21);
  for (const char* text : {"range:6:max_range=4", "range:10:max_range=16",
                           "range:14:max_range=1:seed=5"}) {
    for (size_t n : {1, 50, 5000}) {
      const auto keys = RandomImages(n, n + 1, 0xfffff);
      const std::string bytes = BuildImages(MustParseRange(text), keys);
      const RangeFilterReader r = RangeFilterReader::Open(bytes);
      const uint64_t u = r.universe();
      const int s = r.block_shift();
      std::vector<uint64_t> hashes;
      for (uint64_t k : keys) {
        hashes.push_back(internal::RangeHash(k, s, r.seed(), u));
      }
      std::sort(hashes.begin(), hashes.end());
      auto window = [&](uint64_t x, uint64_t len) {
        for (uint64_t i = 0; i < len; i++) {
          if (std::binary_search(hashes.begin(), hashes.end(), (x + i) % u)) {
            return true;
          }
        }
        return false;
      };
      for (int q = 0; q < 3000; q++) {
        const uint64_t lo = rng() & 0xfffff;
        const uint64_t hi = lo + (rng() % (uint64_t{4} << s));
        bool expect = false;
        for (uint64_t b = lo >> s; b <= hi >> s; b++) {
          const uint64_t a = std::max(lo, b << s);
          const uint64_t c = std::min(hi, (b << s) + (uint64_t{1} << s) - 1);
          expect |= window(internal::RangeHash(a, s, r.seed(), u), c - a + 1);
        }
        ASSERT_EQ(r.MayContain(lo, hi), expect)
            << text << " " << lo << " " << hi;
      }
    }
  }
}

TEST(RangeFilterTest, ZeroKeysContainNothing) {
  const std::string bytes = BuildImages(MustParseRange("range:14"), {});
  const RangeFilterReader r = RangeFilterReader::Open(bytes);
  ASSERT_TRUE(r.valid());
  EXPECT_EQ(r.num_entries(), 0u);
  EXPECT_FALSE(r.MayContain(0, ~uint64_t{0}));
  EXPECT_FALSE(r.MayContainKeys("", kNoUpperBound));
}

TEST(RangeFilterTest, EmptyIntervalHoldsNothing) {
  const std::string bytes = BuildImages(MustParseRange("range:14"), {5});
  const RangeFilterReader r = RangeFilterReader::Open(bytes);
  EXPECT_FALSE(r.MayContain(6, 5));
  EXPECT_TRUE(r.MayContain(5, 5));
}

// Keys: empty, shorter than the segment, longer; [lower, upper) bounds.
TEST(RangeFilterTest, KeysShortEmptyAndBounds) {
  const std::vector<std::string> keys = {
      "", "a", "ab", "b\x01", "cat", "dogs and cats", "z"};
  RangeFilterBuilder b(MustParseRange("range:16:len=4"));
  for (const auto& k : keys) b.AddKey(k);
  std::string bytes;
  b.Finish(&bytes);
  const RangeFilterReader r = RangeFilterReader::Open(bytes);
  ASSERT_TRUE(r.valid());
  EXPECT_EQ(r.len(), 4u);
  // Each key's smallest range [k, k + "\0"), and wider ones.
  for (const auto& k : keys) {
    EXPECT_TRUE(r.MayContainKeys(k, k + std::string(1, '\0'))) << k;
    EXPECT_TRUE(r.MayContainKeys(k, k + "\xff")) << k;
    EXPECT_TRUE(r.MayContainKeys(k, kNoUpperBound)) << k;
    EXPECT_TRUE(r.MayContainKeys("", std::string(k) + "\x01")) << k;
  }
  EXPECT_TRUE(r.MayContainKeys("", kNoUpperBound));  // the whole key space
  EXPECT_TRUE(r.MayContainKeys("dog", "doh"));       // holds "dogs and cats"
  // "b" is outside [a\x01, b): "b\x01" > "b"; upper "b" ends inside the
  // segment on a non-zero byte, so its own image is excluded.
  EXPECT_TRUE(r.MayContainKeys("b", "b\x02"));
  EXPECT_TRUE(r.MayContainKeys("a", "b"));
  // lower >= upper: true (the scan is empty anyway; never skip on misuse).
  EXPECT_TRUE(r.MayContainKeys("q", "q"));
  // A mostly empty space: at 16 bits per key, these empty ranges say no
  // with high probability; count them (a fixed filter, so no flake).
  int empty_says_no = 0;
  // Each range spans 4 images: [c x a \x01, c x a \x05).
  for (char c = 'e'; c < 'y'; c++) {
    const std::string lo = std::string(1, c) + "xa";
    if (!r.MayContainKeys(lo + "\x01", lo + "\x05")) empty_says_no++;
  }
  EXPECT_GE(empty_says_no, 18);
}

// An exhaustive check of MayContainKeys against the keys it was built
// from, for short keys over a tiny alphabet (every bound combination).
TEST(RangeFilterTest, KeyBoundsExhaustive) {
  std::vector<std::string> all;
  for (int len = 0; len <= 3; len++) {
    const int count = 1 << (2 * len);
    for (int i = 0; i < count; i++) {
      std::string k;
      for (int j = 0; j < len; j++) {
        k += "\x00\x01\x61\xff"[(i >> (2 * j)) & 3];
      }
      all.push_back(k);
    }
  }
  std::sort(all.begin(), all.end());
  for (const char* text : {"range:6:len=2", "range:12:len=1:max_range=1",
                           "range:10:offset=1:len=2"}) {
    std::mt19937_64 rng(3);
    std::vector<std::string> keys;
    for (const auto& k : all) {
      if (rng() % 5 == 0) keys.push_back(k);
    }
    RangeFilterBuilder b(MustParseRange(text));
    for (const auto& k : keys) b.AddKey(k);
    std::string bytes;
    b.Finish(&bytes);
    const RangeFilterReader r = RangeFilterReader::Open(bytes);
    for (const auto& lo : all) {
      for (const auto& hi : all) {
        auto it = std::lower_bound(keys.begin(), keys.end(), lo);
        if (it != keys.end() && *it < hi) {
          ASSERT_TRUE(r.MayContainKeys(lo, hi))
              << text << " " << Hex(lo) << " " << Hex(hi);
        }
      }
      if (std::lower_bound(keys.begin(), keys.end(), lo) != keys.end()) {
        ASSERT_TRUE(r.MayContainKeys(lo, kNoUpperBound));
      }
    }
  }
}

// The FPR a filter of these keys must give to empty ranges of L images
// starting anywhere: a range splits at its block boundary (block size L)
// into pieces of L - o and o images, o = lo mod L uniform, whose windows
// start at independent uniform points of the universe (their blocks hold
// no key). A window of a images misses every stored hash for the
// sum over gaps g between circularly consecutive hashes of max(0, g - a)
// of its r starting points.
double ExpectedRangeFpr(const RangeFilterReader& r,
                        const std::vector<uint64_t>& keys, uint64_t L) {
  const uint64_t u = r.universe();
  std::vector<uint64_t> h;
  for (uint64_t k : keys) {
    h.push_back(internal::RangeHash(k, r.block_shift(), r.seed(), u));
  }
  std::sort(h.begin(), h.end());
  h.erase(std::unique(h.begin(), h.end()), h.end());
  std::vector<uint64_t> gaps;  // free positions between consecutive hashes
  for (size_t i = 0; i < h.size(); i++) {
    gaps.push_back(i + 1 < h.size() ? h[i + 1] - h[i] - 1
                                    : h[0] + u - h[i] - 1);
  }
  auto miss = [&](uint64_t a) {  // P(a window of a images misses)
    if (a == 0) return 1.0;
    double free_starts = 0;
    for (uint64_t g : gaps) free_starts += g >= a ? g - a + 1 : 0;
    return free_starts / static_cast<double>(u);
  };
  std::vector<double> m(L + 1);
  for (uint64_t a = 0; a <= L; a++) m[a] = miss(a);
  double p_miss = 0;
  for (uint64_t o = 0; o < L; o++) p_miss += m[L - o] * m[o];
  return 1 - p_miss / static_cast<double>(L);
}

// Measured FPR of empty ranges of L images at B bits per key: within 3
// sigma of what the filter's hashes give (ExpectedRangeFpr), and within
// Grafite's bound L / 2^(B-2) (the expectation is 1 - e^-bound). Fixed
// keys and queries, so the figures are the same on every run.
TEST(RangeFilterTest, EmptyRangeFprAsExpected) {
  const size_t n = 20000;
  const auto keys = RandomImages(n, 1, ~uint64_t{0});
  for (double bits : {10.0, 14.0, 18.0}) {
    for (uint64_t L : {uint64_t{1}, uint64_t{16}, uint64_t{256}}) {
      RangeFilterSpec spec;
      spec.bits_per_key = bits;
      spec.max_range = L;
      const std::string bytes = BuildImages(spec, keys);
      const RangeFilterReader r = RangeFilterReader::Open(bytes);
      const double bound = RangeFprBound(bits, L);
      const double expected = ExpectedRangeFpr(r, keys, L);
      // Enough empty queries for ~400 false positives.
      const uint64_t queries = std::clamp<uint64_t>(
          static_cast<uint64_t>(400 / expected), 200000, 4000000);
      std::mt19937_64 rng(static_cast<uint64_t>(bits) * 1000 + L);
      uint64_t empty = 0, fp = 0;
      while (empty < queries) {
        const uint64_t lo = rng() >> 1;
        if (Holds(keys, lo, lo + L - 1)) continue;
        empty++;
        fp += r.MayContain(lo, lo + L - 1);
      }
      const double q = static_cast<double>(empty);
      const double sigma = std::sqrt(q * expected * (1 - expected));
      std::printf(
          "B=%g L=%llu: %llu of %llu false positives, expected %.1f "
          "(sigma %.1f); FPR %.6f, bound %.6f, %.2f bits/key\n",
          bits, static_cast<unsigned long long>(L),
          static_cast<unsigned long long>(fp),
          static_cast<unsigned long long>(empty), q * expected, sigma, fp / q,
          bound, bytes.size() * 8.0 / n);
      EXPECT_NEAR(static_cast<double>(fp), q * expected, 3 * sigma)
          << bits << " " << L;
      EXPECT_LE(expected, bound) << bits << " " << L;
      EXPECT_NEAR(expected, 1 - std::exp(-bound), 0.05 * bound)
          << bits << " " << L;
      EXPECT_LE(bytes.size() * 8.0 / n, bits + 0.1);
    }
  }
}

TEST(RangeFilterTest, SizeAndBoundAsWritten) {
  uint64_t collided = 0;
  for (const char* text :
       {"range:4", "range:9.5", "range:14:seed=3", "range:32:len=2"}) {
    for (size_t n : {0, 1, 2, 100, 1000, 77777}) {
      const RangeFilterSpec spec = MustParseRange(text);
      const auto images = RandomImages(n, n, ~0ull);
      const std::string bytes = BuildImages(spec, images);
      const RangeFilterReader r = RangeFilterReader::Open(bytes);
      ASSERT_TRUE(r.valid());
      // Random 64-bit images are distinct, but two of their hashes may
      // collide (range:4 hashes 77,777 images into 4 x 77,777 values), and
      // the filter keeps one of each: its size is that of the distinct
      // hashes in the universe planned for n images.
      std::vector<uint64_t> h;
      for (uint64_t x : images) {
        h.push_back(
            internal::RangeHash(x, r.block_shift(), r.seed(), r.universe()));
      }
      std::sort(h.begin(), h.end());
      h.erase(std::unique(h.begin(), h.end()), h.end());
      const uint64_t m = h.size();
      EXPECT_EQ(r.num_entries(), m) << text << " " << n;
      // Collisions shrink the payload only: same universe and low bits.
      const int low_bits =
          internal::FloorLog2(r.universe() / std::max<uint64_t>(n, 1));
      const size_t payload_n =
          internal::MakeRangeLayout(n, r.universe(), low_bits).PayloadSize();
      const size_t payload_m =
          internal::MakeRangeLayout(m, r.universe(), low_bits).PayloadSize();
      internal::Trailer t;
      ASSERT_TRUE(internal::ParseTrailer(
          reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t));
      EXPECT_EQ(t.payload_size, payload_m) << text << " " << n;
      // The trailer differs only in its payload size, a varint.
      auto varint_size = [](uint64_t v) {
        size_t k = 1;
        while (v >= 128) v >>= 7, k++;
        return k;
      };
      EXPECT_EQ(bytes.size(), RangeFilterSize(spec, n) - payload_n -
                                  varint_size(payload_n) + payload_m +
                                  varint_size(payload_m))
          << text << " " << n << ": " << n - m << " collisions";
      collided += n - m;
    }
  }
  EXPECT_GT(collided, 0u);  // the collision case was exercised
  EXPECT_EQ(RangeFprBound(14, 16), 16.0 / 4096);
  EXPECT_EQ(RangeFprBound(10, 256), 1.0);
}

TEST(RangeFilterTest, SpanOfBlocksAnswered) {
  // Block size 16: a range over 16 blocks is answered, over 17 reads true.
  const std::string bytes =
      BuildImages(MustParseRange("range:20:max_range=16"), {1 << 20});
  const RangeFilterReader r = RangeFilterReader::Open(bytes);
  ASSERT_EQ(r.block_shift(), 4);
  int answered_no = 0;
  for (uint64_t lo = 0; lo < 64 * 16; lo += 16) {
    answered_no += !r.MayContain(lo, lo + 16 * 16 - 1);
    EXPECT_TRUE(r.MayContain(lo, lo + 17 * 16 - 1));
  }
  EXPECT_GE(answered_no, 60);
}

// The FPR bound holds for ranges of up to 15 * max_range + 1 images (at
// most 16 blocks wherever they start); a range of 16 blocks' length spans
// 17 unless it starts on a block, and reads "may contain": the bound does
// not hold there (sstfilter/range.h, docs/FORMAT.md).
TEST(RangeFilterTest, FprBoundHoldsUpToFifteenMaxRangePlusOne) {
  const RangeFilterSpec spec = MustParseRange("range:18:max_range=16");
  const auto keys = RandomImages(20000, 5, ~0ull);
  const std::string bytes = BuildImages(spec, keys);
  const RangeFilterReader r = RangeFilterReader::Open(bytes);
  ASSERT_EQ(r.block_shift(), 4);
  std::mt19937_64 rng(6);
  for (const uint64_t L : {uint64_t{241}, uint64_t{256}, uint64_t{4096}}) {
    uint64_t empty = 0, fp = 0;
    while (empty < 100000) {
      const uint64_t lo = rng() >> 1;
      if (Holds(keys, lo, lo + L - 1)) continue;
      empty++;
      fp += r.MayContain(lo, lo + L - 1);
    }
    const double fpr = static_cast<double>(fp) / empty;
    const double bound = RangeFprBound(18, L);
    std::printf("max_range=16 L=%llu: FPR %.4f, bound %.4f (%.1fx)\n",
                static_cast<unsigned long long>(L), fpr, bound, fpr / bound);
    if (L == 241) {
      // 15 * 16 + 1: within the bound 0.0037 (expected ~368 of 100,000
      // queries; 3 sigma ~57, 16%).
      EXPECT_LE(fpr, bound * 1.2);
      EXPECT_GE(fpr, bound / 2);
    } else {
      // 15 in 16 starts span 17 blocks (L = 256), every start does (L =
      // 4096): "may contain" for all of those.
      EXPECT_GE(fpr, L == 256 ? 0.93 : 1.0);
    }
  }
}

TEST(RangeFilterTest, GoldenBytes) {
  // Pinned in the unchecked full trailer (tag 0x17); writers now write
  // the checked one (GoldenCheckedTrailer).
  const std::string bytes = Unchecked(
      BuildImages(MustParseRange("range:6:max_range=4"), {3, 1000, 1001}));
  // Universe 3 * 2^4 = 48, low_bits 4, block_shift 2: 3 buckets;
  // low word, upper word, one sample; then payload_size 20, flags 0,
  // params (len 8, offset 0, shift 2, low_bits 4, r 48, count 3), check,
  // len 22, tag 0x17 (unchecked, kind 7).
  EXPECT_EQ(Hex(bytes),
            "2108000000000000"
            "1600000000000000"
            "00000000"
            "14"
            "00"
            "08"
            "0000"
            "02"
            "04"
            "3000000000000000"
            "03000000"
            "44"
            "16"
            "17");
}

// The trailer writers use (format version 4): the checked full trailer,
// whose u32le check covers the payload and the body.
TEST(RangeFilterTest, GoldenCheckedTrailer) {
  const std::string bytes =
      BuildImages(MustParseRange("range:6:max_range=4"), {3, 1000, 1001});
  ASSERT_EQ(bytes.size(), 20u + 25);
  const std::string old = Unchecked(bytes);
  // The same payload and body; check32, len 25, tag 0x27 (checked).
  EXPECT_EQ(bytes.substr(0, 20 + 19), old.substr(0, 20 + 19));
  EXPECT_EQ(Hex(bytes.substr(20 + 19)),
            "d4164bff"
            "19"
            "27");
}

// Every one-bit flip of a filter is caught by the check: the reader may
// contain every range; so does the one-range query, which reads the check
// only when it would answer "empty".
TEST(RangeFilterTest, EveryFlippedBitMayContainEverything) {
  // 200 random 8-byte keys (the whole key is the segment).
  std::mt19937_64 rng(7);
  auto random_key = [&rng] {
    std::string k(8, '\0');
    for (char& c : k) c = static_cast<char>(rng());
    return k;
  };
  RangeFilterBuilder b(MustParseRange("range:10"));
  for (int i = 0; i < 200; i++) b.AddKey(random_key());
  std::string bytes;
  b.Finish(&bytes);
  ASSERT_TRUE(RangeFilterReader::Open(bytes).valid());
  // A one-key range [k, k + "\x01") the intact filter answers "empty" for
  // (a false positive has probability ~2^-8).
  std::string lower, upper;
  for (int tries = 0; tries < 20 && upper.empty(); tries++) {
    lower = random_key();
    if (!RangeFilterReader::Open(bytes).MayContainKeys(lower, lower + "\x01")) {
      upper = lower + "\x01";
    }
  }
  ASSERT_FALSE(upper.empty());
  ASSERT_FALSE(RangeFilterReader::MayContainKeysOnce(bytes, lower, upper));
  for (size_t bit = 0; bit < 8 * bytes.size(); bit++) {
    std::string bad = bytes;
    bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
    const RangeFilterReader r = RangeFilterReader::Open(bad);
    ASSERT_FALSE(r.valid()) << bit;
    ASSERT_TRUE(r.MayContainKeys(lower, upper)) << bit;
    ASSERT_TRUE(RangeFilterReader::MayContainKeysOnce(bad, lower, upper))
        << bit;
  }
}

TEST(RangeFilterTest, DamagedBytesMayContainEverything) {
  const auto keys = RandomImages(500, 9, ~uint64_t{0});
  const std::string bytes = BuildImages(MustParseRange("range:12"), keys);
  ASSERT_TRUE(RangeFilterReader::Open(bytes).valid());
  // Every truncation reads as "may contain" (or, by the check byte's
  // chance, a filter; then it must not crash).
  for (size_t cut = 0; cut < bytes.size(); cut++) {
    const RangeFilterReader r =
        RangeFilterReader::Open(std::string_view(bytes).substr(0, cut));
    EXPECT_FALSE(r.valid()) << cut;
    EXPECT_TRUE(r.MayContain(1, 1));
  }
  // Flipped bits anywhere: never a crash or an out-of-bounds read (the
  // sanitized run proves it). The full trailer's check catches every
  // one-bit flip, so the filter is refused and every range, one holding a
  // key or not, "may contain"; the one-range query, which reads the
  // damaged bytes before the check, loses no key either.
  auto key_of = [](uint64_t image) {
    std::string k(8, '\0');
    for (int i = 0; i < 8; i++) k[i] = static_cast<char>(image >> (56 - 8 * i));
    return k;
  };
  std::mt19937_64 rng(4);
  for (int i = 0; i < 3000; i++) {
    std::string bad = bytes;
    const size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ (1 << (rng() % 8)));
    const RangeFilterReader r = RangeFilterReader::Open(bad);
    ASSERT_FALSE(r.valid()) << "flip at byte " << at << " not caught";
    for (int q = 0; q < 20; q++) {
      const uint64_t lo = rng();
      ASSERT_TRUE(r.MayContain(lo, lo + (rng() % 5000)));
      // A range around a key: [key - d, key + 1).
      const uint64_t k = keys[rng() % keys.size()];
      const uint64_t d = std::min<uint64_t>(k, rng() % 5000);
      ASSERT_TRUE(RangeFilterReader::MayContainKeysOnce(bad, key_of(k - d),
                                                        key_of(k) + '\0'))
          << "flip at byte " << at << " lost key " << k;
    }
  }
  // Garbage of every small size.
  for (size_t size = 0; size < 200; size++) {
    std::string junk(size, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    (void)RangeFilterReader::Open(junk).MayContain(0, 100);
  }
}

TEST(RangeFilterTest, PointAndRangeReadersRefuseEachOther) {
  const std::string range =
      BuildImages(MustParseRange("range:12"), RandomImages(100, 2, ~0ull));
  const FilterReader point = FilterReader::Open(range);
  EXPECT_FALSE(point.valid());
  EXPECT_TRUE(point.MayMatch("anything"));
  const std::string bloom = test::BuildFilter(test::MustParse("bloom:10"), 100);
  EXPECT_FALSE(RangeFilterReader::Open(bloom).valid());
}

}  // namespace
}  // namespace sstfilter
