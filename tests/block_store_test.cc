// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The example engine (examples/block_store.h) on disk: every stored key is
// found, and absent keys cost block reads only at the filters' FPR.

#include "examples/block_store.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "harness/scratch.h"
#include "sstfilter/params.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::Key;
using test::NeighbourKey;

// A folder of this process's own ($TMPDIR/block_store_test.XXXXXX), so
// that concurrent runs of the test never share files; removed at exit.
const std::string& ScratchPath() {
  static const harness::ScratchDir dir("block_store_test");
  return dir.path();
}

class BlockStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string Path() const {
    std::string name =
        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    return ScratchPath() + "/" + name + ".db";
  }
  static std::string Value(uint64_t i) {
    return "value-" + std::to_string(i) + std::string(40, 'v');
  }
  void Write(const std::string& path, uint64_t n) {
    block_store::Writer w;
    ASSERT_TRUE(w.Open(path, GetParam()).ok());
    for (uint64_t i = 0; i < n; i++) w.Add(Key(i), Value(i));
    ASSERT_TRUE(w.Finish());
  }
};

TEST_P(BlockStoreTest, FindsEveryKeyAndSkipsAbsentBlocks) {
  const uint64_t n = 20000;
  const std::string path = Path();
  Write(path, n);
  block_store::Store store;
  ASSERT_TRUE(store.Open(path));
  // 16-byte keys and ~50-byte values in 4 KiB blocks: ~55 keys per block,
  // LevelDB-sized filters.
  ASSERT_GT(store.num_blocks(), 300u);
  ASSERT_LT(store.num_blocks(), 500u);

  // Zero false negatives: every key is found, with one block read each.
  std::string value;
  for (uint64_t i = 0; i < n; i++) {
    ASSERT_TRUE(store.Get(Key(i), &value)) << i;
    ASSERT_EQ(value, Value(i));
  }
  EXPECT_EQ(store.stats().blocks_read, n);
  EXPECT_EQ(store.stats().blocks_skipped, 0u);

  // Absent keys inside the key range: each reaches one block's filter and
  // is read only on a false positive of that filter.
  const block_store::Stats before = store.stats();
  for (uint64_t i = 0; i < n; i++) {
    ASSERT_FALSE(store.Get(NeighbourKey(i), &value)) << i;
  }
  const uint64_t checks = store.stats().filter_checks - before.filter_checks;
  const uint64_t reads = store.stats().blocks_read - before.blocks_read;
  const uint64_t skipped = store.stats().blocks_skipped - before.blocks_skipped;
  EXPECT_EQ(checks, n - 1);  // the last neighbour is past the last key
  EXPECT_EQ(reads + skipped, checks);

  // The expected FPR of a filter of an average block's keys.
  FilterParams p;
  ASSERT_TRUE(
      ParamsForSpec(test::MustParse(GetParam()), n / store.num_blocks(), &p)
          .ok());
  const double expected = p.expected_fpr * static_cast<double>(checks);
  std::printf(
      "%s: %zu blocks, %llu absent lookups, %llu block reads "
      "(expected %.1f = FPR %.4f%% x checks), %llu reads saved\n",
      GetParam().c_str(), store.num_blocks(),
      static_cast<unsigned long long>(checks),
      static_cast<unsigned long long>(reads), expected, 100 * p.expected_fpr,
      static_cast<unsigned long long>(skipped));
  // Close to FPR x checks: fixed keys, so these bounds never flake.
  EXPECT_LE(reads, 1.3 * expected + 10);
  EXPECT_GE(reads, 0.5 * expected);

  // Keys outside the range need neither filter nor read.
  const block_store::Stats outside = store.stats();
  EXPECT_FALSE(store.Get("zzz", &value));
  EXPECT_EQ(store.stats().filter_checks, outside.filter_checks);
  std::remove(path.c_str());
}

TEST_P(BlockStoreTest, EmptyAndTinyStores) {
  const std::string path = Path();
  Write(path, 0);
  {
    block_store::Store store;
    ASSERT_TRUE(store.Open(path));
    std::string value;
    EXPECT_EQ(store.num_blocks(), 0u);
    EXPECT_FALSE(store.Get(Key(0), &value));
  }
  Write(path, 1);
  block_store::Store store;
  ASSERT_TRUE(store.Open(path));
  std::string value;
  EXPECT_TRUE(store.Get(Key(0), &value));
  EXPECT_EQ(value, Value(0));
  std::remove(path.c_str());
}

TEST_P(BlockStoreTest, DamagedFilesFailToOpen) {
  const std::string path = Path();
  Write(path, 200);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 100u);
  // Every truncation either fails to open or, if it happens to parse,
  // never crashes a lookup; most must fail.
  int opened = 0;
  for (size_t len = 0; len < bytes.size(); len += 29) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(len));
    }
    block_store::Store store;
    if (store.Open(path)) {
      opened++;
      std::string value;
      store.Get(Key(1), &value);
    }
  }
  EXPECT_LT(opened, 3);
  block_store::Store missing;
  EXPECT_FALSE(missing.Open(path + ".does-not-exist"));
  std::remove(path.c_str());
}

TEST(BlockStoreSpecTest, BadSpecIsAnError) {
  block_store::Writer w;
  Status s = w.Open(ScratchPath() + "/bad.db", "bloom:0");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bits per key"), std::string::npos)
      << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(AllKinds, BlockStoreTest,
                         ::testing::ValuesIn(test::AllKindSpecs()));

}  // namespace
}  // namespace sstfilter
