// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Keyed filters (FilterSecret, spec options "keyed" and "salt"): the
// secret, the spec options, the format (golden bytes, a decoder written
// from docs/FORMAT.md, earlier readers' answer), and the no-false-negative
// rule for every reader: with the secret, without it, with another one.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policy/format.h"
#include "policy/primitives.h"
#include "policy/ribbon/ribbon.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/mutable.h"
#include "sstfilter/secret.h"
#include "tests/format_versions.h"
#include "tests/test_util.h"

// The decoder below uses xxHash directly, as a second implementation would.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sstfilter {
namespace {

using test::FromHex;
using test::Hex;
using test::Key;
using test::MustParse;

// The fixed secret of every keyed golden byte: 32 ASCII bytes.
constexpr char kTestSecret[] = "sstfilter test secret 0123456789";

std::unique_ptr<const FilterSecret> MustSecret(std::string_view bytes) {
  std::unique_ptr<const FilterSecret> s;
  if (!NewFilterSecret(bytes, &s).ok()) abort();
  return s;
}

TEST(FilterSecretTest, ShortSecretIsRefused) {
  std::unique_ptr<const FilterSecret> s;
  const Status st = NewFilterSecret("fifteen bytes!!", &s);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("at least 16 bytes, got 15"), std::string::npos)
      << st.message();
  EXPECT_EQ(s, nullptr);
  EXPECT_TRUE(NewFilterSecret("sixteen bytes!!!", &s).ok());
}

TEST(FilterSecretTest, GoldenHashAndKeyId) {
  const auto s = MustSecret(kTestSecret);
  // xxHash's own derivation and keyed hash, as docs/FORMAT.md states them.
  unsigned char derived[FilterSecret::kDerivedBytes];
  ASSERT_EQ(XXH3_generateSecret(derived, sizeof(derived), kTestSecret,
                                sizeof(kTestSecret) - 1),
            XXH_OK);
  const uint64_t h = XXH3_64bits_withSecret("apple", 5, derived, 192);
  EXPECT_EQ(s->Hash("apple", 0), h);
  EXPECT_EQ(s->Hash("apple", 7), internal::Mix64(h ^ 7));
  EXPECT_EQ(s->key_id(), static_cast<uint32_t>(XXH3_64bits_withSecret(
                             "sstfilter.key_id", 16, derived, 192)));
  // Pinned: the keyed hash is part of the format.
  EXPECT_EQ(s->Hash("apple", 0), 6048584571002076151ull);
  EXPECT_EQ(s->key_id(), 0x1fa75097u);
  EXPECT_NE(s->Hash("apple", 0), Hash64("apple", 0));
  EXPECT_NE(MustSecret("sstfilter test secret 0123456788")->key_id(),
            s->key_id());
}

TEST(FilterSecretTest, ReadFromFile) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/keyed_test_secret";
  const std::string shorter = dir + "/keyed_test_short_secret";
  FILE* f = fopen(good.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  fputs(kTestSecret, f);
  fclose(f);
  f = fopen(shorter.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  fputs("short\n", f);
  fclose(f);
  std::unique_ptr<const FilterSecret> s;
  ASSERT_TRUE(ReadFilterSecretFile(good, &s).ok());
  EXPECT_EQ(s->key_id(), MustSecret(kTestSecret)->key_id());
  Status st = ReadFilterSecretFile(shorter, &s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(shorter), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("got 6"), std::string::npos) << st.message();
  st = ReadFilterSecretFile(dir + "/no_such_secret_file", &s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no_such_secret_file"), std::string::npos);
}

TEST(KeyedSpecTest, ParseAndRoundTrip) {
  for (const char* text :
       {"bloom:10:keyed", "blocked_bloom:10:salt", "cuckoo:12:keyed:salt",
        "ribbon:10:seed=7:keyed", "blocked_bloom:10:keyed:salt:by_level"}) {
    FilterSpec spec;
    ASSERT_TRUE(ParseFilterSpec(text, &spec).ok()) << text;
    EXPECT_EQ(spec.ToString(), text);
    FilterSpec again;
    ASSERT_TRUE(ParseFilterSpec(spec.ToString(), &again).ok());
    EXPECT_EQ(again, spec);
  }
  FilterSpec spec;
  ASSERT_TRUE(ParseFilterSpec("bloom:10:salt:keyed", &spec).ok());
  EXPECT_TRUE(spec.keyed && spec.salt);
  EXPECT_EQ(spec.ToString(), "bloom:10:keyed:salt");
}

TEST(KeyedSpecTest, Errors) {
  FilterSpec spec;
  Status s = ParseFilterSpec("bloom:10:salt:seed=7", &spec);
  EXPECT_NE(s.message().find("excludes seed=7"), std::string::npos)
      << s.message();
  s = ParseFilterSpec("bloom:10:keyed=1", &spec);
  EXPECT_NE(s.message().find("unknown option \"keyed=1\""), std::string::npos)
      << s.message();
  s = ParseFilterSpec("bloom:10:keyed:keyed", &spec);
  EXPECT_NE(s.message().find("given twice"), std::string::npos);
  spec = MustParse("bloom:10");
  spec.salt = true;
  spec.seed = 3;
  EXPECT_FALSE(spec.Validate().ok());
}

TEST(KeyedBuilderTest, KeyedSpecWithoutSecretFails) {
  std::unique_ptr<FilterBuilder> b;
  const Status s = NewFilterBuilder(MustParse("bloom:10:keyed"), &b);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("\"bloom:10:keyed\" is keyed"), std::string::npos)
      << s.message();
  EXPECT_EQ(b, nullptr);
}

// A keyed Bloom filter of Key(0..2): payload, then the full trailer with
// flags 2 (keyed) and the u32le key id before k.
TEST(KeyedFormatTest, GoldenKeyedBloom) {
  const auto secret = MustSecret(kTestSecret);
  const std::string bytes = test::Unchecked(
      test::BuildFilter(MustParse("bloom:10:keyed"), 3, secret.get()),
      secret.get());
  EXPECT_EQ(Hex(bytes),
            "af372e43"  // payload: 4 bytes
            "04"        // payload_size
            "02"        // flags: keyed, no seed
            "9750a71f"  // key id 0x1fa75097, little-endian
            "07"        // k
            "6a"        // check
            "0a"        // len
            "11");      // tag: unchecked, kind 1
  const std::string big =
      test::Unchecked(test::BuildFilter(MustParse("blocked_bloom:10:keyed"),
                                        1000, secret.get()),
                      secret.get());
  // 19 blocks and the 11-byte trailer would pass the size bound
  // floor(n b / 8) + 40 = 1290 bytes (docs/FORMAT.md), but at 9.73 bits
  // per key miss the spec's FPR ceiling (1.1 times its FPR at 2^20 keys):
  // 20 blocks, one byte past the bound.
  ASSERT_EQ(big.size(), 1280u + 11);
  EXPECT_EQ(Hex(big.substr(1280)),
            "800a"  // payload_size 1280
            "02"
            "9750a71f"
            "07"  // k
            "40"
            "0b"
            "12");  // tag: unchecked, kind 2
  EXPECT_EQ(Hash64(big), 11389742648683226772ull);
}

// The 19-block filter of the same keys that releases before the FPR
// ceiling wrote (payload_size 1216), with the checked full trailer of
// format version 4 and the unchecked one of earlier versions: both still read,
// with the same answers.
constexpr char kKeyedBlockedPayload1000[] =
    "eb1fd406ec78d6627c416dc7e0b0536d19845cfd371c9ea530bec7effa11d0790addaf03"
    "7ef0cbba89272e633e88d5d9e352558cd66bb4b55dd4f51ecf44db85bc7e661ad997dd51"
    "f4df33a981f775a26cf8cd025432e5d7c3ea02d94aff57454b2ab04ce03817ede6dd9d4d"
    "40611f5e3e92761188eaf14da82c10745bdf801bcb2455f9502f8cb5503fcfd0d9abd68f"
    "ea24363d4acc6b635200f3f6d20404cb44a0048eccce42fc97879a809f8c78dff350efaa"
    "85118d5c3fc6d2e8a6e285e9fe26b7b89bfb0a77134fb85d4c22aec1ff94fce7b38749b1"
    "b73db41fa069ef114b8ade535cd69704448531c9d997ffcad1f621165b26cb3247a29d36"
    "31e7f611fc5189daeed82bee9eb25e2da43b895782f07bf7d93f7f3454e010cac36c66a6"
    "a794584ae6c8dad92a0825e93d5d8b72cad1ea80fe2c0dcc55cd5ac9eab3f9d5dd82f387"
    "ec42acac315a3666838f6056edfd02b7971e4af5982d60e367e751ccd24fce00848da64a"
    "8081f719d456bacaea0b5be17d54f806139822ed96f2091efdcf29213a0fe53760530e11"
    "e9434b392fe2aa8f24ec1a85d2310ee0807be752e7b4790b59e8dfe6aa866b03018b5aaf"
    "2ead62118e0986f49ce3a017318d6a7379cecb5204878d19a9cbeaef184b6cc1ba8d461c"
    "673c185ffb8f5fda8bd6c6af5d30d2a6268d31a7711ba1e11d3b90a8283888389bc4e69a"
    "87025371b49354aa389efe306c8a7cec95bf687ffb96ceed6597181dc1d7996afbff4b99"
    "d31dfac9ebfb937c33ea429aa4f4bdc943e0a13bb6bd4875b3d44bcb1adaba4b32afa9c5"
    "76f27e3f03594bf92c682ae5e08d4fbaaa1216398f0005b34708b775771e7429b5a5487b"
    "f10bd91b2c10d043706329041c7e5401ba3a20f181a259685b89b87d9c9f461e9acf63e3"
    "c75f69ec96f9fcf8de1fd44a91f0d7c11b53d3bf374c683d5f5a5b8ddd097fe14d265d5e"
    "b7b3e3c8a8c6d59b96776c6fe6b11f7a15f08d7c14a8b4771070a1fcd1ba80eea3205407"
    "9a59e1c461359c63879c27b73542ed10bb6ac8102c73d1acc06903296614377d259c56dc"
    "7a10be5a507e416aea416aa03dcbc6eb65211b6d8527064b9e9635e34117a4045068523e"
    "4ae490e53610e6acc6bf9c1db0db117279a7a1c337c4f787b994e09dec04cf711c4194e7"
    "d00d0599e16b157d478e332501d0ee087f2fbb6a3037f342db70017a508da0bf00f4cd16"
    "b9cb9de580a97a77a79eca36d8c89b5c5cf7e81354a630d693f0ecfba9acdafd6df7a776"
    "14f2f087bde9fc67f382fd3ecfa5d5064c5087066ed6667094c8cdd61586c25256daabc7"
    "b7edf430bd96f8664e34bfcc31bb954fb768f8183e2d894ca840d404be01035ce6926630"
    "1345a0415331e08680b95c27631de6fdf8954a1d1b8a71a4562c39c6858844bc8f7799a4"
    "8d299e05bb3e1cb9b48abb474a679950bf6d9108d45ebcfb67cc3cf21a495e674abba310"
    "0d2cc28b0f2c579d15f553f17e5f3e747ce08988dc69a99ea987088e37f9abb5587142d8"
    "b6d2be8822e6196f44b65c9b33553b91e8e36f2feddb6ef7e16f8fd3ea334d9e4eb2a976"
    "26363e8fbe8731bd251fa114a31f2dd16162f4b4934f1fabafdf44e8ef7648593a599867"
    "2db302fdcc0eef334df12b75a34a6f4eab3f7d1b5a3f675615004b282f6fdfb5a61bb1f1"
    "b85bedf1b7efdbe31987a9f04adee7dcb136ffbfa7c017d8d29e221f";

TEST(KeyedFormatTest, GoldenKeyedBlockedBloomOfEarlierReleases) {
  const auto secret = MustSecret(kTestSecret);
  const std::string payload = FromHex(kKeyedBlockedPayload1000);
  ASSERT_EQ(payload.size(), 1216u);
  EXPECT_EQ(Hash64(payload + FromHex("c009029750a71f07a40b12")),
            4348781299143868030ull);
  for (const char* trailer :
       {"c009029750a71f07b644150b0e22", "c009029750a71f07a40b12"}) {
    const std::string bytes = payload + FromHex(trailer);
    const FilterReader r = FilterReader::Open(bytes, secret.get());
    ASSERT_TRUE(r.valid()) << trailer;
    EXPECT_EQ(r.kind(), FilterKind::kBlockedBloom);
    for (uint64_t i = 0; i < 1000; i++) {
      ASSERT_TRUE(r.MayMatch(Key(i))) << trailer << " " << i;
    }
    int matches = 0;
    std::string first;
    for (uint64_t i = 0; i < 100000; i++) {
      if (!r.MayMatch(test::AbsentKey(i))) continue;
      if (++matches <= 20) first += std::to_string(i) + ",";
    }
    EXPECT_EQ(matches, 1023) << trailer;
    EXPECT_EQ(first,
              "180,307,332,337,362,390,701,906,946,964,1099,1196,1466,1541,"
              "1587,1600,1627,1634,1718,1743,")
        << trailer;
  }
}

// Decodes a keyed standard Bloom filter as docs/FORMAT.md describes it,
// with xxHash alone: full trailer, flags bit 1, key id, k; then the probes
// of the keyed hash.
bool DocDecodeKeyedBloom(const std::string& f, std::string_view secret,
                         std::string_view key) {
  const auto* d = reinterpret_cast<const uint8_t*>(f.data());
  const size_t len = d[f.size() - 2];
  const uint8_t* body = d + f.size() - len;
  EXPECT_EQ(d[f.size() - 1], 0x11);    // tag: unchecked, kind 1
  EXPECT_LT(body[0], 0x80);            // payload_size: one varint byte
  EXPECT_EQ(body[0], f.size() - len);  // ... that matches
  EXPECT_EQ(body[1], 2);               // flags: keyed, no seed
  const uint32_t key_id = internal::DecodeFixed32(body + 2);
  const int k = body[6];
  unsigned char derived[192];
  XXH3_generateSecret(derived, 192, secret.data(), secret.size());
  EXPECT_EQ(key_id, static_cast<uint32_t>(XXH3_64bits_withSecret(
                        "sstfilter.key_id", 16, derived, 192)));
  uint64_t x = XXH3_64bits_withSecret(key.data(), key.size(), derived, 192);
  const uint64_t m = 8 * uint64_t{body[0]};
  for (int i = 0; i < k; i++, x *= 0x9E3779B97F4A7C15ull) {
    const uint64_t bit =
        static_cast<uint64_t>((static_cast<unsigned __int128>(x) * m) >> 64);
    if (((d[bit / 8] >> (bit % 8)) & 1) == 0) return false;
  }
  return true;
}

TEST(KeyedFormatTest, DecoderFromTheDocument) {
  const auto secret = MustSecret(kTestSecret);
  const FilterSpec spec = MustParse("bloom:10:keyed");
  // The unchecked trailer of version 3 (the checked one: the cuckoo and
  // ribbon decoders below).
  const std::string f =
      test::Unchecked(test::BuildFilter(spec, 60, secret.get()), secret.get());
  const FilterReader r = FilterReader::Open(f, secret.get());
  ASSERT_TRUE(r.valid());
  int agree = 0;
  for (uint64_t i = 0; i < 2000; i++) {
    const std::string key = Key(i);
    const bool doc = DocDecodeKeyedBloom(f, kTestSecret, key);
    if (i < 60) {
      EXPECT_TRUE(doc) << i;
    }
    agree += doc == r.MayMatch(key);
  }
  EXPECT_EQ(agree, 2000);
}

// The full trailer of a keyed filter as docs/FORMAT.md describes it: the
// payload size (varint), flags 2, the key id of `secret`, then the kind's
// params; `S` is the derived 192-byte secret.
struct DocKeyedTrailer {
  uint64_t payload_size = 0;
  const uint8_t* params = nullptr;
  size_t params_size = 0;
  unsigned char S[192];
};

DocKeyedTrailer DocReadKeyedTrailer(const std::string& f, int kind,
                                    std::string_view secret) {
  DocKeyedTrailer t;
  const auto* d = reinterpret_cast<const uint8_t*>(f.data());
  const size_t len = d[f.size() - 2];
  // tag: high nibble 1 (unchecked: u8 check) or 2 (checked: u32le check),
  // kind
  const int version = d[f.size() - 1] >> 4;
  EXPECT_TRUE(version == 1 || version == 2);
  EXPECT_EQ(d[f.size() - 1] & 15, kind);
  if (version == 2) {
    EXPECT_EQ(internal::DecodeFixed32(d + f.size() - 6),
              static_cast<uint32_t>(XXH3_64bits_withSeed(
                  d, f.size() - 6, len << 8 | (32 | kind))));
  }
  const uint8_t* p = d + f.size() - len;
  int shift = 0;
  do {
    t.payload_size |= uint64_t{*p & 0x7fu} << shift;
    shift += 7;
  } while (*p++ & 0x80);
  EXPECT_EQ(t.payload_size, f.size() - len);
  EXPECT_EQ(*p++, 2);  // flags: keyed, no seed
  XXH3_generateSecret(t.S, sizeof(t.S), secret.data(), secret.size());
  EXPECT_EQ(internal::DecodeFixed32(p),
            static_cast<uint32_t>(XXH3_64bits_withSecret("sstfilter.key_id", 16,
                                                         t.S, sizeof(t.S))));
  t.params = p + 4;
  t.params_size = d + f.size() - (version == 2 ? 6 : 3) -
                  t.params;  // before check, len, tag
  return t;
}

uint64_t DocFastRange(uint64_t h, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

uint64_t DocMix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  return x ^ (x >> 33);
}

// Payload bits [pos, pos + n) as a number, LSB-first (n <= 64).
uint64_t DocBits(const std::string& f, uint64_t pos, int n) {
  uint64_t v = 0;
  for (int x = 0; x < n; x++) {
    const uint64_t j = pos + x;
    v |= uint64_t{(static_cast<uint8_t>(f[j / 8]) >> (j % 8)) & 1u} << x;
  }
  return v;
}

// Kind 3 (section "3: cuckoo") with the keyed hash.
bool DocDecodeKeyedCuckoo(const std::string& f, std::string_view secret,
                          std::string_view key) {
  const DocKeyedTrailer t = DocReadKeyedTrailer(f, 3, secret);
  EXPECT_EQ(t.params_size, 2u);
  const int fbits = t.params[0];
  const uint64_t salt = t.params[1];
  const uint64_t n = 2 * t.payload_size / fbits;
  const uint64_t h =
      XXH3_64bits_withSecret(key.data(), key.size(), t.S, sizeof(t.S));
  const uint64_t x = salt == 0 ? h : DocMix64(h + salt * 0x9E3779B97F4A7C15ull);
  const uint64_t b1 = DocFastRange(x, n);
  const uint64_t tag =
      1 + (((x & 0xffffffffu) * ((uint64_t{1} << fbits) - 1)) >> 32);
  const uint64_t c = DocFastRange(tag * 0x9E3779B97F4A7C15ull, n);
  const uint64_t b2 = (c + n - b1) % n;
  for (uint64_t b : {b1, b2}) {
    for (int j = 0; j < 4; j++) {
      if (DocBits(f, 4 * fbits * b + fbits * j, fbits) == tag) return true;
    }
  }
  return false;
}

// Kind 6 (section "6: ribbon"), dense and banded forms, with the keyed hash.
bool DocDecodeKeyedRibbon(const std::string& f, std::string_view secret,
                          std::string_view key) {
  const DocKeyedTrailer t = DocReadKeyedTrailer(f, 6, secret);
  const int form = t.params[0];
  const uint64_t salt = t.params[1];
  const uint64_t h =
      XXH3_64bits_withSecret(key.data(), key.size(), t.S, sizeof(t.S));
  const uint64_t a = h ^ (salt * 0x9E3779B97F4A7C15ull);
  uint64_t x = a * 0xbf58476d1ce4e5b9ull;
  x ^= x >> 28;
  x *= 0x94d049bb133111ebull;
  const uint64_t row = x ^ (x >> 31);
  const uint64_t fp = (a * 0xd6e8feb86659fd93ull) >> 32;
  if (form == 0) {
    EXPECT_EQ(t.params_size, 6u);
    const int m = t.params[2], r = t.params[3];
    const uint64_t row_m = m == 64 ? row : row & ((uint64_t{1} << m) - 1);
    for (int j = 0; j < r; j++) {
      const uint64_t col = DocBits(f, uint64_t{1} * j * m, m);
      if (static_cast<uint64_t>(__builtin_parityll(row_m & col)) !=
          ((fp >> j) & 1)) {
        return false;
      }
    }
    return true;
  }
  EXPECT_EQ(form, 1);
  EXPECT_EQ(t.params_size, 6u);
  const uint64_t blocks = internal::DecodeFixed32(t.params + 2);
  const uint64_t words = t.payload_size / 8;
  const uint64_t r = words / blocks, k = words % blocks;
  const uint64_t start = DocFastRange(a, 64 * (blocks - 1));
  const uint64_t q = start / 64, o = start % 64;
  auto first_word = [&](uint64_t b) {
    return b * r + (b > blocks - k ? b - (blocks - k) : 0);
  };
  const uint64_t cols = q >= blocks - k ? r + 1 : r;
  for (uint64_t j = 0; j < cols; j++) {
    const uint64_t lo = DocBits(f, 64 * (first_word(q) + j), 64);
    const uint64_t hi = DocBits(f, 64 * (first_word(q + 1) + j), 64);
    const uint64_t seg = (lo >> o) | (o == 0 ? 0 : hi << (64 - o));
    if (static_cast<uint64_t>(__builtin_parityll(seg & (row | 1))) !=
        ((fp >> j) & 1)) {
      return false;
    }
  }
  return true;
}

// Keyed cuckoo and keyed ribbon (both forms) against the decoders above,
// with golden trailers.

// The banded ribbon form (form 1), which builders wrote for n > 64 keys
// before the segmented form, for keys Key(0..n): the builder's keyed hashes,
// the banded construction, and the secret's key id.
std::string BuildKeyedBanded(const FilterSpec& spec, uint64_t n,
                             const FilterSecret& secret) {
  internal::HashList hashes;
  for (uint64_t i = 0; i < n; i++) hashes.push_back(secret.Hash(Key(i), 0));
  internal::RibbonBuildOptions banded;
  banded.segmented = false;
  std::string f;
  internal::AppendRibbonFilter(spec, hashes, &f, banded);
  internal::SetTrailerKeyId(secret.key_id(), 0, &f);
  return f;
}

TEST(KeyedFormatTest, CuckooAndRibbonDecodersFromTheDocument) {
  const auto secret = MustSecret(kTestSecret);
  struct Case {
    const char* spec;
    uint64_t n;
    bool (*decode)(const std::string&, std::string_view, std::string_view);
    const char* trailer;  // hex, from payload_size on
    uint64_t hash;        // Hash64 of the whole filter
    bool banded = false;  // ribbon's banded form (form 1), not segmented
  };
  const Case cases[] = {
      // payload_size 1584, flags 2, key id, f 12, salt 0, check, len, tag.
      {"cuckoo:12:keyed", 1000, DocDecodeKeyedCuckoo,
       "b00c"
       "02"
       "9750a71f"
       "0c00"
       "d7"
       "0c"
       "13",
       12100570522900339400ull},
      // Dense: payload_size 52, m 41 (a spare slot), r 10.
      {"ribbon:10:keyed", 40, DocDecodeKeyedRibbon,
       "34"
       "02"
       "9750a71f"
       "0000290a0000"
       "ef"
       "0f"
       "16",
       14655855782755566020ull},
      // Banded: payload_size 2496 (312 words), 34 blocks: r 9, k 6.
      {"ribbon:10:keyed", 2000, DocDecodeKeyedRibbon,
       "c013"
       "02"
       "9750a71f"
       "010022000000"
       "35"
       "10"
       "16",
       8331252171500696572ull, /*banded=*/true},
  };
  for (const Case& c : cases) {
    const std::string checked =
        c.banded ? BuildKeyedBanded(MustParse(c.spec), c.n, *secret)
                 : test::BuildFilter(MustParse(c.spec), c.n, secret.get());
    const std::string f = test::Unchecked(checked, secret.get());
    const FilterReader r = FilterReader::Open(f, secret.get());
    ASSERT_TRUE(r.valid()) << c.spec;
    const auto* d = reinterpret_cast<const uint8_t*>(f.data());
    const size_t len = d[f.size() - 2];
    EXPECT_EQ(Hex(f.substr(f.size() - len)), c.trailer) << c.spec;
    EXPECT_EQ(Hash64(f), c.hash) << c.spec;
    int agree = 0;
    for (uint64_t i = 0; i < 20000; i++) {
      const std::string key = i < c.n ? Key(i) : test::AbsentKey(i);
      const bool doc = c.decode(f, kTestSecret, key);
      if (i < c.n) {
        EXPECT_TRUE(doc) << c.spec << " " << i;
      }
      agree +=
          doc == r.MayMatch(key) && c.decode(checked, kTestSecret, key) == doc;
    }
    EXPECT_EQ(agree, 20000) << c.spec << " n=" << c.n;
  }
}

// Earlier readers (format version 2) accept flags with no bit but bit 0
// (docs/FORMAT.md, rule 4 of version 2): a keyed filter's flags byte has
// bit 1 set, so they answer "may match" for every key.
TEST(KeyedFormatTest, EarlierReadersMayMatch) {
  const auto secret = MustSecret(kTestSecret);
  for (const std::string& text : test::AllKindSpecs()) {
    for (uint64_t n : {0, 1, 20, 1000}) {
      const std::string f =
          test::BuildFilter(MustParse(text + ":keyed"), n, secret.get());
      const auto* d = reinterpret_cast<const uint8_t*>(f.data());
      ASSERT_LT(d[f.size() - 1], 0x80) << "never the compact trailer";
      internal::Trailer t;
      ASSERT_TRUE(internal::ParseTrailer(d, f.size(), &t));
      ASSERT_TRUE(t.keyed);
      // The flags byte follows the payload_size varint.
      const uint8_t* body = d + f.size() - d[f.size() - 2];
      size_t pos = 0;
      while (body[pos] & 0x80) pos++;
      const uint8_t flags = body[pos + 1];
      EXPECT_EQ(flags, internal::kFlagKeyed);
      EXPECT_NE(flags & ~1, 0) << "a version-2 reader refuses this";
    }
  }
}

class KeyedFilterTest : public ::testing::TestWithParam<std::string> {};

// With the secret every key matches; without it, or with another secret,
// every key may match (never a false negative); sizes are as predicted.
TEST_P(KeyedFilterTest, EveryReaderKeepsEveryKey) {
  const auto secret = MustSecret(kTestSecret);
  const auto other = MustSecret("another secret, also 32 bytes!!!");
  for (const char* opts : {":keyed", ":keyed:salt", ":salt"}) {
    const FilterSpec spec = MustParse(GetParam() + opts);
    for (uint64_t n : {0, 1, 12, 36, 100, 3000}) {
      std::unique_ptr<FilterBuilder> b;
      ASSERT_TRUE(NewFilterBuilder(spec, &b, secret.get()).ok());
      for (uint64_t i = 0; i < n; i++) b->AddKey(Key(i));
      const size_t predicted = b->FilterSize(b->NumEntries());
      const uint64_t seed = b->seed();
      std::string f;
      b->Finish(&f);
      EXPECT_EQ(f.size(), predicted) << spec.ToString() << " n=" << n;
      EXPECT_EQ(spec.salt, seed != 0);
      if (spec.salt) {
        EXPECT_NE(b->seed(), seed) << "a fresh seed per filter";
      }
      const FilterReader r = FilterReader::Open(f, secret.get());
      ASSERT_TRUE(r.valid()) << spec.ToString() << " n=" << n;
      EXPECT_EQ(r.seed(), seed);
      for (uint64_t i = 0; i < n; i++) ASSERT_TRUE(r.MayMatch(Key(i))) << i;
      if (!spec.keyed) continue;
      for (const FilterSecret* s :
           {other.get(), (const FilterSecret*)nullptr}) {
        const FilterReader blind = FilterReader::Open(f, s);
        EXPECT_FALSE(blind.valid());
        EXPECT_TRUE(blind.MayMatch(Key(0)));
        EXPECT_TRUE(blind.MayMatch(test::AbsentKey(0)));
      }
    }
  }
}

// A keyed filter's batched queries hash with the secret, as single ones
// do; a reader without it matches every key of a batch.
TEST_P(KeyedFilterTest, BatchedMatchesSingle) {
  const auto secret = MustSecret(kTestSecret);
  const FilterSpec spec = MustParse(GetParam() + ":keyed:salt");
  std::unique_ptr<FilterBuilder> b;
  ASSERT_TRUE(NewFilterBuilder(spec, &b, secret.get()).ok());
  for (uint64_t i = 0; i < 3000; i++) b->AddKey(Key(i));
  std::string f;
  b->Finish(&f);
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < 500; i++) {
    keys.push_back(Key(i * 5));
    keys.push_back(test::AbsentKey(i));
  }
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  std::unique_ptr<bool[]> batched(new bool[views.size()]);
  const FilterReader r = FilterReader::Open(f, secret.get());
  ASSERT_TRUE(r.valid());
  r.MayMatch(views.size(), views.data(), batched.get());
  size_t matches = 0;
  for (size_t i = 0; i < views.size(); i++) {
    ASSERT_EQ(batched[i], r.MayMatch(views[i])) << i;
    matches += batched[i];
  }
  EXPECT_LT(matches, views.size());  // some absent key is rejected
  const FilterReader blind = FilterReader::Open(f);
  std::fill(batched.get(), batched.get() + views.size(), false);
  blind.MayMatch(views.size(), views.data(), batched.get());
  for (size_t i = 0; i < views.size(); i++) ASSERT_TRUE(batched[i]) << i;
}

// An unkeyed filter reads the same with or without a secret.
TEST_P(KeyedFilterTest, UnkeyedFiltersIgnoreTheSecret) {
  const auto secret = MustSecret(kTestSecret);
  const std::string f = test::BuildFilter(MustParse(GetParam()), 500);
  const FilterReader plain = FilterReader::Open(f);
  const FilterReader with = FilterReader::Open(f, secret.get());
  for (uint64_t i = 0; i < 5000; i++) {
    const std::string k = test::AbsentKey(i);
    ASSERT_EQ(plain.MayMatch(k), with.MayMatch(k));
  }
}

// The attack tests (issue: crafted keys against a filter). Keys the
// attacker tries are AbsentKey(i), none of them present.
constexpr uint64_t kKnownKeys = 1000;
constexpr size_t kCrafted = 1000;

// Absent keys that `reader` passes, the first `want` of them.
std::vector<std::string> Passing(const FilterReader& reader, size_t want) {
  std::vector<std::string> out;
  for (uint64_t i = 0; out.size() < want && i < 100000000; i++) {
    std::string k = test::AbsentKey(i);
    if (reader.MayMatch(k)) out.push_back(std::move(k));
  }
  return out;
}

size_t CountPassing(const FilterReader& reader,
                    const std::vector<std::string>& keys) {
  size_t n = 0;
  for (const std::string& k : keys) n += reader.MayMatch(k);
  return n;
}

// The filter's FPR measured on 200,000 absent keys the attack never uses.
double MeasuredFpr(const FilterReader& reader) {
  constexpr uint64_t kProbes = 200000;
  uint64_t fp = 0;
  for (uint64_t i = 0; i < kProbes; i++) {
    fp += reader.MayMatch(test::AbsentKey(uint64_t{1} << 40 | i));
  }
  return static_cast<double>(fp) / kProbes;
}

// Most of `n` replayed keys that pass a filter of false positive rate p
// by chance: the mean plus 5 standard deviations (and 3 for tiny means).
double PassBound(size_t n, double p) {
  const double mean = static_cast<double>(n) * p;
  return mean + 5 * std::sqrt(mean * (1 - p)) + 3;
}

// Crafted keys that pass a keyed filter: at most what its own FPR `fpr`
// explains, and, so that a keyed filter that matched everything could not
// pass, at most what 3x the FPR of its unkeyed twin explains; the keyed
// filter's FPR itself within 3x the twin's plus 5 sigma of its 200,000
// probes (MeasuredFpr).
void ExpectNormalRate(size_t keyed_pass, double fpr, double twin_fpr) {
  EXPECT_LE(keyed_pass, PassBound(kCrafted, fpr));
  EXPECT_LE(keyed_pass, PassBound(kCrafted, 3 * twin_fpr));
  EXPECT_LE(fpr, 3 * twin_fpr + 5 * std::sqrt(3 * twin_fpr / 200000));
  EXPECT_GT(twin_fpr, 0) << "the twin is a filter, not an empty one";
}

// The attacker knows the 1000 present keys, the spec (so the key count and
// geometry) and the public hash with its seed, not the filter bytes nor
// the secret: it builds its own replica offline and keeps the absent keys
// the replica passes.
TEST_P(KeyedFilterTest, CraftedKeysPassOnlyAtTheNormalRate) {
  const FilterSpec plain = MustParse(GetParam());
  const std::vector<std::string> crafted = Passing(
      FilterReader::Open(test::BuildFilter(plain, kKnownKeys)), kCrafted);
  ASSERT_EQ(crafted.size(), kCrafted);

  const std::string unkeyed = test::BuildFilter(plain, kKnownKeys);
  const size_t unkeyed_pass =
      CountPassing(FilterReader::Open(unkeyed), crafted);
  EXPECT_GE(unkeyed_pass, kCrafted / 2);
  EXPECT_EQ(unkeyed_pass, kCrafted) << "the replica is the filter itself";

  const auto secret = MustSecret(kTestSecret);
  const std::string keyed = test::BuildFilter(MustParse(GetParam() + ":keyed"),
                                              kKnownKeys, secret.get());
  const FilterReader r = FilterReader::Open(keyed, secret.get());
  const size_t keyed_pass = CountPassing(r, crafted);
  const double fpr = MeasuredFpr(r);
  const double twin_fpr = MeasuredFpr(FilterReader::Open(unkeyed));
  ExpectNormalRate(keyed_pass, fpr, twin_fpr);
  printf(
      "[attack] %s: crafted %zu, unkeyed passes %zu, keyed passes %zu "
      "(bound %.1f; keyed FPR %.4f%%, unkeyed %.4f%%)\n",
      GetParam().c_str(), kCrafted, unkeyed_pass, keyed_pass,
      PassBound(kCrafted, fpr), 100 * fpr, 100 * twin_fpr);
}

// False positives found through MayMatch against one file, replayed after
// the same keys were rewritten (compaction): with "salt" they pass at the
// normal rate; without, all of them pass again.
TEST_P(KeyedFilterTest, SaltedRewriteForgetsFalsePositives) {
  const auto secret = MustSecret(kTestSecret);
  for (const char* opts : {"", ":salt", ":keyed:salt"}) {
    const FilterSpec spec = MustParse(GetParam() + opts);
    std::unique_ptr<FilterBuilder> b;
    ASSERT_TRUE(NewFilterBuilder(spec, &b, secret.get()).ok());
    std::string files[2];
    for (std::string& f : files) {
      for (uint64_t i = 0; i < kKnownKeys; i++) b->AddKey(Key(i));
      b->Finish(&f);
    }
    const std::vector<std::string> found =
        Passing(FilterReader::Open(files[0], secret.get()), kCrafted);
    ASSERT_EQ(found.size(), kCrafted);
    const FilterReader rewritten = FilterReader::Open(files[1], secret.get());
    const size_t replayed = CountPassing(rewritten, found);
    const double fpr = MeasuredFpr(rewritten);
    if (spec.salt) {
      EXPECT_LE(replayed, PassBound(kCrafted, fpr)) << spec.ToString();
      const double twin_fpr = MeasuredFpr(FilterReader::Open(
          test::BuildFilter(MustParse(GetParam()), kKnownKeys)));
      EXPECT_LE(replayed, PassBound(kCrafted, 3 * twin_fpr)) << spec.ToString();
    } else {
      EXPECT_EQ(replayed, kCrafted) << "an unsalted rewrite is the same filter";
    }
    printf(
        "[salt] %s: found %zu, pass after rewrite %zu (bound %.1f; FPR "
        "%.4f%%)\n",
        spec.ToString().c_str(), kCrafted, replayed, PassBound(kCrafted, fpr),
        100 * fpr);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, KeyedFilterTest,
                         ::testing::ValuesIn(test::AllKindSpecs()),
                         test::SpecName);

// Keyed mutable filters (MutableFilterOptions::secret): the same tests for
// kinds 4 and 5, through their own Contains and through FilterReader.

// A mutable filter of `Filter` for `n` keys at 1% FPR holding Key(0..n-1).
template <typename Filter>
Filter MakeMutable(uint64_t n, const FilterSecret* secret) {
  MutableFilterOptions o;
  o.capacity = n;
  o.secret = secret;
  Filter f;
  EXPECT_TRUE(Filter::Create(o, &f).ok());
  for (uint64_t i = 0; i < n; i++) f.Insert(Key(i));
  return f;
}

template <typename Filter>
std::string Serialized(const Filter& f) {
  std::string bytes;
  f.Serialize(&bytes);
  return bytes;
}

template <typename Filter>
class KeyedMutableTest : public ::testing::Test {};
using MutableKinds = ::testing::Types<CountingBloomFilter, DynamicCuckooFilter>;
TYPED_TEST_SUITE(KeyedMutableTest, MutableKinds);

TYPED_TEST(KeyedMutableTest, RoundTripsWithTheSecretOnly) {
  const auto secret = MustSecret(kTestSecret);
  const auto other = MustSecret("another secret, also 32 bytes!!!");
  TypeParam f = MakeMutable<TypeParam>(300, secret.get());
  EXPECT_EQ(f.secret(), secret.get());
  EXPECT_EQ(f.HashKey(Key(1)), secret->Hash(Key(1), 0));
  for (uint64_t i = 0; i < 100; i++) ASSERT_TRUE(f.Erase(Key(i))) << i;
  const std::string bytes = Serialized(f);
  internal::Trailer t;
  ASSERT_TRUE(internal::ParseTrailer(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t));
  EXPECT_TRUE(t.keyed);
  EXPECT_EQ(t.key_id, secret->key_id());

  TypeParam g;
  ASSERT_TRUE(TypeParam::Deserialize(bytes, &g, secret.get()).ok());
  EXPECT_EQ(g.secret(), secret.get());
  EXPECT_EQ(Serialized(g), bytes);
  const FilterReader r = FilterReader::Open(bytes, secret.get());
  ASSERT_TRUE(r.valid());
  for (uint64_t i = 0; i < 5000; i++) {
    const std::string k = i < 300 ? Key(i) : test::AbsentKey(i);
    ASSERT_EQ(g.Contains(k), f.Contains(k)) << i;
    ASSERT_EQ(r.MayMatch(k), f.Contains(k)) << i;
    if (i >= 100 && i < 300) {
      ASSERT_TRUE(g.Contains(k)) << i;
    }
  }
  g.Insert(Key(0));  // a loaded filter takes writes with the same hash
  EXPECT_TRUE(g.Contains(Key(0)));
  EXPECT_TRUE(g.Erase(Key(0)));

  // Without the secret, or with another: Deserialize fails, *out unchanged,
  // and a reader matches every key.
  for (const FilterSecret* s : {other.get(), (const FilterSecret*)nullptr}) {
    TypeParam h = MakeMutable<TypeParam>(5, nullptr);
    const Status st = TypeParam::Deserialize(bytes, &h, s);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(st.message().find(s == nullptr ? "needs the application's"
                                             : "keyed with key id"),
              std::string::npos)
        << st.message();
    EXPECT_EQ(h.secret(), nullptr);
    EXPECT_TRUE(h.Contains(Key(4))) << "*out unchanged";
    const FilterReader blind = FilterReader::Open(bytes, s);
    EXPECT_FALSE(blind.valid());
    EXPECT_TRUE(blind.MayMatch(test::AbsentKey(0)));
  }
}

// Unkeyed bytes load unkeyed even when a secret is given.
TYPED_TEST(KeyedMutableTest, UnkeyedBytesIgnoreTheSecret) {
  const auto secret = MustSecret(kTestSecret);
  const std::string bytes = Serialized(MakeMutable<TypeParam>(200, nullptr));
  TypeParam g;
  ASSERT_TRUE(TypeParam::Deserialize(bytes, &g, secret.get()).ok());
  EXPECT_EQ(g.secret(), nullptr);
  EXPECT_EQ(Serialized(g), bytes);
  for (uint64_t i = 0; i < 200; i++) ASSERT_TRUE(g.Contains(Key(i)));
}

// The attacker knows the present keys and the options, not the secret: it
// keeps the absent keys that its own unkeyed replica passes.
TYPED_TEST(KeyedMutableTest, CraftedKeysPassOnlyAtTheNormalRate) {
  const std::vector<std::string> crafted =
      Passing(FilterReader::Open(
                  Serialized(MakeMutable<TypeParam>(kKnownKeys, nullptr))),
              kCrafted);
  ASSERT_EQ(crafted.size(), kCrafted);
  const TypeParam unkeyed = MakeMutable<TypeParam>(kKnownKeys, nullptr);
  size_t unkeyed_pass = 0;
  for (const std::string& k : crafted) unkeyed_pass += unkeyed.Contains(k);
  EXPECT_GE(unkeyed_pass, kCrafted / 2);

  const auto secret = MustSecret(kTestSecret);
  const TypeParam keyed = MakeMutable<TypeParam>(kKnownKeys, secret.get());
  const std::string bytes = Serialized(keyed);  // outlives the reader
  const FilterReader r = FilterReader::Open(bytes, secret.get());
  ASSERT_TRUE(r.valid());
  size_t keyed_pass = 0;
  for (const std::string& k : crafted) {
    ASSERT_EQ(keyed.Contains(k), r.MayMatch(k));
    keyed_pass += keyed.Contains(k);
  }
  const double fpr = MeasuredFpr(r);
  const std::string twin = Serialized(unkeyed);  // outlives the reader
  const double twin_fpr = MeasuredFpr(FilterReader::Open(twin));
  ExpectNormalRate(keyed_pass, fpr, twin_fpr);
  printf(
      "[attack] %s: crafted %zu, unkeyed passes %zu, keyed passes %zu "
      "(bound %.1f; keyed FPR %.4f%%, unkeyed %.4f%%)\n",
      ::testing::internal::GetTypeName<TypeParam>().c_str(), kCrafted,
      unkeyed_pass, keyed_pass, PassBound(kCrafted, fpr), 100 * fpr,
      100 * twin_fpr);
}

TEST(KeyedFormatTest, GoldenKeyedMutable) {
  const auto secret = MustSecret(kTestSecret);
  MutableFilterOptions o;
  o.capacity = 3;
  o.bits_per_key = 10;
  o.secret = secret.get();
  CountingBloomFilter cb;
  ASSERT_TRUE(CountingBloomFilter::Create(o, &cb).ok());
  o.bits_per_key = 8;
  DynamicCuckooFilter dc;
  ASSERT_TRUE(DynamicCuckooFilter::Create(o, &dc).ok());
  for (uint64_t i = 0; i < 3; i++) {
    cb.Insert(Key(i));
    ASSERT_TRUE(dc.Insert(Key(i)));
  }
  EXPECT_EQ(Hex(test::Unchecked(Serialized(cb), secret.get())),
            "121110012310100011110001010001"  // 30 counters, 3 keys x 7
            "0f"                              // payload_size
            "02"                              // flags: keyed, no seed
            "9750a71f"                        // key id 0x1fa75097
            "07"                              // k
            "9d"                              // check
            "0a"                              // len
            "14");                            // tag: unchecked, kind 4
  EXPECT_EQ(Hex(test::Unchecked(Serialized(dc), secret.get())),
            "2b0b5c00"  // one bucket of four 8-bit tags, one free
            "04"        // payload_size
            "02"        // flags: keyed, no seed
            "9750a71f"  // key id
            "0800"      // f, salt
            "15"        // check
            "0b"        // len
            "15");      // tag: unchecked, kind 5
}

}  // namespace
}  // namespace sstfilter
