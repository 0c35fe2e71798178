// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/spec.h"

#include <gtest/gtest.h>

#include <string>

#include "policy/kinds.h"
#include "sstfilter/c.h"
#include "sstfilter/filter.h"
#include "sstfilter/params.h"

namespace sstfilter {
namespace {

TEST(SpecTest, ParsesGoodSpecs) {
  struct Case {
    const char* text;
    FilterKind kind;
    double bits;
    uint64_t seed;
  } cases[] = {
      {"bloom:10", FilterKind::kBloom, 10, 0},
      {"blocked_bloom:9.5", FilterKind::kBlockedBloom, 9.5, 0},
      {"sstfilter.bloom:10", FilterKind::kBloom, 10, 0},
      {"cuckoo:12", FilterKind::kCuckoo, 12, 0},
      {"ribbon:7.3", FilterKind::kRibbon, 7.3, 0},
      {"sstfilter.ribbon:32", FilterKind::kRibbon, 32, 0},
      {"bloom:1", FilterKind::kBloom, 1, 0},
      {"bloom:64", FilterKind::kBloom, 64, 0},
      {"bloom:10:seed=7", FilterKind::kBloom, 10, 7},
      {"blocked_bloom:0012.250", FilterKind::kBlockedBloom, 12.25, 0},
  };
  for (const Case& c : cases) {
    FilterSpec spec;
    Status s = ParseFilterSpec(c.text, &spec);
    ASSERT_TRUE(s.ok()) << c.text << ": " << s.ToString();
    EXPECT_EQ(spec.kind, c.kind) << c.text;
    EXPECT_EQ(spec.bits_per_key, c.bits) << c.text;
    EXPECT_EQ(spec.seed, c.seed) << c.text;
  }
}

TEST(SpecTest, RejectsBadSpecsNamingTheProblem) {
  struct Case {
    const char* text;
    const char* must_mention;
  } cases[] = {
      {"bloom:-3", "[1, 64]"},
      {"bloom:abc", "not a decimal number"},
      {"bloom:", "not a decimal number"},
      {"bloom", "expected <kind>:<bits_per_key>"},
      {"", "expected <kind>:<bits_per_key>"},
      {"unknown:10", "unknown filter kind \"unknown\""},
      {"sstfilter.unknown:10", "unknown filter kind"},
      {"bloom:1e9", "not a decimal number"},
      {"bloom:1000000000", "got 1e+09"},
      {"bloom:0", "got 0"},
      {"bloom:0.5", "got 0.5"},
      {"bloom:nan", "not a decimal number"},
      {"bloom:inf", "not a decimal number"},
      {"bloom: 10", "not a decimal number"},
      {"bloom:10 ", "not a decimal number"},
      {"bloom:10:", "unknown option \"\""},
      {"bloom:10:bogus", "unknown option \"bogus\""},
      {"bloom:10:by_level=1", "unknown option \"by_level=1\""},
      {"bloom:10:seed", "unknown option \"seed\""},
      {"bloom:10:seed=1:seed=2", "\"seed\" given twice"},
      {"bloom:10:by_level:by_level", "given twice"},
      {"bloom:10:size_ratio=8", "add by_level"},
      {"bloom:10:l0_files=3", "add by_level"},
      {"bloom:10:by_level:size_ratio=1", "size_ratio must be within"},
      {"bloom:10:by_level:size_ratio=x", "size_ratio \"x\""},
      {"bloom:10:by_level:levels=3", "unknown option \"levels=3\""},
      {"bloom:10:by_level:l0_files=2.5", "l0_files \"2.5\""},
      {"bloom:10:by_level:l0_files=0", "l0_files must be within"},
      {"bloom:10:seed=", "seed"},
      {"bloom:10:seed=-1", "seed"},
      {"bloom:10:seed=99999999999999999999", "seed"},
      {"cuckoo:2", "cuckoo bits per key"},
      {"ribbon:1.5", "ribbon bits per key"},
      {"ribbon:33", "ribbon bits per key"},
      {"empty:10", "unknown filter kind"},
      {"counting_bloom:10", "unknown filter kind"},
      {"Bloom:10", "unknown filter kind"},
  };
  for (const Case& c : cases) {
    FilterSpec spec;
    spec.bits_per_key = 42;
    Status s = ParseFilterSpec(c.text, &spec);
    EXPECT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.text;
    EXPECT_NE(s.message().find(c.must_mention), std::string::npos)
        << c.text << " -> " << s.message();
    // The message quotes the input so a user can find it in a config.
    EXPECT_NE(s.message().find(std::string("\"") + c.text + "\""),
              std::string::npos)
        << s.message();
    EXPECT_EQ(spec.bits_per_key, 42) << "spec changed on error: " << c.text;
  }
}

TEST(SpecTest, ToStringRoundTrips) {
  for (const char* text :
       {"bloom:10", "blocked_bloom:9.5", "cuckoo:12", "bloom:10:seed=7",
        "blocked_bloom:0.1:seed=1", "bloom:33.333", "blocked_bloom:10:by_level",
        "cuckoo:12:seed=3:by_level",
        "bloom:8:by_level:size_ratio=6.5:l0_files=2"}) {
    FilterSpec spec;
    Status s = ParseFilterSpec(text, &spec);
    if (!s.ok()) continue;  // 0.1 is out of range: covered elsewhere
    EXPECT_EQ(spec.ToString(), text);
    FilterSpec again;
    ASSERT_TRUE(ParseFilterSpec(spec.ToString(), &again).ok());
    EXPECT_EQ(again, spec);
  }
}

// Numbers whose shortest form has an exponent ("1e-05", "1e+06") are
// written without one, since the grammar's decimals have none: the
// canonical string parses back. (A fuzzer found read_us=.0000000377604902 written as 3.77604902e-08.)
TEST(SpecTest, ToStringWritesNoExponent) {
  const struct {
    const char* text;
    const char* canonical;
  } kCases[] = {
      {"auto:1:read_us=.0000000377604902:keyed",
       "auto:1:keyed:read_us=0.0000000377604902"},
      {"auto:10:read_us=0.00001", "auto:10:read_us=0.00001"},
      {"auto:10:read_us=0.0001", "auto:10:read_us=0.0001"},
      {"auto:10:read_us=100000", "auto:10:read_us=100000"},
      {"auto:10:read_us=1000000", "auto:10:read_us=1000000"},  // its maximum
      {"auto:10:bloom_query_ns=0.0000125", "auto:10:bloom_query_ns=0.0000125"},
      {"auto:10:ribbon_build_ns=0.00002", "auto:10:ribbon_build_ns=0.00002"},
  };
  for (const auto& c : kCases) {
    FilterSpec spec;
    ASSERT_TRUE(ParseFilterSpec(c.text, &spec).ok()) << c.text;
    EXPECT_EQ(spec.ToString(), c.canonical) << c.text;
    FilterSpec again;
    const Status s = ParseFilterSpec(spec.ToString(), &again);
    ASSERT_TRUE(s.ok()) << spec.ToString() << ": " << s.ToString();
    EXPECT_EQ(again, spec) << c.text;
  }
}

TEST(SpecTest, ByLevelOptions) {
  FilterSpec spec;
  ASSERT_TRUE(
      ParseFilterSpec(
          "sstfilter.cuckoo:12:l0_files=8:by_level:size_ratio=4:seed=9", &spec)
          .ok());
  EXPECT_EQ(spec.kind, FilterKind::kCuckoo);
  EXPECT_TRUE(spec.by_level);
  EXPECT_EQ(spec.size_ratio, 4);
  EXPECT_EQ(spec.l0_files, 8);
  EXPECT_EQ(spec.seed, 9u);
  // Canonical order; default tree options left out.
  EXPECT_EQ(spec.ToString(),
            "cuckoo:12:seed=9:by_level:size_ratio=4:l0_files=8");
  ASSERT_TRUE(ParseFilterSpec("bloom:10:by_level:size_ratio=10", &spec).ok());
  EXPECT_EQ(spec.ToString(), "bloom:10:by_level");
  FilterSpec plain;
  ASSERT_TRUE(ParseFilterSpec("bloom:10", &plain).ok());
  EXPECT_NE(spec, plain);
  EXPECT_FALSE(plain.by_level);
  // A builder of a by_level spec, told no level, uses the average.
  std::unique_ptr<FilterBuilder> a, b;
  ASSERT_TRUE(NewFilterBuilder(spec, &a).ok());
  ASSERT_TRUE(NewFilterBuilder(plain, &b).ok());
  for (uint64_t i = 0; i < 1000; i++) {
    a->AddHash(i * 0x9E3779B97F4A7C15ull);
    b->AddHash(i * 0x9E3779B97F4A7C15ull);
  }
  std::string fa, fb;
  a->Finish(&fa);
  b->Finish(&fb);
  EXPECT_EQ(fa, fb);
}

TEST(SpecTest, ValidateAndBuilderRejectHandMadeSpecs) {
  FilterSpec spec;
  spec.kind = FilterKind::kBloom;
  spec.bits_per_key = -1;
  std::unique_ptr<FilterBuilder> b;
  Status s = NewFilterBuilder(spec, &b);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(b, nullptr);
  spec.kind = static_cast<FilterKind>(77);
  spec.bits_per_key = 10;
  EXPECT_FALSE(spec.Validate().ok());
  spec.kind = FilterKind::kEmpty;
  EXPECT_FALSE(NewFilterBuilder(spec, &b).ok());
}

// The cuckoo range is the fingerprint widths the code can build, [4, 32]
// bits: both ends parse, build and read back; just outside them is refused.
TEST(SpecTest, CuckooBitsPerKeyEdges) {
  EXPECT_EQ(MinBitsPerKey(FilterKind::kCuckoo), 4);
  EXPECT_EQ(MaxBitsPerKey(FilterKind::kCuckoo), 32);
  for (const char* text : {"cuckoo:4", "cuckoo:32"}) {
    FilterSpec spec;
    ASSERT_TRUE(ParseFilterSpec(text, &spec).ok()) << text;
    FilterParams p;
    ASSERT_TRUE(ParamsForSpec(spec, 5000, &p).ok()) << text;
    EXPECT_EQ(p.kind, FilterKind::kCuckoo) << text;
    EXPECT_EQ(p.fingerprint_bits, static_cast<int>(spec.bits_per_key));
    std::unique_ptr<FilterBuilder> b;
    ASSERT_TRUE(NewFilterBuilder(spec, &b).ok()) << text;
    for (int i = 0; i < 5000; i++) b->AddKey("key" + std::to_string(i));
    std::string bytes;
    b->Finish(&bytes);
    EXPECT_EQ(bytes.size(), p.filter_bytes) << text;
    const FilterReader r = FilterReader::Open(bytes);
    EXPECT_EQ(r.kind(), FilterKind::kCuckoo) << text;
    for (int i = 0; i < 5000; i++) {
      ASSERT_TRUE(r.MayMatch("key" + std::to_string(i))) << text << " " << i;
    }
  }
  for (const char* text : {"cuckoo:3.99", "cuckoo:32.01", "cuckoo:34"}) {
    FilterSpec spec;
    const Status s = ParseFilterSpec(text, &spec);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_NE(s.message().find("within [4, 32]"), std::string::npos)
        << s.message();
  }
}

TEST(SpecTest, KindNames) {
  EXPECT_STREQ(FilterKindName(FilterKind::kBloom), "bloom");
  EXPECT_STREQ(FilterKindName(FilterKind::kBlockedBloom), "blocked_bloom");
  EXPECT_STREQ(FilterKindName(FilterKind::kCuckoo), "cuckoo");
  EXPECT_STREQ(FilterKindName(FilterKind::kRibbon), "ribbon");
  EXPECT_STREQ(FilterKindName(static_cast<FilterKind>(99)), "unknown");
}

// Every kind byte has a name, and a C name in sstfilter/c.h (C cannot read
// the kinds table; capi/c.cc checks each C name's value): a kind added to
// the table fails here until its C enumerator is the last one.
TEST(SpecTest, EveryKindHasANameAndACName) {
  static_assert(SSTFILTER_KIND_RANGE + 1 == internal::kNumFilterKinds,
                "sstfilter_kind (sstfilter/c.h) lacks the newest kind");
  for (size_t k = 0; k < internal::kNumFilterKinds; k++) {
    EXPECT_NE(std::string(FilterKindName(static_cast<FilterKind>(k))),
              "unknown")
        << k;
  }
  EXPECT_STREQ(
      FilterKindName(static_cast<FilterKind>(internal::kNumFilterKinds)),
      "unknown");
}

}  // namespace
}  // namespace sstfilter
