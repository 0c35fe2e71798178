// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind (kind 6): no false negatives at every size, the retries
// and every fallback of the construction, the FPR against the documented
// formula, golden bytes, and trailers a reader must refuse.

#include "policy/ribbon/ribbon.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "policy/format.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/params.h"
#include "tests/format_versions.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::AbsentKey;
using test::Hex;
using test::Key;

std::vector<uint64_t> Hashes(uint64_t n, uint64_t first = 0) {
  std::vector<uint64_t> h;
  h.reserve(n);
  for (uint64_t i = first; i < first + n; i++) h.push_back(Hash64(Key(i), 0));
  return h;
}

void ExpectAllMatch(const std::string& bytes, const std::vector<uint64_t>& h,
                    const std::string& what) {
  const FilterReader r = FilterReader::Open(bytes);
  ASSERT_TRUE(r.valid()) << what;
  for (uint64_t x : h) ASSERT_TRUE(r.MayMatchHash(x)) << what;
}

// The builder sorts its hashes in place by start block (and a retry with
// the next salt re-sorts them), so the bytes must not depend on the order
// the hashes arrive in: the pivot slots of the eliminated system are those
// of the rows' span, and free slots are 0, whatever the order. Checked
// against reversed and rotated orders, and a builder reused after a large
// filter (its scratch released) against a fresh one.
TEST(RibbonTest, BytesDoNotDependOnTheOrderOfTheHashes) {
  for (uint64_t n : {1000u, 4097u, 20000u, 100003u}) {
    const std::vector<uint64_t> h = Hashes(n, 7 * n);
    std::string want;
    internal::RibbonBuildStats stats;
    internal::AppendRibbonFilter(test::MustParse("ribbon:10"), h, &want, {},
                                 &stats);
    ASSERT_EQ(stats.kind, FilterKind::kRibbon) << n;
    std::vector<uint64_t> reversed(h.rbegin(), h.rend());
    std::vector<uint64_t> rotated(h.begin() + n / 3, h.end());
    rotated.insert(rotated.end(), h.begin(), h.begin() + n / 3);
    for (const auto* order : {&reversed, &rotated}) {
      std::string got;
      internal::AppendRibbonFilter(test::MustParse("ribbon:10"), *order, &got);
      EXPECT_EQ(got, want) << "n=" << n;
    }
  }
  std::unique_ptr<FilterBuilder> reused, fresh;
  ASSERT_TRUE(NewFilterBuilder(test::MustParse("ribbon:9"), &reused).ok());
  for (uint64_t n : {200000u, 300u, 70000u}) {
    ASSERT_TRUE(NewFilterBuilder(test::MustParse("ribbon:9"), &fresh).ok());
    for (uint64_t x : Hashes(n)) {
      reused->AddHash(x);
      fresh->AddHash(x);
    }
    std::string a, b;
    reused->Finish(&a);
    fresh->Finish(&b);
    EXPECT_EQ(a, b) << "n=" << n;
  }
}

TEST(RibbonTest, NoFalseNegativesAtEveryN) {
  // Every n from 0 to 5000 at 10 bits per key (dense to n = 64, banded or
  // Bloom above), and every 7th n at a fractional 7.3 bits per key.
  std::vector<uint64_t> all = Hashes(5000);
  for (uint64_t n = 0; n <= 5000; n++) {
    std::vector<uint64_t> h(all.begin(), all.begin() + n);
    for (double bits : {10.0, 7.3}) {
      if (bits != 10.0 && n % 7 != 0) continue;
      FilterSpec spec = test::MustParse("ribbon:10");
      spec.bits_per_key = bits;
      std::string bytes;
      internal::AppendRibbonFilter(spec, h, &bytes);
      ExpectAllMatch(bytes, h, "n=" + std::to_string(n));
      // Never more than the budget: floor(n b) bits of payload, rounded up
      // to a byte.
      const FilterReader r = FilterReader::Open(bytes);
      EXPECT_LE(r.payload_size() * 8.0, std::ceil(n * bits / 8) * 8)
          << "n=" << n;
    }
  }
}

TEST(RibbonTest, PlansRibbonFormsAtTheirSizes) {
  const FilterSpec spec = test::MustParse("ribbon:10");
  internal::RibbonBuildStats stats;
  std::string bytes;
  internal::AppendRibbonFilter(spec, Hashes(33), &bytes, {}, &stats);
  EXPECT_EQ(stats.kind, FilterKind::kRibbon);
  // Compact dense (seed 0): floor((n b - 8) / n) columns, the header byte
  // out of the budget.
  EXPECT_EQ(stats.columns, 9u);
  EXPECT_EQ(stats.slots, 35u);
  bytes.clear();
  internal::AppendRibbonFilter(test::MustParse("ribbon:10:seed=3"), Hashes(33),
                               &bytes, {}, &stats);
  EXPECT_EQ(stats.kind, FilterKind::kRibbon);
  EXPECT_EQ(stats.columns, 10u);  // dense, full trailer: floor(b) columns
  bytes.clear();
  internal::AppendRibbonFilter(spec, Hashes(100000), &bytes, {}, &stats);
  EXPECT_EQ(stats.kind, FilterKind::kRibbon);
  EXPECT_GT(stats.slots, 100000u);
}

TEST(RibbonTest, RetriesWithNewSaltsUntilSolvable) {
  // Square dense systems (n = 40 slots at 10.25 bits per key: 8 bits for
  // the compact form's header byte, 10 columns of 40 slots) are solvable
  // with probability ~0.29 per salt: across 20 key sets some need retries,
  // and every one is built as ribbon.
  int retried = 0;
  for (uint64_t set = 0; set < 20; set++) {
    const std::vector<uint64_t> h = Hashes(40, 1000 * set);
    internal::RibbonBuildStats stats;
    std::string bytes;
    internal::AppendRibbonFilter(test::MustParse("ribbon:10.25"), h, &bytes, {},
                                 &stats);
    EXPECT_EQ(stats.kind, FilterKind::kRibbon) << set;
    EXPECT_EQ(stats.slots, 40u);
    EXPECT_EQ(stats.columns, 10u);
    retried += stats.attempts > 1;
    ExpectAllMatch(bytes, h, "set " + std::to_string(set));
  }
  EXPECT_GT(retried, 0);
}

TEST(RibbonTest, GrowsTheSystemWhenSaltsRunOut) {
  // One salt per size: the key sets whose first system is unsolvable are
  // rebuilt with more blocks (fewer columns), still as ribbon.
  internal::RibbonBuildOptions options;
  options.salts_per_size = 1;
  options.growths = 8;
  int grown = 0;
  for (uint64_t set = 0; set < 30; set++) {
    const std::vector<uint64_t> h = Hashes(20000, 100000 * set);
    internal::RibbonBuildStats stats;
    std::string bytes;
    internal::AppendRibbonFilter(test::MustParse("ribbon:10"), h, &bytes,
                                 options, &stats);
    EXPECT_EQ(stats.kind, FilterKind::kRibbon) << set;
    grown += stats.attempts > 1;
    ExpectAllMatch(bytes, h, "set " + std::to_string(set));
    FilterParams p;
    ASSERT_TRUE(ParamsForSpec(test::MustParse("ribbon:10"), 20000, &p).ok());
    EXPECT_LE(bytes.size(), p.filter_bytes);  // fewer columns, never more
  }
  EXPECT_GT(grown, 0);
}

TEST(RibbonTest, FallsBackToBloomOfNoMoreBytes) {
  internal::RibbonBuildOptions none;
  none.salts_per_size = 0;
  none.dense_salts = 0;
  for (uint64_t n : {1, 20, 64, 65, 5000, 100000}) {
    const std::vector<uint64_t> h = Hashes(n);
    const FilterSpec spec = test::MustParse("ribbon:10");
    std::string ribbon, bloom;
    internal::AppendRibbonFilter(spec, h, &ribbon);
    internal::RibbonBuildStats stats;
    internal::AppendRibbonFilter(spec, h, &bloom, none, &stats);
    EXPECT_TRUE(stats.kind == FilterKind::kBloom ||
                stats.kind == FilterKind::kBlockedBloom)
        << n;
    EXPECT_EQ(FilterReader::Open(bloom).kind(), stats.kind);
    EXPECT_LE(FilterReader::Open(bloom).payload_size(),
              FilterReader::Open(ribbon).payload_size())
        << n;
    ExpectAllMatch(bloom, h, "n=" + std::to_string(n));
  }
  // Too few bits for one column per key: Bloom from the plan on.
  FilterSpec thin = test::MustParse("ribbon:2");
  internal::RibbonBuildStats stats;
  std::string bytes;
  internal::AppendRibbonFilter(thin, Hashes(100), &bytes, {}, &stats);
  ExpectAllMatch(bytes, Hashes(100), "ribbon:2");
}

TEST(RibbonTest, FalsePositiveRateMatchesFormula) {
  // Fixed keys: the measured rate is a fixed number; the bound is 4 sigma
  // of a binomial around the documented formula.
  for (const char* text : {"ribbon:10", "ribbon:7.3", "ribbon:16"}) {
    for (uint64_t n : {40, 3000, 100000}) {
      const FilterSpec spec = test::MustParse(text);
      const std::string bytes = test::BuildFilter(spec, n);
      const FilterReader r = FilterReader::Open(bytes);
      FilterParams p;
      ASSERT_TRUE(ParamsForSpec(spec, n, &p).ok());
      if (p.kind != FilterKind::kRibbon) continue;
      const int probes = 400000;
      int fp = 0;
      for (int i = 0; i < probes; i++) fp += r.MayMatch(AbsentKey(i));
      const double expected = p.expected_fpr * probes;
      const double sigma = std::sqrt(expected);
      EXPECT_NEAR(fp, expected, 4 * sigma + 3)
          << text << " n=" << n << " expected fpr " << p.expected_fpr;
    }
  }
}

TEST(RibbonTest, NoFalseNegativesAtTenMillion) {
  if (std::getenv("SSTFILTER_BIG_TESTS") == nullptr) {
    GTEST_SKIP() << "set SSTFILTER_BIG_TESTS=1";
  }
  const std::vector<uint64_t> h = Hashes(10000000);
  std::string bytes;
  internal::RibbonBuildStats stats;
  internal::AppendRibbonFilter(test::MustParse("ribbon:10"), h, &bytes, {},
                               &stats);
  EXPECT_EQ(stats.kind, FilterKind::kRibbon);
  ExpectAllMatch(bytes, h, "n=1e7");
}

// --- golden bytes ---

TEST(RibbonTest, GoldenDense) {
  const std::string bytes =
      test::Unchecked(test::BuildFilter(test::MustParse("ribbon:8.5"), 5));
  // floor(5 * 8.5) = 42 bits: r = 8 columns of m = 5 slots, 40 bits = 5
  // payload bytes; trailer: payload_size 5, flags 0, params form 0, salt 1
  // (salt 0 gave no solution), m 5, r 8, 0, 0, check, len 11, tag 0x16
  // (version 1, kind 6).
  ASSERT_EQ(bytes.size(), 5u + 11);
  EXPECT_EQ(Hex(bytes),
            "ab26d3f6e0"
            "05"
            "00"
            "000105080000"
            "30"
            "0b"
            "16");
}

TEST(RibbonTest, GoldenBanded) {
  const std::string bytes =
      test::Unchecked(test::BuildFilter(test::MustParse("ribbon:9.5"), 2000));
  // floor(2000 * 9.5) / 64 = 296 words over ceil(2100 / 64) + 1 = 34
  // blocks: r = 8, k = 24 blocks of 9 columns; trailer: payload_size 2368
  // (c0 12), flags 0, params form 1, salt 0, u32le 34 blocks, check, len 12,
  // tag 0x16.
  ASSERT_EQ(bytes.size(), 2368u + 12);
  EXPECT_EQ(Hex(bytes.substr(2368)),
            "c012"
            "00"
            "010022000000"
            "42"
            "0c"
            "16");
  // Block 0, columns 0 and 1: little-endian words, bit t = slot t.
  EXPECT_EQ(Hex(bytes.substr(0, 16)), "07814ade4984da253e96f866709e74c7");
  EXPECT_EQ(Hash64(bytes), 14857362010437237357ull);
}

// --- trailers a reader must refuse ---

std::string WithParams(const std::string& bytes, std::string params,
                       int64_t payload_delta = 0) {
  internal::Trailer t;
  const auto* d = reinterpret_cast<const uint8_t*>(bytes.data());
  EXPECT_TRUE(internal::ParseTrailer(d, bytes.size(), &t));
  std::string out = bytes.substr(0, t.payload_size);
  if (payload_delta > 0) out.append(payload_delta, '\0');
  if (payload_delta < 0) out.resize(out.size() + payload_delta);
  t.payload_size = out.size();
  t.params_size = params.size();
  std::copy(params.begin(), params.end(), t.params);
  internal::AppendTrailer(t, &out);
  return out;
}

TEST(RibbonTest, WellFormedButUnreadableMayMatch) {
  const std::string dense = test::BuildFilter(test::MustParse("ribbon:8.5"), 5);
  const std::string banded =
      test::BuildFilter(test::MustParse("ribbon:9.5"), 2000);
  ASSERT_TRUE(FilterReader::Open(dense).valid());
  ASSERT_TRUE(FilterReader::Open(banded).valid());
  ASSERT_EQ(FilterReader::Open(banded).kind(), FilterKind::kRibbon);
  const std::string d_ok("\x00\x00\x05\x08\x00\x00", 6);
  ASSERT_TRUE(FilterReader::Open(WithParams(dense, d_ok)).valid());
  struct Case {
    const std::string* base;
    std::string params;
    int64_t delta;
  } cases[] = {
      {&dense, std::string("\x02\x00\x05\x08\x00\x00", 6), 0},   // form 2
      {&dense, std::string("\x00\x00\x00\x08\x00\x00", 6), 0},   // m = 0
      {&dense, std::string("\x00\x00\x41\x08\x00\x00", 6), 0},   // m = 65
      {&dense, std::string("\x00\x00\x05\x00\x00\x00", 6), 0},   // r = 0
      {&dense, std::string("\x00\x00\x05\x21\x00\x00", 6), 0},   // r = 33
      {&dense, std::string("\x00\x00\x05\x08\x01\x00", 6), 0},   // reserved
      {&dense, std::string("\x00\x00\x05\x08\x00", 5), 0},       // short
      {&dense, d_ok, 1},                                         // size
      {&banded, std::string("\x01\x00\x01\x00\x00\x00", 6), 0},  // 1 block
      {&banded, std::string("\x01\x00\x22\x00\x00\x00", 6), 4},  // not words
      {&banded, std::string("\x01\x00\xff\xff\x00\x00", 6), 0},  // r = 0
      {&banded, std::string("\x01\x00\x01\x00\x00", 5), 0},      // short
  };
  for (const Case& c : cases) {
    const FilterReader r =
        FilterReader::Open(WithParams(*c.base, c.params, c.delta));
    EXPECT_FALSE(r.valid()) << Hex(c.params) << " " << c.delta;
    EXPECT_TRUE(r.MayMatch(AbsentKey(1)));
  }
  // Too many columns for the blocks: 34 blocks of 33 columns.
  const std::string wide = WithParams(
      banded, std::string("\x01\x00\x22\x00\x00\x00", 6), 34 * 33 * 8 - 2368);
  EXPECT_FALSE(FilterReader::Open(wide).valid());
}

}  // namespace
}  // namespace sstfilter
