// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The binary format of kinds 3 (cuckoo), 4 (counting_bloom) and 5
// (dynamic_cuckoo): golden bytes, so it cannot change by accident; a second
// decoder written from docs/FORMAT.md alone, bit by bit, that must agree
// with FilterReader; and well-formed trailers with parameters a reader must
// refuse.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "policy/format.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/mutable.h"
#include "tests/by_the_book.h"
#include "tests/format_versions.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using by_the_book::Bit;
using by_the_book::FastRange;
using by_the_book::Mix64;
using test::AbsentKey;
using test::Hex;
using test::Key;

// --- golden bytes -------------------------------------------------------------

TEST(CuckooFormatTest, GoldenCuckoo) {
  const std::string bytes =
      test::Unchecked(test::BuildFilter(test::MustParse("cuckoo:12"), 1000));
  // ceil(1000 / 3.8) = 264 buckets of 4 * 12 bits = 1584 payload bytes;
  // payload_size 1584 (b0 0c), flags 0, f = 12, salt 0, check, len 8,
  // tag 0x13 (unchecked, kind 3).
  ASSERT_EQ(bytes.size(), 1584u + 8);
  EXPECT_EQ(Hex(bytes.substr(1584)),
            "b00c"
            "00"
            "0c"
            "00"
            "07"
            "08"
            "13");
  // Buckets 0 and 1, 6 bytes each: a little-endian 48-bit word of four
  // 12-bit tags, slot 0 lowest (bucket 0 holds 0x06d, 0xa82, 0xc40, 0x28e).
  EXPECT_EQ(Hex(bytes.substr(0, 12)), "6d20a840ec28afcbd50b2d9d");
  EXPECT_EQ(Hash64(bytes), 2999158913359861852ull);
}

TEST(CuckooFormatTest, GoldenCuckooWithSeedAndOddWidth) {
  const std::string bytes = test::Unchecked(
      test::BuildFilter(test::MustParse("cuckoo:11:seed=3"), 800));
  // ceil(800 / 3.8) = 211 buckets of 44 bits = ceil(211 * 11 / 2) = 1161.
  // payload_size 1161 (89 09), flags 1, seed 3, f = 11, salt 0, check,
  // len 16, tag 0x13.
  ASSERT_EQ(bytes.size(), 1161u + 16);
  EXPECT_EQ(Hex(bytes.substr(1161)),
            "8909"
            "01"
            "0300000000000000"
            "0b"
            "00"
            "6b"
            "10"
            "13");
  EXPECT_EQ(Hash64(bytes), 1508036688011663212ull);
}

TEST(CuckooFormatTest, GoldenSmallCuckooSpecWritesBloom) {
  // 3 keys: a standard Bloom filter reaches the cuckoo filter's FPR in
  // fewer bytes, so that is what is written.
  // 6 payload bytes, k = 11, kind 1: 12 bytes where the cuckoo filter
  // (one bucket) would take 6 + 7.
  const std::string bytes =
      test::Unchecked(test::BuildFilter(test::MustParse("cuckoo:12"), 3));
  EXPECT_EQ(Hex(bytes),
            "42a7d03bc3cb"
            "06"
            "00"
            "0b"
            "73"
            "06"
            "11");
}

TEST(CuckooFormatTest, GoldenCountingBloom) {
  MutableFilterOptions o;
  o.capacity = 3;
  o.bits_per_key = 10;  // 30 counters, 15 bytes, k = 7
  CountingBloomFilter f;
  ASSERT_TRUE(CountingBloomFilter::Create(o, &f).ok());
  for (int i = 0; i < 3; i++) f.Insert(Key(i));
  f.Insert(Key(0));
  std::string bytes;
  f.Serialize(&bytes);
  bytes = test::Unchecked(bytes);
  // 15 payload bytes of nibble counters (Key(0) counts twice),
  // payload_size 15, flags 0, k = 7, check, len 6, tag 0x14.
  EXPECT_EQ(Hex(bytes),
            "101020012200013400011110212020"
            "0f"
            "00"
            "07"
            "61"
            "06"
            "14");
}

TEST(CuckooFormatTest, GoldenDynamicCuckoo) {
  MutableFilterOptions o;
  o.capacity = 8;
  o.bits_per_key = 12;  // ceil(8 / 3.8) = 3 buckets, 18 bytes
  o.seed = 9;
  DynamicCuckooFilter f;
  ASSERT_TRUE(DynamicCuckooFilter::Create(o, &f).ok());
  for (int i = 0; i < 3; i++) ASSERT_TRUE(f.Insert(Key(i)));
  std::string bytes;
  f.Serialize(&bytes);
  bytes = test::Unchecked(bytes);
  // 3 buckets of 6 bytes, one tag each (0xf38, 0xffa, 0x7f0 in slot 0:
  // inserts fill the emptier bucket), payload_size 18, flags 1, seed 9,
  // f = 12, salt 0, check, len 15, tag 0x15.
  EXPECT_EQ(Hex(bytes),
            "380f00000000"
            "fa0f00000000"
            "f00700000000"
            "12"
            "01"
            "0900000000000000"
            "0c"
            "00"
            "8f"
            "0f"
            "15");
}

// --- a second implementation, from docs/FORMAT.md ---------------------------

struct Parsed {
  int kind = -1;
  std::string_view payload;
  uint64_t seed = 0;
  std::string params;
};

// The trailer, read as the document says (no shared code with the reader).
bool ParseByTheBook(std::string_view f, Parsed* out) {
  if (f.size() < 5) return false;
  const uint8_t tag = f[f.size() - 1], len = f[f.size() - 2];
  // Tag 0x1k, unchecked: u8 check of the body; 0x2k, checked (format
  // version 4): u32le check of payload and body.
  const int version = tag >> 4;
  const size_t tail = version == 2 ? 6 : 3;
  if ((version != 1 && version != 2) || len < tail + 2 || len > f.size()) {
    return false;
  }
  const std::string_view body = f.substr(f.size() - len, len - tail);
  if (version == 1) {
    const uint64_t check = Hash64(body, (uint64_t{len} << 8) | tag) & 0xff;
    if (check != static_cast<uint8_t>(f[f.size() - 3])) return false;
  } else {
    uint32_t check = 0;
    for (int i = 0; i < 4; i++) {
      check |= uint32_t{static_cast<uint8_t>(f[f.size() - 6 + i])} << (8 * i);
    }
    if (static_cast<uint32_t>(Hash64(f.substr(0, f.size() - 6),
                                     (uint64_t{len} << 8) | tag)) != check) {
      return false;
    }
  }
  size_t pos = 0;
  uint64_t payload_size = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = body.at(pos++);
    payload_size |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) break;
  }
  if (payload_size != f.size() - len) return false;
  const uint8_t flags = body.at(pos++);
  if (flags & 1) {
    for (int i = 0; i < 8; i++)
      out->seed |= uint64_t{uint8_t(body.at(pos++))} << (8 * i);
  }
  out->kind = tag & 15;
  out->payload = f.substr(0, payload_size);
  out->params = std::string(body.substr(pos));
  return true;
}

bool CuckooByTheBook(const Parsed& p, uint64_t h) {
  const int f = static_cast<uint8_t>(p.params[0]);
  const uint64_t salt = static_cast<uint8_t>(p.params[1]);
  const uint64_t n = 2 * p.payload.size() / f;  // buckets
  const uint64_t x = salt == 0 ? h : Mix64(h + salt * 0x9E3779B97F4A7C15ull);
  const uint64_t b1 = FastRange(x, n);
  const uint64_t tag =
      1 + ((x & 0xffffffffull) * ((uint64_t{1} << f) - 1) >> 32);
  const uint64_t c = FastRange(tag * 0x9E3779B97F4A7C15ull, n);
  const uint64_t b2 = (c + n - b1) % n;
  for (uint64_t b : {b1, b2}) {
    for (int slot = 0; slot < 4; slot++) {
      uint64_t v = 0;
      for (int i = 0; i < f; i++) {
        v |= uint64_t{Bit(p.payload, 4 * f * b + f * slot + i)} << i;
      }
      if (v == tag) return true;
    }
  }
  return false;
}

bool CountingBloomByTheBook(const Parsed& p, uint64_t h) {
  const int k = static_cast<uint8_t>(p.params[0]);
  const uint64_t m = 2 * p.payload.size();
  uint64_t x = h;
  for (int i = 0; i < k; i++, x *= 0x9E3779B97F4A7C15ull) {
    const uint64_t c = FastRange(x, m);
    const uint8_t byte = p.payload[c / 2];
    if (((c % 2 == 0 ? byte : byte >> 4) & 15) == 0) return false;
  }
  return true;
}

void ExpectBookAgrees(const std::string& bytes, int kind,
                      bool expect_matches = true) {
  Parsed p;
  ASSERT_TRUE(ParseByTheBook(bytes, &p));
  ASSERT_EQ(p.kind, kind);
  const FilterReader r = FilterReader::Open(bytes);
  ASSERT_TRUE(r.valid());
  int matches = 0;
  for (int i = 0; i < 3000; i++) {
    for (const std::string& key : {Key(i), AbsentKey(i)}) {
      const uint64_t h = Hash64(key, p.seed);
      const bool book =
          kind == 4 ? CountingBloomByTheBook(p, h) : CuckooByTheBook(p, h);
      ASSERT_EQ(book, r.MayMatch(key)) << key << " kind " << kind;
      matches += book;
    }
  }
  if (expect_matches) {
    EXPECT_GT(matches, 0);  // the probes reach the table
  }
}

TEST(CuckooFormatTest, SecondImplementationAgrees) {
  for (const char* spec :
       {"cuckoo:12", "cuckoo:11:seed=99", "cuckoo:8", "cuckoo:16", "cuckoo:17",
        "cuckoo:20", "cuckoo:32"}) {
    SCOPED_TRACE(spec);
    const std::string bytes = test::BuildFilter(test::MustParse(spec), 2000);
    ExpectBookAgrees(bytes, 3);
    // The same table under every salt the format allows is readable, and
    // both decoders agree on it.
    for (int salt : {1, 7, 255}) {
      internal::Trailer t;
      ASSERT_TRUE(internal::ParseTrailer(
          reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t));
      t.params[1] = static_cast<uint8_t>(salt);
      std::string salted = bytes.substr(0, t.payload_size);
      internal::AppendTrailer(t, &salted);
      ExpectBookAgrees(salted, 3, /*expect_matches=*/false);
    }
  }
  MutableFilterOptions o;
  o.capacity = 2000;
  o.target_fpr = 0.01;
  o.seed = 4;
  DynamicCuckooFilter d;
  ASSERT_TRUE(DynamicCuckooFilter::Create(o, &d).ok());
  CountingBloomFilter c;
  ASSERT_TRUE(CountingBloomFilter::Create(o, &c).ok());
  for (int i = 0; i < 1900; i++) {
    ASSERT_TRUE(d.Insert(Key(i)));
    c.Insert(Key(i));
  }
  std::string bytes;
  d.Serialize(&bytes);
  ExpectBookAgrees(bytes, 5);
  bytes.clear();
  c.Serialize(&bytes);
  ExpectBookAgrees(bytes, 4);
}

// --- well-formed but unreadable -----------------------------------------------

std::string WithParams(const std::string& bytes, FilterKind kind,
                       const std::string& params, int extra_payload = 0) {
  internal::Trailer t;
  EXPECT_TRUE(internal::ParseTrailer(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &t));
  std::string out = bytes.substr(0, t.payload_size);
  out.append(extra_payload, '\0');
  t.payload_size += extra_payload;
  t.kind = kind;
  t.params_size = params.size();
  std::copy(params.begin(), params.end(), t.params);
  internal::AppendTrailer(t, &out);
  return out;
}

TEST(CuckooFormatTest, WellFormedButUnreadableMayMatch) {
  const std::string cuckoo =
      test::BuildFilter(test::MustParse("cuckoo:12"), 1000);
  ASSERT_TRUE(FilterReader::Open(WithParams(cuckoo, FilterKind::kCuckoo,
                                            std::string("\x0c\x00", 2)))
                  .valid());  // the re-encoder itself is faithful
  struct Case {
    FilterKind kind;
    std::string params;
    int extra;
  } cases[] = {
      {FilterKind::kCuckoo, std::string("\x03\x00", 2), 0},      // f = 3
      {FilterKind::kCuckoo, std::string("\x21\x00", 2), 0},      // f = 33
      {FilterKind::kCuckoo, std::string("\x00\x00", 2), 0},      // f = 0
      {FilterKind::kCuckoo, std::string("\x0c", 1), 0},          // no salt
      {FilterKind::kCuckoo, std::string("\x0c\x00\x00", 3), 0},  // extra byte
      {FilterKind::kCuckoo, std::string("\x0c\x00", 2), 1},  // 6 N + 1 bytes
      {FilterKind::kCuckoo, std::string("\x0c\x00", 2), 5},  // 6 N + 5 bytes
      {FilterKind::kDynamicCuckoo, std::string("\x21\x00", 2), 0},
      {FilterKind::kDynamicCuckoo, std::string("\x0c\x00", 2), 3},
      {FilterKind::kCountingBloom, std::string("\x00", 1), 0},  // k = 0
      {FilterKind::kCountingBloom, std::string("\x21", 1), 0},  // k = 33
      {FilterKind::kCountingBloom, std::string("\x07\x07", 2), 0},
  };
  for (const Case& c : cases) {
    const std::string bad = WithParams(cuckoo, c.kind, c.params, c.extra);
    const FilterReader r = FilterReader::Open(bad);
    EXPECT_FALSE(r.valid())
        << static_cast<int>(c.kind) << " " << Hex(c.params) << " +" << c.extra;
    for (int i = 0; i < 1000; i++) ASSERT_TRUE(r.MayMatch(Key(i)));
  }
  // An odd width: 211 buckets of 11-bit tags take ceil(2321 / 2) = 1161
  // bytes; one more is refused.
  const std::string odd = test::BuildFilter(test::MustParse("cuckoo:11"), 800);
  EXPECT_TRUE(FilterReader::Open(odd).valid());
  EXPECT_FALSE(FilterReader::Open(WithParams(odd, FilterKind::kCuckoo,
                                             std::string("\x0b\x00", 2), 1))
                   .valid());
}

}  // namespace
}  // namespace sstfilter
