// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Absurd requests fail cleanly: a spec asking for 10^9 bits per key, sizes
// of more keys than memory can hold, mutable filters of absurd capacity,
// and bytes whose trailer claims a huge filter each give an error Status or
// "may match" -- never an allocation of the size asked for, never a crash.
// Every allocation of this binary is counted, so "never allocates that
// much" is measured, not assumed.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "policy/format.h"
#include "policy/spec_parse.h"
#include "sstfilter/c.h"
#include "sstfilter/filter.h"
#include "sstfilter/mutable.h"
#include "sstfilter/params.h"
#include "sstfilter/spec.h"

// The largest single allocation through operator new on this thread.
namespace {
thread_local std::size_t t_largest = 0;
void* TrackedAlloc(std::size_t size) {
  if (size > t_largest) t_largest = size;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

#define SSTFILTER_TEST_NOINLINE __attribute__((noinline))
SSTFILTER_TEST_NOINLINE void* operator new(std::size_t size) {
  if (void* p = TrackedAlloc(size)) return p;
  throw std::bad_alloc();
}
SSTFILTER_TEST_NOINLINE void* operator new[](std::size_t size) {
  return operator new(size);
}
SSTFILTER_TEST_NOINLINE void operator delete(void* p) noexcept { std::free(p); }
SSTFILTER_TEST_NOINLINE void operator delete[](void* p) noexcept {
  std::free(p);
}
SSTFILTER_TEST_NOINLINE void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
SSTFILTER_TEST_NOINLINE void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
// The nothrow forms too: GoogleTest 1.15 (Debian 13) allocates with
// new (std::nothrow) and frees with plain delete, which must then pair.
SSTFILTER_TEST_NOINLINE void* operator new(std::size_t size,
                                           const std::nothrow_t&) noexcept {
  return TrackedAlloc(size);
}
SSTFILTER_TEST_NOINLINE void* operator new[](std::size_t size,
                                             const std::nothrow_t&) noexcept {
  return TrackedAlloc(size);
}
SSTFILTER_TEST_NOINLINE void operator delete(void* p,
                                             const std::nothrow_t&) noexcept {
  std::free(p);
}
SSTFILTER_TEST_NOINLINE void operator delete[](void* p,
                                               const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace sstfilter {
namespace {

constexpr size_t kSizeMax = std::numeric_limits<size_t>::max();
// No request below may allocate more than this at once.
constexpr size_t kSmall = 1 << 20;

class LargestAllocation {
 public:
  LargestAllocation() { t_largest = 0; }
  size_t bytes() const { return t_largest; }
};

TEST(AbsurdRequestTest, BillionBitsPerKeyIsRejected) {
  for (const char* text :
       {"bloom:1000000000", "blocked_bloom:1000000000", "cuckoo:1000000000",
        "ribbon:1000000000", "sstfilter.bloom:1000000000.5", "bloom:65",
        "cuckoo:35", "ribbon:33", "ribbon:1"}) {
    LargestAllocation a;
    FilterSpec spec;
    const Status s = ParseFilterSpec(text, &spec);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("bits per key must be within"),
              std::string::npos)
        << s.message();
    EXPECT_LT(a.bytes(), kSmall) << text;
  }
  // The same spec built by hand, past the parser.
  for (FilterKind kind : SpecKinds()) {
    const FilterSpec spec{kind, 1e9, 0};
    std::unique_ptr<FilterBuilder> b;
    EXPECT_FALSE(NewFilterBuilder(spec, &b).ok());
    EXPECT_EQ(b, nullptr);
    FilterParams p;
    EXPECT_FALSE(ParamsForSpec(spec, 1000, &p).ok());
  }
  char* err = nullptr;
  sstfilter_builder* b = nullptr;
  EXPECT_EQ(sstfilter_builder_create("bloom:1000000000", &b, &err),
            SSTFILTER_INVALID_ARGUMENT);
  EXPECT_EQ(b, nullptr);
  ASSERT_NE(err, nullptr);
  EXPECT_NE(std::string(err).find("1000000000"), std::string::npos) << err;
  sstfilter_free(err);
}

TEST(AbsurdRequestTest, SizesBeyondMemoryAreReportedNotWrapped) {
  // The largest bits per key each kind accepts.
  for (FilterKind kind : SpecKinds()) {
    const std::string text = std::string(FilterKindName(kind)) + ":" +
                             internal::FormatNumber(MaxBitsPerKey(kind));
    SCOPED_TRACE(text);
    const FilterSpec spec = [&] {
      FilterSpec s;
      EXPECT_TRUE(ParseFilterSpec(text, &s).ok());
      return s;
    }();
    std::unique_ptr<FilterBuilder> b;
    ASSERT_TRUE(NewFilterBuilder(spec, &b).ok());
    LargestAllocation a;
    // More keys than any filter can hold: "too large", not a small number
    // that a caller would go on to allocate (formerly undefined behaviour:
    // a double beyond 2^64 converted to an integer).
    EXPECT_EQ(b->FilterSize(kSizeMax), kSizeMax);
    EXPECT_EQ(b->FilterSize(size_t{1} << 60), kSizeMax);
    // The largest count that has a size still gets an exact, large one.
    const size_t big = b->FilterSize(size_t{1} << 52);
    EXPECT_GT(big, size_t{1} << 52);
    EXPECT_LT(big, kSizeMax);
    // Sizes never shrink as counts grow.
    size_t last = 0;
    for (int shift = 0; shift <= 63; shift++) {
      const size_t n = size_t{1} << shift;
      EXPECT_GE(b->FilterSize(n), last) << n;
      last = b->FilterSize(n);
    }
    // The inverse for a budget of all memory: a count, no overflow.
    const size_t n = b->MaxEntriesForSize(kSizeMax);
    EXPECT_GE(n, size_t{1} << 52);
    EXPECT_LT(a.bytes(), kSmall);

    FilterParams p;
    const Status s = ParamsForSpec(spec, ~uint64_t{0}, &p);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find("more than one filter can hold"),
              std::string::npos)
        << s.message();
    EXPECT_TRUE(ParamsForSpec(spec, uint64_t{1} << 52, &p).ok());
    EXPECT_FALSE(ParamsForFpr(spec.kind, ~uint64_t{0}, 0.01, &p).ok());
  }
  // The C API passes both answers through.
  char* err = nullptr;
  sstfilter_params p;
  EXPECT_EQ(sstfilter_params_for_spec("bloom:10", ~uint64_t{0}, &p, &err),
            SSTFILTER_INVALID_ARGUMENT);
  sstfilter_free(err);
  sstfilter_builder* b = nullptr;
  ASSERT_EQ(sstfilter_builder_create("cuckoo:12", &b, nullptr), SSTFILTER_OK);
  EXPECT_EQ(sstfilter_builder_filter_size(b, kSizeMax), kSizeMax);
  sstfilter_builder_destroy(b);
}

TEST(AbsurdRequestTest, MutableFiltersOfAbsurdCapacityAreRefused) {
  for (uint64_t capacity :
       {uint64_t{1} << 40, uint64_t{1} << 62, ~uint64_t{0}}) {
    MutableFilterOptions o;
    o.capacity = capacity;
    o.target_fpr = 1e-6;
    LargestAllocation a;
    CountingBloomFilter cb;
    Status s = CountingBloomFilter::Create(o, &cb);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << capacity;
    EXPECT_NE(s.message().find("more than the limit"), std::string::npos)
        << s.message();
    DynamicCuckooFilter dc;
    s = DynamicCuckooFilter::Create(o, &dc);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << capacity;
    EXPECT_EQ(dc.num_slots(), 0u);
    EXPECT_LT(a.bytes(), kSmall);
  }
  sstfilter_mutable_options o;
  sstfilter_mutable_options_init(&o);
  o.capacity = ~uint64_t{0};
  sstfilter_mutable* m = nullptr;
  char* err = nullptr;
  EXPECT_EQ(
      sstfilter_mutable_create(SSTFILTER_KIND_DYNAMIC_CUCKOO, &o, &m, &err),
      SSTFILTER_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  sstfilter_free(err);
}

// A well-formed trailer (valid check byte) after `payload` bytes whose
// payload_size field claims `claimed` bytes.
std::string Claiming(FilterKind kind, uint64_t claimed, size_t payload,
                     std::initializer_list<uint8_t> params) {
  std::string bytes(payload, '\xff');
  internal::Trailer t;
  t.kind = kind;
  t.payload_size = claimed;
  t.params_size = 0;
  for (uint8_t p : params) t.params[t.params_size++] = p;
  internal::AppendTrailer(t, &bytes);
  return bytes;
}

TEST(AbsurdRequestTest, BytesClaimingAHugeFilterMayMatchAndLoadNothing) {
  struct Case {
    FilterKind kind;
    std::initializer_list<uint8_t> params;
    bool honest_reads;  // a 4096-byte payload with these params is valid
  };
  const Case cases[] = {
      {FilterKind::kBloom, {7}, true},
      {FilterKind::kBlockedBloom, {7}, true},
      {FilterKind::kCuckoo, {12, 0}, false},
      {FilterKind::kCountingBloom, {7}, true},
      {FilterKind::kDynamicCuckoo, {12, 0}, false},
      // Ribbon, banded: 16 blocks (4096 bytes: 32 columns each), and the
      // most blocks a trailer names; dense: 64 slots of 32 columns.
      {FilterKind::kRibbon, {1, 0, 16, 0, 0, 0}, true},
      {FilterKind::kRibbon, {1, 0, 0xff, 0xff, 0xff, 0xff}, false},
      {FilterKind::kRibbon, {0, 0, 64, 32, 0, 0}, false},
  };
  // A kind added to SpecKinds needs its case here.
  for (FilterKind kind : SpecKinds()) {
    EXPECT_TRUE(std::any_of(std::begin(cases), std::end(cases),
                            [&](const Case& c) { return c.kind == kind; }))
        << FilterKindName(kind) << " has no case";
  }
  for (const Case& c : cases) {
    for (uint64_t claimed : {uint64_t{1} << 40, uint64_t{1} << 60, ~uint64_t{0},
                             uint64_t{4096} + 1}) {
      SCOPED_TRACE(std::string(FilterKindName(c.kind)) + " claiming " +
                   std::to_string(claimed));
      const std::string bytes = Claiming(c.kind, claimed, 4096, c.params);
      LargestAllocation a;
      const FilterReader r = FilterReader::Open(bytes);
      EXPECT_FALSE(r.valid());
      EXPECT_TRUE(r.MayMatch("any key"));
      CountingBloomFilter cb;
      EXPECT_EQ(CountingBloomFilter::Deserialize(bytes, &cb).code(),
                Status::Code::kCorruption);
      DynamicCuckooFilter dc;
      EXPECT_EQ(DynamicCuckooFilter::Deserialize(bytes, &dc).code(),
                Status::Code::kCorruption);
      sstfilter_mutable* m = nullptr;
      char* err = nullptr;
      EXPECT_EQ(
          sstfilter_mutable_deserialize(SSTFILTER_KIND_DYNAMIC_CUCKOO,
                                        bytes.data(), bytes.size(), &m, &err),
          SSTFILTER_CORRUPTION);
      sstfilter_free(err);
      EXPECT_EQ(sstfilter_may_match(bytes.data(), bytes.size(), "k", 1), 1);
      EXPECT_LT(a.bytes(), kSmall);
    }
    // The honest claim is read (4096 bytes is no whole cuckoo table of
    // 12-bit buckets, nor 2^32 - 1 ribbon blocks, nor a dense ribbon
    // filter): the cases above fail for their claim alone.
    if (c.honest_reads) {
      EXPECT_TRUE(
          FilterReader::Open(Claiming(c.kind, 4096, 4096, c.params)).valid())
          << FilterKindName(c.kind);
    }
  }
}

}  // namespace
}  // namespace sstfilter
