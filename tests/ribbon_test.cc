// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind (kind 6): no false negatives at every size, the retries
// and every fallback of the construction, the FPR against the documented
// formula, golden bytes, and trailers a reader must refuse.

#include "policy/ribbon/ribbon.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "policy/format.h"
#include "policy/ribbon/ribbon_impl.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/params.h"
#include "tests/format_versions.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::AbsentKey;
using test::FromHex;
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
// the next salt re-sorts them), and the dense form reduces four rows at
// once, so the bytes must not depend on the order the hashes arrive in:
// the pivot slots of the eliminated system are those of the rows' span,
// and free slots are 0, whatever the order. Checked against reversed and
// rotated orders at dense sizes (up to 64 slots; most need several salts)
// and larger ones, and a builder reused after a large filter (its scratch
// released) against a fresh one.
TEST(RibbonTest, BytesDoNotDependOnTheOrderOfTheHashes) {
  for (uint64_t n :
       {2u, 3u, 5u, 17u, 33u, 36u, 63u, 64u, 1000u, 4097u, 20000u, 100003u}) {
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

// The segmented and dense forms' solvers run as compiled for CPUs with
// POPCNT and BMI2 where the CPU has them (primitives.h), else as the
// portable build: both must write the same bytes, including a segment that
// needs a third salt (ribbon:9.5 at 40000 keys: GoldenSegmentedTwoSegments'
// filter) and dense systems whose rows pack their fingerprints (ribbon:7.1
// at 36 keys) or keep them apart (ribbon:15 at 64 keys).
TEST(RibbonTest, PortableAndBmi2SolversWriteTheSameBytes) {
  if (!internal::CpuHasBmi2()) GTEST_SKIP() << "this CPU runs only one";
  for (const char* spec : {"ribbon:7.1", "ribbon:9.5", "ribbon:15"}) {
    for (uint64_t n : {2u, 17u, 36u, 64u, 65u, 1000u, 4097u, 40000u}) {
      const std::vector<uint64_t> h = Hashes(n);
      std::string bmi2, portable;
      internal::AppendRibbonFilter(test::MustParse(spec), h, &bmi2);
      internal::PortableOnlyForTest().store(true);
      internal::AppendRibbonFilter(test::MustParse(spec), h, &portable);
      internal::PortableOnlyForTest().store(false);
      EXPECT_EQ(Hex(portable), Hex(bmi2)) << spec << " n=" << n;
    }
  }
}

// With AVX2, dense systems of 16 keys or more are solved a column at a time
// (ribbon_dense.cc), else a row at a time: the same bytes at every n, with
// fingerprints packed beside the slots (ribbon:2 to 9.5) or apart (15 and
// 31 bits: m + r > 64 from ~50 and ~33 keys), and with a repeated key.
TEST(RibbonTest, DenseSolversWriteTheSameBytesAtEveryN) {
  if (!internal::CpuHasAvx2()) GTEST_SKIP() << "this CPU runs only one";
  const std::vector<uint64_t> all = Hashes(3 * 64);
  for (const char* spec :
       {"ribbon:2", "ribbon:7.1", "ribbon:9.5", "ribbon:15", "ribbon:31"}) {
    for (uint64_t n = 0; n <= 64; n++) {
      for (uint64_t set = 0; set < 3; set++) {
        std::vector<uint64_t> h(all.begin() + 64 * set,
                                all.begin() + 64 * set + n);
        if (set == 2 && n >= 2) h[n - 1] = h[0];
        std::string fast, portable;
        internal::AppendRibbonFilter(test::MustParse(spec), h, &fast);
        internal::PortableOnlyForTest().store(true);
        internal::AppendRibbonFilter(test::MustParse(spec), h, &portable);
        internal::PortableOnlyForTest().store(false);
        ASSERT_EQ(Hex(portable), Hex(fast))
            << spec << " n=" << n << " set " << set;
      }
    }
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
      // to a byte, and a checked full ribbon trailer (14 bytes; 15 from 128
      // payload bytes on). A compact or Bloom filter written in its place
      // may take some of the trailer's bytes as payload, never more. Unless
      // the budget's filter misses the spec's FPR ceiling: then the plan
      // reaches it.
      const double payload = std::ceil(n * bits / 8);
      if (bytes.size() > payload + (payload < 128 ? 14 : 15)) {
        const double ceiling = internal::RibbonFprCeiling(spec);
        EXPECT_GT(
            internal::PlanRibbon(spec, n, true, 1.0).plan.params.expected_fpr,
            ceiling)
            << "n=" << n;
        EXPECT_LE(internal::PlanRibbon(spec, n).plan.params.expected_fpr,
                  ceiling)
            << "n=" << n;
      }
    }
  }
}

TEST(RibbonTest, PlansRibbonFormsAtTheirSizes) {
  const FilterSpec spec = test::MustParse("ribbon:10");
  internal::RibbonBuildStats stats;
  std::string bytes;
  internal::AppendRibbonFilter(spec, Hashes(33), &bytes, {}, &stats);
  EXPECT_EQ(stats.kind, FilterKind::kRibbon);
  // Compact dense (seed 0): floor((n b - 8) / n) = 9 columns would fit the
  // budget with the header byte, but the spec's FPR ceiling (1.1 times its
  // FPR of 1.19e-3 at 2^20 keys) needs 10 (2^-10), over 33 slots and a
  // spare one: 340 column bits, 34 slots.
  EXPECT_EQ(stats.columns, 10u);
  EXPECT_EQ(stats.slots, 34u);
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
  // Dense systems of 40 keys in 41 slots (10.25 bits per key reach
  // ribbon:10.25's FPR ceiling with 10 columns; a spare slot, and 8 bits
  // for the compact form's header byte) are solvable with probability
  // ~0.58 per salt: across 20 key sets some need retries, and every one is
  // built as ribbon.
  int retried = 0;
  for (uint64_t set = 0; set < 20; set++) {
    const std::vector<uint64_t> h = Hashes(40, 1000 * set);
    internal::RibbonBuildStats stats;
    std::string bytes;
    internal::AppendRibbonFilter(test::MustParse("ribbon:10.25"), h, &bytes, {},
                                 &stats);
    EXPECT_EQ(stats.kind, FilterKind::kRibbon) << set;
    EXPECT_EQ(stats.slots, 41u);
    EXPECT_EQ(stats.columns, 10u);
    retried += stats.attempts > 1;
    ExpectAllMatch(bytes, h, "set " + std::to_string(set));
  }
  EXPECT_GT(retried, 0);
}

TEST(RibbonTest, DenseFiltersGetASpareSlot) {
  // ribbon:9 over 33 keys (LevelDB's filter of a 4 KiB block): 9 columns,
  // the fewest that reach the spec's FPR ceiling, over 34 slots. Such a
  // system is solvable under ~58% of salts, so the writer solves ~1.7
  // per filter (~3.5 in 33 slots).
  int attempts = 0;
  const int sets = 400;
  for (int set = 0; set < sets; set++) {
    const std::vector<uint64_t> h = Hashes(33, 1000 * set);
    internal::RibbonBuildStats stats;
    std::string bytes;
    internal::AppendRibbonFilter(test::MustParse("ribbon:9"), h, &bytes, {},
                                 &stats);
    ASSERT_EQ(stats.kind, FilterKind::kRibbon) << set;
    ASSERT_EQ(stats.columns, 9u);
    ASSERT_EQ(stats.slots, 34u);
    attempts += stats.attempts;
    ExpectAllMatch(bytes, h, "set " + std::to_string(set));
  }
  EXPECT_GT(attempts, 1.4 * sets);
  EXPECT_LT(attempts, 2.1 * sets);
  // Below 16 keys no spare slot, and bits beyond the fewest columns go to
  // columns: ribbon:2.3 at one key, 2 payload bytes, 11 columns of one
  // slot (FPR 2^-11), not 3 columns of 5 slots.
  const internal::RibbonPlan one =
      internal::PlanRibbon(test::MustParse("ribbon:2.3"), 1);
  EXPECT_EQ(one.plan.payload_bytes, 2u);
  EXPECT_EQ(one.r, 11u);
  EXPECT_EQ(one.slots, 1u);
}

TEST(RibbonTest, ScratchKeptAcrossSpecsWritesTheSameBytes) {
  // One scratch (a builder's, which keeps the spec's FPR ceiling) over
  // filters whose spec changes from one to the next, as a by_level
  // builder's does: the bytes of a fresh construction each time.
  internal::RibbonScratch scratch;
  const char* specs[] = {"ribbon:10", "ribbon:7.3", "ribbon:10:seed=3",
                         "ribbon:10", "ribbon:16"};
  for (int i = 0; i < 20; i++) {
    const FilterSpec spec = test::MustParse(specs[i % 5]);
    const std::vector<uint64_t> h = Hashes(20 + 7 * i, 1000 * i);
    internal::HashList kept(h);
    std::string reused, fresh;
    internal::AppendRibbonFilter(spec, &kept, &reused, {}, nullptr, &scratch);
    internal::AppendRibbonFilter(spec, h, &fresh);
    ASSERT_EQ(Hex(reused), Hex(fresh)) << specs[i % 5] << " i=" << i;
  }
}

TEST(RibbonTest, GrowsTheSystemWhenSaltsRunOut) {
  // One salt per size: the key sets whose first system is unsolvable are
  // rebuilt with more blocks (fewer columns), still as ribbon.
  internal::RibbonBuildOptions options;
  options.salts_per_size = 1;
  options.growths = 8;
  options.segmented = false;
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
    // Fewer columns, never more bytes than the banded form's plan.
    EXPECT_LE(FilterReader::Open(bytes).payload_size(),
              internal::PlanRibbon(test::MustParse("ribbon:10"), 20000, false)
                  .plan.payload_bytes);
  }
  EXPECT_GT(grown, 0);
}

TEST(RibbonTest, FallsBackToBloomOfNoMoreBytes) {
  internal::RibbonBuildOptions none;
  none.salts_per_size = 0;
  none.dense_salts = 0;
  none.segment_salts = 0;
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
  // Fixed keys: the measured rate is a fixed number; the bound is 3 sigma
  // of a binomial around the documented formula, with enough absent keys
  // for ~300 false positives (ribbon:16: ~20 million).
  for (const char* text : {"ribbon:10", "ribbon:7.3", "ribbon:16"}) {
    for (uint64_t n : {40, 3000, 100000}) {
      const FilterSpec spec = test::MustParse(text);
      const std::string bytes = test::BuildFilter(spec, n);
      const FilterReader r = FilterReader::Open(bytes);
      FilterParams p;
      ASSERT_TRUE(ParamsForSpec(spec, n, &p).ok());
      if (p.kind != FilterKind::kRibbon) continue;
      const uint64_t probes = std::max<uint64_t>(
          400000, static_cast<uint64_t>(std::ceil(300 / p.expected_fpr)));
      uint64_t fp = 0;
      for (uint64_t i = 0; i < probes; i++) {
        fp += r.MayMatchHash(Hash64(AbsentKey(i), 0));
      }
      const double expected = p.expected_fpr * static_cast<double>(probes);
      const double sigma = std::sqrt(expected * (1 - p.expected_fpr));
      std::printf("%s n=%llu: %llu false positives in %llu, expected %.1f\n",
                  text, static_cast<unsigned long long>(n),
                  static_cast<unsigned long long>(fp),
                  static_cast<unsigned long long>(probes), expected);
      EXPECT_NEAR(static_cast<double>(fp), expected, 3 * sigma)
          << text << " n=" << n << " expected fpr " << p.expected_fpr;
    }
  }
}

// The formula of ParamsForSpec against the segmented form's measured rate
// at n keys: within 4 sigma, two-sided, with enough absent keys for ~2000
// false positives (4 sigma ~ 9%: one column fewer or more would be 2x).
void ExpectFormulaHolds(const char* text, uint64_t n) {
  const FilterSpec spec = test::MustParse(text);
  const std::vector<uint64_t> h = Hashes(n);
  std::string bytes;
  internal::RibbonBuildStats stats;
  internal::AppendRibbonFilter(spec, h, &bytes, {}, &stats);
  ASSERT_EQ(stats.kind, FilterKind::kRibbon) << text << " n=" << n;
  FilterParams p;
  ASSERT_TRUE(ParamsForSpec(spec, n, &p).ok());
  ASSERT_EQ(p.filter_bytes, bytes.size()) << text << " n=" << n;
  const FilterReader r = FilterReader::Open(bytes);
  const uint64_t probes =
      static_cast<uint64_t>(std::ceil(2000 / p.expected_fpr));
  uint64_t fp = 0;
  for (uint64_t i = 0; i < probes; i++) {
    fp += r.MayMatchHash(Hash64(Key((uint64_t{1} << 40) + i), 0));
  }
  const double expected = p.expected_fpr * static_cast<double>(probes);
  EXPECT_NEAR(static_cast<double>(fp), expected, 4 * std::sqrt(expected))
      << text << " n=" << n << " expected fpr " << p.expected_fpr;
}

TEST(RibbonTest, FormulaHoldsAtTenThousandAndAMillion) {
  for (const char* text : {"ribbon:10", "ribbon:7.3"}) {
    ExpectFormulaHolds(text, 10000);
    ExpectFormulaHolds(text, 1000000);
  }
}

TEST(RibbonTest, FormulaHoldsAtTenAndAHundredMillion) {
  if (std::getenv("SSTFILTER_BIG_TESTS") == nullptr) {
    GTEST_SKIP() << "set SSTFILTER_BIG_TESTS=1";
  }
  ExpectFormulaHolds("ribbon:10", 10000000);
  ExpectFormulaHolds("ribbon:10", 100000000);
}

// The segmented form's planned size never shrinks as n grows, across the
// segment boundaries too (its directory grows a step at each).
TEST(RibbonTest, SegmentedSizeNeverShrinks) {
  for (const char* text :
       {"ribbon:2", "ribbon:7.3", "ribbon:10", "ribbon:32"}) {
    const FilterSpec spec = test::MustParse(text);
    uint64_t last = 0;
    for (uint64_t n = 3 * internal::kRibbonSegmentKeys - 3000;
         n <= 3 * internal::kRibbonSegmentKeys + 3000; n++) {
      const internal::RibbonPlan rp = internal::PlanRibbon(spec, n);
      ASSERT_TRUE(rp.segmented) << text << " n=" << n;
      ASSERT_GE(rp.plan.payload_bytes, last) << text << " n=" << n;
      last = rp.plan.payload_bytes;
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

// The dense form with a full trailer as format versions 1 to 3 wrote
// ribbon:8.5 for Key(0 .. 4): floor(5 * 8.5) = 42 bits: r = 8 columns of
// m = 5 slots, 40 bits = 5 payload bytes; trailer: payload_size 5, flags
// 0, params form 0, salt 1 (salt 0 gave no solution), m 5, r 8, 0, 0,
// check, len 11, tag 0x16 (unchecked, kind 6). Writers no longer write
// it: with the checked full trailer (14 bytes) the filter would be larger
// than the smallest compact one, so they write a 16-byte compact dense
// filter instead (FormatTest.GoldenCheckedForms).
const std::string& GoldenDenseBytes() {
  static const std::string bytes = FromHex(
      "ab26d3f6e0"
      "05"
      "00"
      "000105080000"
      "30"
      "0b"
      "16");
  return bytes;
}

TEST(RibbonTest, GoldenDense) {
  const std::string& bytes = GoldenDenseBytes();
  const FilterReader r = FilterReader::Open(bytes);
  ASSERT_TRUE(r.valid());
  EXPECT_EQ(r.kind(), FilterKind::kRibbon);
  EXPECT_EQ(r.payload_size(), 5u);
  for (uint64_t i = 0; i < 5; i++) EXPECT_TRUE(r.MayMatch(test::Key(i)));
  // Its answers to absent keys, as the writer's bytes gave them: r = 8
  // columns, ~1/256 of absent keys match.
  int matches = 0;
  for (uint64_t i = 0; i < 100000; i++) matches += r.MayMatch(AbsentKey(i));
  EXPECT_EQ(matches, 411);
}

// The dense form's column j is bits [j m, (j + 1) m) of its payload,
// least significant bit first, read from exactly ceil(m r / 8) bytes (a
// heap buffer of that size: ASan sees any read past it).
TEST(RibbonTest, DenseColumnsAreTheirBitsOfThePayload) {
  uint64_t x = 0x9e3779b97f4a7c15;
  for (uint32_t m = 1; m <= 64; m++) {
    for (uint32_t r = 1; r <= internal::kRibbonMaxColumns; r++) {
      const size_t bytes = (size_t{m} * r + 7) / 8;
      std::unique_ptr<uint8_t[]> payload(new uint8_t[bytes]);
      for (size_t i = 0; i < bytes; i++) {
        x = x * 6364136223846793005 + 1442695040888963407;
        payload[i] = static_cast<uint8_t>(x >> 56);
      }
      internal::RibbonDense dense;
      dense.data = payload.get();
      dense.m = m;
      dense.r = r;
      for (uint32_t j = 0; j < r; j++) {
        uint64_t want = 0;
        for (uint32_t b = 0; b < m; b++) {
          const uint64_t bit = uint64_t{j} * m + b;
          want |= uint64_t{(payload[bit / 8] >> (bit % 8)) & 1u} << b;
        }
        ASSERT_EQ(dense.Column(j), want)
            << "m=" << m << " r=" << r << " j=" << j;
      }
    }
  }
}

// The banded form (form 1), which builders wrote for n > 64 keys before the
// segmented form: the same keys and hashes as test::BuildFilter, written
// by the banded construction, which stays the fallback of huge filters.
std::string BuildBandedForm(const FilterSpec& spec, uint64_t n) {
  internal::RibbonBuildOptions banded;
  banded.segmented = false;
  std::string bytes;
  internal::AppendRibbonFilter(spec, Hashes(n), &bytes, banded);
  return bytes;
}

TEST(RibbonTest, GoldenBanded) {
  const std::string bytes =
      test::Unchecked(BuildBandedForm(test::MustParse("ribbon:9.5"), 2000));
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

TEST(RibbonTest, GoldenSegmented) {
  const std::string bytes =
      test::Unchecked(test::BuildFilter(test::MustParse("ribbon:9.5"), 2000));
  // One segment of max(2, ceil(1.02 * 2000 / 128)) = 16 blocks; floor((2000
  // * 9.5 - 128 - floor(64 * 2000 / 2^15)) / 128) = 147 columns: r = 9, 3 wide blocks. Payload 16
  // + 16 * 147 = 2368 bytes (c0 12); trailer: flags 0, params form 2, r 9,
  // u32le 1 segment, check, len 12, tag 0x16.
  ASSERT_EQ(bytes.size(), 2368u + 12);
  EXPECT_EQ(Hex(bytes.substr(2368)),
            "c012"
            "00"
            "020901000000"
            "96"
            "0c"
            "16");
  // Directory: entry 0 (column 0, block 0 << 8 | salt 0), entry 1 (column
  // 147, block 16 << 8); then block 0's column 0: two little-endian words.
  EXPECT_EQ(Hex(bytes.substr(0, 16)),
            "0000000000000000"
            "9300000000100000");
  EXPECT_EQ(Hex(bytes.substr(16, 16)), "1a46fa21e737c3ba678d571e2a924a68");
  EXPECT_EQ(Hash64(bytes), 8064295047509654611ull);
}

TEST(RibbonTest, GoldenSegmentedTwoSegments) {
  const std::string bytes =
      test::Unchecked(test::BuildFilter(test::MustParse("ribbon:9.5"), 40000));
  // Two segments; payload 24 + 16 * 2967 = 47496 bytes (88 f3 02); params
  // form 2, r 9, u32le 2 segments.
  ASSERT_EQ(bytes.size(), 47496u + 13);
  EXPECT_EQ(Hex(bytes.substr(47496)),
            "88f302"
            "00"
            "020902000000"
            "ef"
            "0d"
            "16");
  // Directory: segment 0 at column 0, block 0, salt 2 (salts 0 and 1 left
  // it unsolvable); segment 1 at column 1478, block 159, salt 0; the end at
  // column 2967, block 319.
  EXPECT_EQ(Hex(bytes.substr(0, 24)),
            "0000000002000000"
            "c6050000009f0000"
            "970b0000003f0100");
  EXPECT_EQ(Hash64(bytes), 18400636824467553083ull);
}

// Batched queries of the segmented form locate a round of keys first and
// check them after: their answers must be the single queries', for every
// batch size (none a multiple of the round of 32 but some), in every
// segment, and where a segment's directory entries are damaged.
TEST(RibbonTest, SegmentedBatchesMatchSingleQueries) {
  const uint64_t n = 100003;  // 4 segments
  std::string bytes = test::BuildFilter(test::MustParse("ribbon:7.5"), n);
  std::vector<uint64_t> h = Hashes(3000, n - 1000);  // 1000 present
  const auto check = [&](const std::string& filter, const char* what) {
    const FilterReader r = FilterReader::Open(filter);
    EXPECT_TRUE(r.valid()) << what;
    uint64_t matches = 0;
    size_t i = 0;
    for (size_t size = 1; i < h.size(); size = size % 71 + 1) {
      const size_t m = std::min(size, h.size() - i);
      std::unique_ptr<bool[]> got(new bool[m]);
      r.MayMatchHashes(m, h.data() + i, got.get());
      for (size_t j = 0; j < m; j++) {
        EXPECT_EQ(got[j], r.MayMatchHash(h[i + j])) << what << " " << i + j;
        matches += got[j];
      }
      i += m;
    }
    return matches;
  };
  const uint64_t intact = check(bytes, "intact");
  EXPECT_GE(intact, 1000u);
  EXPECT_LE(intact, 1000u + 2 * 2000 / 128);  // FPR ~2^-7 (7.5 bits/key)
  // Entry 2's first block set to 0: segment 1 has fewer than 2 blocks,
  // segment 2 too many for its columns; their absent keys (about half of
  // the 2000) may match.
  // Sealed again (the trailer's check computed over the damaged payload),
  // so that the reader opens it and the queries meet the damage.
  bytes[16 + 5] = bytes[16 + 6] = bytes[16 + 7] = 0;
  internal::Trailer t;
  ASSERT_TRUE(internal::ParseTrailer(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t));
  std::string damaged = bytes.substr(0, t.payload_size);
  internal::AppendTrailer(t, &damaged);
  EXPECT_GE(check(damaged, "damaged"), intact + 2000 / 4);
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
  const std::string& dense = GoldenDenseBytes();
  const std::string banded =
      test::Unchecked(BuildBandedForm(test::MustParse("ribbon:9.5"), 2000));
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
      {&dense, std::string("\x02\x00\x05\x08\x00\x00", 6), 0},   // r = 0
      {&dense, std::string("\x03\x00\x05\x08\x00\x00", 6), 0},   // form 3
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
  // Segmented (form 2): params r, u32le S; payload a directory of S + 1
  // entries, then 16-byte columns; entry 0 at column 0 and block 0, entry S
  // at column W with salt byte 0.
  const std::string seg =
      test::BuildFilter(test::MustParse("ribbon:9.5"), 2000);
  ASSERT_TRUE(FilterReader::Open(seg).valid());
  const std::string s_ok("\x02\x09\x01\x00\x00\x00", 6);
  ASSERT_TRUE(FilterReader::Open(WithParams(seg, s_ok)).valid());
  const Case seg_cases[] = {
      {&seg, std::string("\x02\x00\x01\x00\x00\x00", 6), 0},  // r = 0
      {&seg, std::string("\x02\x21\x01\x00\x00\x00", 6), 0},  // r = 33
      {&seg, std::string("\x02\x09\x00\x00\x00\x00", 6), 0},  // S = 0
      {&seg, std::string("\x02\x09\x02\x00\x00\x00", 6), 0},  // S = 2
      {&seg, std::string("\x02\x09\xff\xff\xff\xff", 6), 0},  // huge S
      {&seg, s_ok, 8},                                        // not columns
      {&seg, s_ok, 16},                                       // W != end
      {&seg, s_ok, -2368},                                    // no directory
  };
  for (const Case& c : seg_cases) {
    const FilterReader r =
        FilterReader::Open(WithParams(*c.base, c.params, c.delta));
    EXPECT_FALSE(r.valid()) << Hex(c.params) << " " << c.delta;
    EXPECT_TRUE(r.MayMatch(AbsentKey(1)));
  }
  // A directory that Open accepts but a query finds inconsistent (here:
  // the end at block 1, so the segment has fewer than 2 blocks) answers
  // "may match" for every key: bytes with the unchecked trailer of earlier
  // versions, which does not cover the payload (the checked one refuses
  // the damaged filter as a whole).
  std::string one_block = test::UncheckedBytes(seg);
  one_block[8 + 5] = 1;
  one_block[8 + 6] = 0;
  std::string one_block_checked = seg;
  one_block_checked[8 + 5] = 1;
  one_block_checked[8 + 6] = 0;
  EXPECT_FALSE(FilterReader::Open(one_block_checked).valid());
  const FilterReader damaged = FilterReader::Open(one_block);
  ASSERT_TRUE(damaged.valid());
  for (int i = 0; i < 100; i++) EXPECT_TRUE(damaged.MayMatch(AbsentKey(i)));
  // Too many columns for the blocks: 34 blocks of 33 columns.
  const std::string wide = WithParams(
      banded, std::string("\x01\x00\x22\x00\x00\x00", 6), 34 * 33 * 8 - 2368);
  EXPECT_FALSE(FilterReader::Open(wide).valid());
}

}  // namespace
}  // namespace sstfilter
