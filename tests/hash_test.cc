// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Hash64 is part of the on-disk format: these values must never change.

#include "sstfilter/hash.h"

#include <gtest/gtest.h>

#include <string>

namespace sstfilter {
namespace {

TEST(HashTest, GoldenValues) {
  // XXH3_64bits_withSeed values (xxHash 0.8); "" is the published
  // XXH3_64bits test vector 0x2D06800538D394C2.
  EXPECT_EQ(Hash64(""), 0x2d06800538d394c2ull);
  EXPECT_EQ(Hash64("a"), 0xe6c632b61e964e1full);
  EXPECT_EQ(Hash64("hello world"), 0xd447b1ea40e6988bull);
  EXPECT_EQ(Hash64("hello world", 42), 0x972a5725e93d338eull);
  EXPECT_EQ(Hash64(std::string(1000, 'x')), 0xc0a4877b962cba82ull);
}

TEST(HashTest, SeedAndEveryByteMatter) {
  const std::string base = "key-00000000042a";
  const uint64_t h = Hash64(base);
  EXPECT_NE(Hash64(base, 1), h);
  for (size_t i = 0; i < base.size(); i++) {
    std::string k = base;
    k[i] ^= 1;
    EXPECT_NE(Hash64(k), h) << i;
  }
  EXPECT_NE(Hash64(std::string_view("\0", 1)), Hash64(""));
}

}  // namespace
}  // namespace sstfilter
