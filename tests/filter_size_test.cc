// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// FilterSize is non-decreasing in n for every kind and spec, and
// MaxEntriesForSize is its inverse: RocksDB sizes partitions with them
// (FilterBitsBuilder::ApproximateNumEntries), and a size that drops as keys
// are added makes that inverse wrong. FilterSize is a plan, not a build, so
// every n up to 10^5 is checked, then geometric steps to the largest count
// a filter may be planned for (2^52).

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sstfilter/filter.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

constexpr uint64_t kExhaustiveKeys = 100000;
constexpr uint64_t kMaxKeys = uint64_t{1} << 52;  // kMaxPlanKeys

const FilterSecret* Secret() {
  static const FilterSecret* secret = [] {
    std::unique_ptr<const FilterSecret> s;
    if (!NewFilterSecret("filter size test secret 01234567", &s).ok()) abort();
    return s.release();
  }();
  return secret;
}

// Every kind at its least and most bits per key and between (fractions,
// the compact and banded edges of ribbon, cuckoo's wide fingerprints),
// plain, seeded, keyed and keyed with salt (a seed in every trailer).
std::vector<FilterSpec> Specs() {
  std::vector<FilterSpec> specs;
  for (const char* kind : {"bloom", "blocked_bloom", "cuckoo", "ribbon"}) {
    for (double bits : {1.0, 2.0, 2.5, 3.0, 4.7, 6.5, 9.5, 10.0, 12.0, 16.3,
                        18.0, 24.0, 31.9, 32.0, 64.0}) {
      for (const char* options : {"", ":seed=7", ":keyed", ":keyed:salt"}) {
        FilterSpec spec = test::MustParse(std::string(kind) + ":10" + options);
        spec.bits_per_key = bits;
        if (spec.Validate().ok()) specs.push_back(spec);
      }
    }
  }
  return specs;
}

std::unique_ptr<FilterBuilder> Builder(const FilterSpec& spec) {
  std::unique_ptr<FilterBuilder> b;
  if (!NewFilterBuilder(spec, &b, Secret()).ok()) abort();
  return b;
}

// n = 0 .. 10^5, then n (1 + 1/8) + 1 up to 2^52.
std::vector<uint64_t> Counts() {
  std::vector<uint64_t> counts;
  for (uint64_t n = 0; n <= kExhaustiveKeys; n++) counts.push_back(n);
  for (uint64_t n = kExhaustiveKeys + 1; n < kMaxKeys; n += n / 8 + 1) {
    counts.push_back(n);
  }
  counts.push_back(kMaxKeys);
  return counts;
}

TEST(FilterSizeTest, NonDecreasingInKeysForEveryKindAndSpec) {
  const std::vector<uint64_t> counts = Counts();
  int specs = 0;
  for (const FilterSpec& spec : Specs()) {
    const std::unique_ptr<FilterBuilder> b = Builder(spec);
    size_t last = 0;
    for (uint64_t n : counts) {
      const size_t size = b->FilterSize(n);
      ASSERT_GE(size, last) << spec.ToString() << " n=" << n;
      last = size;
    }
    // Past the largest plan, "too large", never a wrapped small size.
    EXPECT_EQ(b->FilterSize(kMaxKeys + 1), SIZE_MAX) << spec.ToString();
    specs++;
  }
  EXPECT_GE(specs, 150);
}

TEST(FilterSizeTest, MaxEntriesForSizeIsTheInverse) {
  for (const FilterSpec& spec : Specs()) {
    const std::unique_ptr<FilterBuilder> b = Builder(spec);
    std::vector<size_t> sizes;
    for (size_t s = 0; s <= 300; s++) sizes.push_back(s);
    for (size_t s = 301; s < (size_t{1} << 50); s += s / 3 + 7) {
      sizes.push_back(s);
    }
    for (size_t s : sizes) {
      const size_t n = b->MaxEntriesForSize(s);
      if (n == 0) {
        ASSERT_GT(b->FilterSize(1), s) << spec.ToString() << " size=" << s;
        continue;
      }
      ASSERT_LE(b->FilterSize(n), s) << spec.ToString() << " size=" << s;
      ASSERT_GT(b->FilterSize(n + 1), s) << spec.ToString() << " size=" << s;
    }
  }
}

// Where the planners pad or change form to keep sizes non-decreasing
// (tiny ribbon filters taking the compact form, Bloom filters written in
// place of small banded ribbon or cuckoo filters), the builder writes
// exactly FilterSize bytes, and every key matches.
TEST(FilterSizeTest, BuildersWriteThePlannedSizeWhereSizesArePadded) {
  for (const char* text :
       {"ribbon:2", "ribbon:3", "ribbon:6.5", "ribbon:9", "ribbon:10",
        "ribbon:20", "ribbon:32", "ribbon:3:seed=7", "ribbon:32:keyed",
        "cuckoo:12", "cuckoo:16", "cuckoo:18", "cuckoo:18:seed=7"}) {
    const FilterSpec spec = test::MustParse(text);
    const std::unique_ptr<FilterBuilder> b = Builder(spec);
    for (uint64_t n = 1; n <= 450; n++) {
      const std::string bytes = test::BuildFilter(spec, n, Secret());
      ASSERT_EQ(bytes.size(), b->FilterSize(n)) << text << " n=" << n;
      const FilterReader r = FilterReader::Open(bytes, Secret());
      ASSERT_TRUE(r.valid()) << text << " n=" << n;
      for (uint64_t i = 0; i < n; i++) {
        ASSERT_TRUE(r.MayMatch(test::Key(i))) << text << " n=" << n;
      }
    }
  }
}

}  // namespace
}  // namespace sstfilter
