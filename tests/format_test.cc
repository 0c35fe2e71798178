// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The binary format: golden bytes (so it cannot change by accident), and
// every kind of damaged input reading as "may match" without a crash (the
// sanitized run of this suite proves no out-of-bounds read).

#include "policy/format.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/secret.h"
#include "tests/format_versions.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::AllMayMatch;
using test::Hex;
using test::Key;

TEST(FormatTest, GoldenEmptyFilter) {
  const std::string bytes =
      test::Unchecked(test::BuildFilter(test::MustParse("bloom:10"), 0));
  // payload_size 0, flags 0, check 0xdb, len 5, tag 0x10 (unchecked, kind 0).
  EXPECT_EQ(Hex(bytes), "0000db0510");
}

TEST(FormatTest, GoldenBloom) {
  const std::string bytes =
      test::Unchecked(test::BuildFilter(test::MustParse("bloom:10"), 3));
  // 4 payload bytes (30 bits rounded up), then payload_size 4, flags 0,
  // k = 7, check, len 6, tag 0x11 (unchecked, kind 1).
  EXPECT_EQ(Hex(bytes),
            "72e669ae"
            "04"
            "00"
            "07"
            "2a"
            "06"
            "11");
}

// The checked forms of format version 4, which writers now write (the
// tests above pin the bytes earlier versions wrote, and that they still
// read alike): the payloads are those above; a checked full trailer
// ends in check32 (u32le), len, tag 0x2k; a compact one has kind field
// kind | 8 and the payload's check (the CRC-7 of its fold) in its check.
TEST(FormatTest, GoldenCheckedForms) {
  struct Case {
    const char* spec;
    uint64_t n;
    size_t payload;       // bytes before the trailer
    const char* trailer;  // hex
  };
  const Case cases[] = {
      // empty: payload_size 0, flags 0, check32, len 8, tag 0x20
      {"bloom:10", 0, 0, "00007f6041680820"},
      // payload_size 4, flags 0, k 7, check32, len 9, tag 0x21
      {"bloom:10", 3, 4, "0400077956f86a0921"},
      // compact: w = 0xcb84, kind field 9 (bloom, checked), param 7
      {"bloom:10", 36, 45, "84cb"},
      {"bloom:10:seed=258", 3, 4, "0401020100000000000007cc8a18011121"},
      {"blocked_bloom:10", 1000, 1280, "800a0007102b338f0a22"},
      {"cuckoo:12", 1000, 1584, "b00c000c000599b1450b23"},
      // dense ribbon, 5 keys: a 16-byte compact dense filter (w = 0xf3d7,
      // kind field 14), not 5 bytes with a 14-byte checked full trailer
      {"ribbon:8.5", 5, 16, "d7f3"},
      // compact dense ribbon: w = 0xf4ae, kind field 14 (ribbon, checked);
      // r = 10 for the spec's FPR ceiling, 34 slots (earlier releases
      // wrote 33, 43 + "b1f4": CompactRibbonTest.GoldenSquareDenseRibbon-
      // AtTheFloor; before the ceiling r = 9, 41 + "4ef4":
      // CompactRibbonTest.GoldenCompactDenseRibbon)
      {"ribbon:10", 33, 44, "aef4"},
  };
  for (const Case& c : cases) {
    const std::string bytes = test::BuildFilter(test::MustParse(c.spec), c.n);
    ASSERT_GE(bytes.size(), c.payload) << c.spec;
    EXPECT_EQ(Hex(bytes.substr(c.payload)), c.trailer)
        << c.spec << " n=" << c.n;
    const FilterReader r = FilterReader::Open(bytes);
    EXPECT_TRUE(r.valid());
    EXPECT_EQ(r.payload_size(), c.payload);
  }
}

// Every one-bit error anywhere in a filter of every kind, either trailer
// form, reads as "may match" (format version 4; docs/FORMAT.md, "Damaged
// bytes"), for readers that keep a reader and for one-key queries.
TEST(FormatTest, EveryBitFlipIsCaught) {
  for (const std::string& spec : test::AllKindSpecs()) {
    for (uint64_t n : {20, 40, 300}) {
      const std::string bytes = test::BuildFilter(test::MustParse(spec), n);
      for (size_t bit = 0; bit < 8 * bytes.size(); bit++) {
        std::string bad = bytes;
        bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
        const FilterReader r = FilterReader::Open(bad);
        if (r.valid()) {
          // Only a compact form's w bit 14: the same answers.
          ASSERT_EQ(bit, 8 * bytes.size() - 2) << spec << " n=" << n;
          ASSERT_TRUE(AllMayMatch(bad, n));
          continue;
        }
        for (uint64_t i = 0; i < n; i++) {
          ASSERT_TRUE(FilterReader::MayMatchOnce(bad, Key(i)))
              << spec << " n=" << n << " bit " << bit;
        }
      }
    }
  }
}

// The one-key query LevelDB calls answers as an opened reader does, key for
// key: every kind, a seed, and keyed filters read with their secret (their
// own answers) and without it ("may match").
TEST(FormatTest, MayMatchOnceAnswersAsTheReader) {
  std::unique_ptr<const FilterSecret> secret;
  ASSERT_TRUE(
      NewFilterSecret("sstfilter test secret 0123456789", &secret).ok());
  std::vector<std::string> specs = test::AllKindSpecs();
  specs.push_back("ribbon:10:seed=7");
  specs.push_back("blocked_bloom:10:keyed");
  specs.push_back("ribbon:10:keyed");
  for (const std::string& spec : specs) {
    const FilterSpec fs = test::MustParse(spec);
    for (uint64_t n : {1, 40, 3000}) {
      const std::string bytes = test::BuildFilter(fs, n, secret.get());
      const FilterReader r = FilterReader::Open(bytes, secret.get());
      const FilterReader blind = FilterReader::Open(bytes);
      uint64_t no = 0;
      for (uint64_t i = 0; i < 20000; i++) {
        const std::string k = test::AbsentKey(i);
        const bool once = FilterReader::MayMatchOnce(bytes, k, secret.get());
        ASSERT_EQ(once, r.MayMatch(k)) << spec << " n=" << n << " key " << i;
        ASSERT_EQ(FilterReader::MayMatchOnce(bytes, k), blind.MayMatch(k))
            << spec << " n=" << n << " key " << i;
        no += once ? 0 : 1;
      }
      // Not vacuous: every one of these filters rejects most absent keys.
      EXPECT_GT(no, 19000u) << spec << " n=" << n;
    }
  }
}

TEST(FormatTest, GoldenBloomWithSeed) {
  const std::string bytes = test::Unchecked(
      test::BuildFilter(test::MustParse("bloom:10:seed=258"), 3));
  EXPECT_EQ(Hex(bytes),
            "07e66231"
            "04"
            "01"
            "0201000000000000"
            "07"
            "7f"
            "0e"
            "11");
}

TEST(FormatTest, GoldenBlockedBloom) {
  const std::string bytes = test::Unchecked(
      test::BuildFilter(test::MustParse("blocked_bloom:10"), 1000));
  // 1000 keys * 10 bits = 20 blocks of 64 bytes = 1280 payload bytes.
  ASSERT_EQ(bytes.size(), 1280u + 7);
  EXPECT_EQ(Hex(bytes.substr(1280)),
            "800a"
            "00"
            "07"
            "78"
            "07"
            "12");
  EXPECT_EQ(Hash64(bytes), 0x2b40ac655ed3fea2ull);
}

class CorruptionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorruptionTest, EveryTruncationMayMatch) {
  const FilterSpec spec = test::MustParse(GetParam());
  for (uint64_t n : {0, 1, 3, 36, 1000}) {
    const std::string bytes = test::BuildFilter(spec, n);
    for (size_t len = 0; len < bytes.size(); len++) {
      const std::string_view cut(bytes.data(), len);
      const FilterReader r = FilterReader::Open(cut);
      ASSERT_FALSE(r.valid()) << "n=" << n << " len=" << len;
      ASSERT_TRUE(r.MayMatch(Key(0)));
      ASSERT_TRUE(r.MayMatch("anything"));
    }
  }
}

TEST_P(CorruptionTest, TrailingOrLeadingJunkMayMatch) {
  const FilterSpec spec = test::MustParse(GetParam());
  const std::string bytes = test::BuildFilter(spec, 100);
  for (const std::string& junk :
       {std::string(1, '\0'), std::string("xyz"), std::string(64, '\xff')}) {
    EXPECT_FALSE(FilterReader::Open(bytes + junk).valid());
    EXPECT_FALSE(FilterReader::Open(junk + bytes).valid());
    EXPECT_TRUE(AllMayMatch(bytes + junk, 100));
  }
}

TEST_P(CorruptionTest, TrailerBitFlipsNeverLoseKeys) {
  const FilterSpec spec = test::MustParse(GetParam());
  for (uint64_t n : {0, 5, 1000}) {
    const std::string bytes = test::BuildFilter(spec, n);
    const size_t trailer = static_cast<uint8_t>(bytes[bytes.size() - 2]);
    for (size_t pos = bytes.size() - trailer; pos < bytes.size(); pos++) {
      for (int bit = 0; bit < 8; bit++) {
        std::string bad = bytes;
        bad[pos] ^= static_cast<char>(1 << bit);
        EXPECT_FALSE(FilterReader::Open(bad).valid())
            << "n=" << n << " pos=" << pos << " bit=" << bit;
        ASSERT_TRUE(AllMayMatch(bad, n));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, CorruptionTest,
                         ::testing::ValuesIn(test::AllKindSpecs()));

// Re-encodes the trailer of `bytes` with another tag, kind params, flags,
// and a correct check byte: a well-formed filter this reader cannot read.
std::string Reencode(const std::string& bytes, FilterKind kind,
                     std::string params) {
  internal::Trailer t;
  const auto* d = reinterpret_cast<const uint8_t*>(bytes.data());
  EXPECT_TRUE(internal::ParseTrailer(d, bytes.size(), &t));
  std::string out = bytes.substr(0, t.payload_size);
  t.kind = kind;
  t.params_size = params.size();
  std::copy(params.begin(), params.end(), t.params);
  internal::AppendTrailer(t, &out);
  return out;
}

TEST(FormatTest, WellFormedButUnreadableMayMatch) {
  const std::string bloom = test::BuildFilter(test::MustParse("bloom:10"), 64);
  ASSERT_TRUE(FilterReader::Open(Reencode(bloom, FilterKind::kBloom, "\x07"))
                  .valid());  // the re-encoder itself is faithful
  const std::pair<FilterKind, std::string> unreadable[] = {
      {static_cast<FilterKind>(9), "\x07"},          // unknown kind
      {static_cast<FilterKind>(15), ""},             // unknown kind
      {FilterKind::kBloom, std::string("\x00", 1)},  // zero probes
      {FilterKind::kBloom, "\x40"},                  // 64 probes
      {FilterKind::kBloom, "\x07\x07"},              // extra param byte
      {FilterKind::kBloom, ""},                      // missing param
      {FilterKind::kBlockedBloom, "\x06"},  // 80 bytes: not whole blocks
      {FilterKind::kEmpty, ""},             // empty with a payload
  };
  for (const auto& [kind, params] : unreadable) {
    const std::string bad = Reencode(bloom, kind, params);
    EXPECT_FALSE(FilterReader::Open(bad).valid())
        << static_cast<int>(kind) << " " << Hex(params);
    EXPECT_TRUE(AllMayMatch(bad, 64));
  }
  // Another format version, with a valid check byte.
  std::string v2 = bloom;
  v2.back() = static_cast<char>((v2.back() & 0x0f) | 0x20);
  internal::Trailer t;
  EXPECT_FALSE(internal::ParseTrailer(
      reinterpret_cast<const uint8_t*>(v2.data()), v2.size(), &t));
  EXPECT_FALSE(FilterReader::Open(v2).valid());
}

TEST(FormatTest, OtherFamiliesMayMatch) {
  // LevelDB's Bloom ends with its probe count; RocksDB's FastLocalBloom
  // ends with 5 metadata bytes starting 0xff. Neither reads as ours.
  std::string leveldb_like(100, '\x5a');
  leveldb_like += '\x06';
  std::string rocksdb_like(128, '\x33');
  rocksdb_like += std::string("\xff\x00\x06\x00\x00", 5);
  EXPECT_FALSE(FilterReader::Open(leveldb_like).valid());
  EXPECT_FALSE(FilterReader::Open(rocksdb_like).valid());
  EXPECT_TRUE(FilterReader::Open(rocksdb_like).MayMatch("k"));
}

TEST(FormatTest, RandomBytesNeverCrash) {
  std::mt19937_64 rng(20261130);
  int valid = 0;
  for (int i = 0; i < 20000; i++) {
    std::string s(rng() % 300, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    // Make some look like an unchecked full trailer to reach deeper checks.
    if (s.size() >= 2 && i % 2 == 0) {
      s.back() = static_cast<char>(0x10 | (rng() % 6));
      s[s.size() - 2] = static_cast<char>(5 + rng() % 20);
    }
    const FilterReader r = FilterReader::Open(s);
    valid += r.valid();
    bool out[3];
    const std::string key = Key(i);  // outlives the views below
    const std::string_view keys[3] = {"a", "b", key};
    r.MayMatch(3, keys, out);
    for (int j = 0; j < 3; j++) {
      const bool single = r.MayMatch(keys[j]);
      // Batched equals single; unreadable bytes match every key.
      EXPECT_EQ(out[j], single) << "bytes " << Hex(s) << " key " << keys[j];
      if (!r.valid()) {
        EXPECT_TRUE(single) << "bytes " << Hex(s) << " key " << keys[j];
      }
    }
  }
  // A random trailer passes its 8-bit check and every size check with
  // probability well under 1/1000.
  EXPECT_LE(valid, 5);
}

}  // namespace
}  // namespace sstfilter
