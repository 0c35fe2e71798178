// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The C API under allocation failure: this binary replaces the global
// operator new so that, while armed, every C++ allocation throws
// std::bad_alloc. Each C function must turn that into
// SSTFILTER_OUT_OF_MEMORY rather than let the exception escape (which,
// through a noexcept function, would terminate the test).

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>

#include "sstfilter/c.h"

namespace {
bool g_fail_new = false;
}  // namespace

void* operator new(std::size_t size) {
  if (g_fail_new) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// Not inlined: inlined into a new-expression, GCC would warn that memory
// from operator new reaches free(), which is this replacement's design.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
// The nothrow forms too: GoogleTest 1.15 (Debian 13) allocates with
// new (std::nothrow) and frees with plain delete, which must then pair.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (g_fail_new) return nullptr;
  return std::malloc(size == 0 ? 1 : size);
}
[[gnu::noinline]] void operator delete(void* p,
                                       const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace {

// Arms the failing allocator for its lifetime.
class FailAllocations {
 public:
  FailAllocations() { g_fail_new = true; }
  ~FailAllocations() { g_fail_new = false; }
};

TEST(CApiOomTest, CreateReportsOutOfMemory) {
  sstfilter_builder* b = nullptr;
  char* err = nullptr;
  sstfilter_code c;
  {
    FailAllocations armed;
    c = sstfilter_builder_create("bloom:10", &b, &err);
  }
  EXPECT_EQ(c, SSTFILTER_OUT_OF_MEMORY);
  EXPECT_EQ(b, nullptr);
  ASSERT_NE(err, nullptr);  // the message is malloc'ed, not new'ed
  EXPECT_STREQ(err, "out of memory");
  sstfilter_free(err);
}

TEST(CApiOomTest, AddKeyAndFinishReportOutOfMemory) {
  sstfilter_builder* b = nullptr;
  ASSERT_EQ(sstfilter_builder_create("blocked_bloom:10", &b, nullptr),
            SSTFILTER_OK);
  // Add keys while armed until the builder's hash list has to grow.
  sstfilter_code c = SSTFILTER_OK;
  size_t added = 0;
  {
    FailAllocations armed;
    for (int i = 0; i < 1 << 20 && c == SSTFILTER_OK; i++) {
      const uint64_t h =
          sstfilter_hash64(reinterpret_cast<const char*>(&i), sizeof(i), 0);
      c = sstfilter_builder_add_hash(b, h, nullptr);
      if (c == SSTFILTER_OK) added++;
    }
  }
  EXPECT_EQ(c, SSTFILTER_OUT_OF_MEMORY);
  EXPECT_EQ(sstfilter_builder_num_entries(b), added);

  // Finish needs memory for the bytes (more than a short string holds).
  for (int i = 0; i < 100; i++) {
    const std::string key = "key" + std::to_string(i);
    ASSERT_EQ(sstfilter_builder_add_key(b, key.data(), key.size(), nullptr),
              SSTFILTER_OK);
  }
  char* data = reinterpret_cast<char*>(1);
  size_t size = 7;
  char* err = nullptr;
  {
    FailAllocations armed;
    c = sstfilter_builder_finish(b, &data, &size, &err);
  }
  EXPECT_EQ(c, SSTFILTER_OUT_OF_MEMORY);
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_NE(err, nullptr);
  sstfilter_free(err);
  sstfilter_builder_destroy(b);
}

TEST(CApiOomTest, ReaderOpenReportsOutOfMemoryButQueriesNeedNone) {
  sstfilter_builder* b = nullptr;
  ASSERT_EQ(sstfilter_builder_create("bloom:10", &b, nullptr), SSTFILTER_OK);
  ASSERT_EQ(sstfilter_builder_add_key(b, "k", 1, nullptr), SSTFILTER_OK);
  char* data = nullptr;
  size_t size = 0;
  ASSERT_EQ(sstfilter_builder_finish(b, &data, &size, nullptr), SSTFILTER_OK);
  sstfilter_builder_destroy(b);

  sstfilter_reader* r = nullptr;
  ASSERT_EQ(sstfilter_reader_open(data, size, &r, nullptr), SSTFILTER_OK);
  sstfilter_reader* r2 = reinterpret_cast<sstfilter_reader*>(1);
  {
    FailAllocations armed;
    EXPECT_EQ(sstfilter_reader_open(data, size, &r2, nullptr),
              SSTFILTER_OUT_OF_MEMORY);
    // Queries allocate nothing, so they work while memory is exhausted.
    EXPECT_EQ(sstfilter_reader_may_match(r, "k", 1), 1);
    EXPECT_EQ(sstfilter_may_match(data, size, "k", 1), 1);
    const char* keys[1] = {"k"};
    size_t lens[1] = {1};
    unsigned char res[1] = {0};
    sstfilter_reader_may_match_batch(r, 1, keys, lens, res);
    EXPECT_EQ(res[0], 1);
  }
  EXPECT_EQ(r2, nullptr);
  sstfilter_reader_destroy(r);
  sstfilter_free(data);
}

TEST(CApiOomTest, MutableFiltersReportOutOfMemory) {
  for (int kind :
       {SSTFILTER_KIND_COUNTING_BLOOM, SSTFILTER_KIND_DYNAMIC_CUCKOO}) {
    sstfilter_mutable_options o;
    sstfilter_mutable_options_init(&o);
    o.capacity = 10000;
    sstfilter_mutable* m = reinterpret_cast<sstfilter_mutable*>(1);
    {
      FailAllocations armed;
      EXPECT_EQ(sstfilter_mutable_create(kind, &o, &m, nullptr),
                SSTFILTER_OUT_OF_MEMORY);
    }
    EXPECT_EQ(m, nullptr);
    ASSERT_EQ(sstfilter_mutable_create(kind, &o, &m, nullptr), SSTFILTER_OK);
    ASSERT_EQ(sstfilter_mutable_insert(m, "k", 1, nullptr), SSTFILTER_OK);
    char* data = reinterpret_cast<char*>(1);
    size_t size = 3;
    {
      FailAllocations armed;
      EXPECT_EQ(sstfilter_mutable_serialize(m, &data, &size, nullptr),
                SSTFILTER_OUT_OF_MEMORY);
      EXPECT_EQ(sstfilter_mutable_contains(m, "k", 1), 1);  // no allocation
    }
    EXPECT_EQ(data, nullptr);
    EXPECT_EQ(size, 0u);
    sstfilter_mutable_destroy(m);
  }
}

TEST(CApiOomTest, ErrorsWhileOutOfMemoryStillReturnCodes) {
  // Building the message of a bad spec needs memory too.
  char* err = nullptr;
  sstfilter_code c;
  {
    FailAllocations armed;
    c = sstfilter_spec_parse("bloom:not-a-number-at-all", nullptr, &err);
  }
  EXPECT_EQ(c, SSTFILTER_OUT_OF_MEMORY);
  sstfilter_free(err);
}

}  // namespace
