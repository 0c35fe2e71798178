// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// A second implementation of the blocked Bloom and ribbon kinds (dense,
// compact dense, banded), written from docs/FORMAT.md alone: trailers
// (full and compact), hashing and the match rules, bit by bit, with no code
// shared with the reader. It must agree with FilterReader on every key.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::AbsentKey;
using test::Key;

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

uint64_t FastRange(uint64_t h, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

uint8_t Byte(std::string_view s, uint64_t i) {
  return static_cast<uint8_t>(s.at(i));
}

// Bit j of `payload`, LSB-first ("Bits are numbered LSB-first").
unsigned Bit(std::string_view payload, uint64_t j) {
  return (Byte(payload, j / 8) >> (j % 8)) & 1;
}

uint64_t Word(std::string_view payload, uint64_t i) {
  uint64_t w = 0;
  for (int b = 0; b < 8; b++)
    w |= uint64_t{Byte(payload, 8 * i + b)} << (8 * b);
  return w;
}

unsigned Parity(uint64_t x) {
  unsigned p = 0;
  for (; x != 0; x &= x - 1) p ^= 1;
  return p;
}

struct Filter {
  int kind = -1;
  bool compact = false;
  std::string_view payload;
  uint64_t seed = 0;
  std::string params;  // the kind params (compact: the one param)
};

// Section "Layout": either trailer, with every rule a reader checks.
bool ParseByTheBook(std::string_view f, Filter* out) {
  if (f.empty()) return false;
  if (Byte(f, f.size() - 1) & 0x80) {  // compact trailer
    if (f.size() < 2) return false;
    const unsigned w = Byte(f, f.size() - 2) | Byte(f, f.size() - 1) << 8;
    const uint64_t payload_size = f.size() - 2;
    if (payload_size < 16 || payload_size > 127) return false;
    unsigned check = static_cast<unsigned>(payload_size);
    const unsigned constants[8] = {0x03, 0x05, 0x06, 0x09,
                                   0x0a, 0x0c, 0x11, 0x12};
    for (int i = 0; i < 8; i++) {
      if ((w >> (7 + i)) & 1) check ^= constants[i];
    }
    if (check != (w & 0x7f)) return false;
    out->kind = (w >> 11) & 15;
    if (out->kind != 1 && out->kind != 6) return false;
    out->compact = true;
    out->payload = f.substr(0, payload_size);
    out->params = std::string(1, static_cast<char>((w >> 7) & 15));
    return true;
  }
  if (f.size() < 5) return false;
  const uint8_t tag = Byte(f, f.size() - 1), len = Byte(f, f.size() - 2);
  if ((tag >> 4) != 1 || len < 5 || len > f.size()) return false;
  const std::string_view body = f.substr(f.size() - len, len - 3);
  if ((Hash64(body, (uint64_t{len} << 8) | tag) & 0xff) !=
      Byte(f, f.size() - 3)) {
    return false;
  }
  size_t pos = 0;
  uint64_t payload_size = 0;
  for (int shift = 0;; shift += 7) {
    if (pos >= body.size() || shift > 63) return false;
    const uint8_t b = Byte(body, pos++);
    payload_size |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) break;
  }
  if (payload_size != f.size() - len || pos >= body.size()) return false;
  const uint8_t flags = Byte(body, pos++);
  if (flags & ~1u) return false;  // (keyed filters: not read here)
  if (flags & 1) {
    if (body.size() - pos < 8) return false;
    for (int i = 0; i < 8; i++)
      out->seed |= uint64_t{Byte(body, pos++)} << (8 * i);
    if (out->seed == 0) return false;
  }
  out->kind = tag & 15;
  out->payload = f.substr(0, payload_size);
  out->params = std::string(body.substr(pos));
  return true;
}

// Kind 2.
bool BlockedBloomByTheBook(const Filter& f, uint64_t h) {
  if (f.params.size() != 1 || f.payload.size() % 64 != 0) return false;
  const int k = static_cast<uint8_t>(f.params[0]);
  const uint64_t block = FastRange(h, f.payload.size() / 64);
  uint32_t x = static_cast<uint32_t>(h);
  for (int i = 0; i < k; i++, x *= 0x9E3779B9u) {
    if (!Bit(f.payload, 512 * block + (x >> 23))) return false;
  }
  return true;
}

// Kind 6: the key's row and fingerprint.
struct RibbonKey {
  uint64_t a, row;
  uint32_t fp;
};
RibbonKey RibbonRowByTheBook(uint64_t h, uint64_t salt) {
  RibbonKey key;
  key.a = h ^ (salt * kGolden);
  uint64_t x = key.a * 0xbf58476d1ce4e5b9ull;
  x ^= x >> 28;
  x *= 0x94d049bb133111ebull;
  key.row = x ^ (x >> 31);
  key.fp = static_cast<uint32_t>((key.a * 0xd6e8feb86659fd93ull) >> 32);
  return key;
}

// Dense and compact dense: r columns of m bits from bit `first` of payload.
bool DenseByTheBook(std::string_view payload, uint64_t first, uint64_t m,
                    uint64_t r, uint64_t salt, uint64_t h) {
  const RibbonKey key = RibbonRowByTheBook(h, salt);
  for (uint64_t j = 0; j < r; j++) {
    unsigned p = 0;
    for (uint64_t t = 0; t < m; t++) {
      p ^= ((key.row >> t) & 1) & Bit(payload, first + j * m + t);
    }
    if (p != ((key.fp >> j) & 1)) return false;
  }
  return true;
}

bool BandedByTheBook(std::string_view payload, uint64_t blocks, uint64_t salt,
                     uint64_t h) {
  const uint64_t words = payload.size() / 8, r = words / blocks,
                 k = words % blocks;
  const RibbonKey key = RibbonRowByTheBook(h, salt);
  const uint64_t s = FastRange(key.a, 64 * (blocks - 1));
  const uint64_t q = s / 64, o = s % 64;
  auto start = [&](uint64_t b) {
    return b * r + (b > blocks - k ? b - (blocks - k) : 0);
  };
  const uint64_t c = q >= blocks - k ? r + 1 : r;
  for (uint64_t j = 0; j < c; j++) {
    const uint64_t lo = Word(payload, start(q) + j);
    const uint64_t hi = Word(payload, start(q + 1) + j);
    const uint64_t seg = (lo >> o) | (o == 0 ? 0 : hi << (64 - o));
    if (Parity(seg & (key.row | 1)) != ((key.fp >> j) & 1)) return false;
  }
  return true;
}

enum class Form { kDense, kCompactDense, kBanded };

bool RibbonByTheBook(const Filter& f, uint64_t h, Form* form) {
  if (f.compact) {
    const uint8_t header = Byte(f.payload, 0);
    if (header & 0x80) return false;
    const uint64_t r =
        ((((header >> 6) & 1u) << 4) | static_cast<uint8_t>(f.params[0])) + 1;
    const uint64_t m = std::min<uint64_t>(64, 8 * (f.payload.size() - 1) / r);
    if (m == 0 || f.payload.size() - 1 != (m * r + 7) / 8) return false;
    *form = Form::kCompactDense;
    return DenseByTheBook(f.payload, 8, m, r, header & 63, h);
  }
  const std::string& p = f.params;
  if (p.size() != 6) return false;
  const uint64_t salt = static_cast<uint8_t>(p[1]);
  if (p[0] == 0) {
    const uint64_t m = static_cast<uint8_t>(p[2]),
                   r = static_cast<uint8_t>(p[3]);
    if (m < 1 || m > 64 || r < 1 || r > 32 || p[4] != 0 || p[5] != 0 ||
        f.payload.size() != (m * r + 7) / 8) {
      return false;
    }
    *form = Form::kDense;
    return DenseByTheBook(f.payload, 0, m, r, salt, h);
  }
  uint64_t blocks = 0;
  for (int i = 0; i < 4; i++)
    blocks |= uint64_t{static_cast<uint8_t>(p[2 + i])} << (8 * i);
  const uint64_t words = f.payload.size() / 8;
  if (p[0] != 1 || blocks < 2 || f.payload.size() % 8 != 0 ||
      words / blocks < 1 || words / blocks > 32 ||
      (words / blocks == 32 && words % blocks != 0)) {
    return false;
  }
  *form = Form::kBanded;
  return BandedByTheBook(f.payload, blocks, salt, h);
}

// Builds `spec` over n keys and checks the second implementation against
// FilterReader on the keys and on as many absent keys. Returns the form.
Form ExpectRibbonAgrees(const char* spec, uint64_t n) {
  SCOPED_TRACE(std::string(spec) + " n=" + std::to_string(n));
  const std::string bytes = test::BuildFilter(test::MustParse(spec), n);
  Filter f;
  EXPECT_TRUE(ParseByTheBook(bytes, &f));
  EXPECT_EQ(f.kind, 6);
  const FilterReader r = FilterReader::Open(bytes);
  EXPECT_TRUE(r.valid());
  Form form = Form::kDense;
  int absent_matches = 0;
  const uint64_t probes = n < 3000 ? 3000 : n;
  for (uint64_t i = 0; i < probes; i++) {
    const std::string present = Key(i % n), absent = AbsentKey(i);
    EXPECT_TRUE(RibbonByTheBook(f, Hash64(present, f.seed), &form));
    EXPECT_TRUE(r.MayMatch(present));
    const bool book = RibbonByTheBook(f, Hash64(absent, f.seed), &form);
    EXPECT_EQ(book, r.MayMatch(absent)) << absent;
    absent_matches += book;
  }
  // Absent keys reach the columns: most fail.
  EXPECT_LT(absent_matches, static_cast<int>(probes / 2));
  return form;
}

TEST(FormatDecoderTest, RibbonFromTheDocumentAgreesWithTheReader) {
  // Dense with a full trailer (a seed, or the golden 5-key filter).
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:8.5", 5), Form::kDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:10:seed=3", 33), Form::kDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:7.3:seed=11", 64), Form::kDense);
  // Compact dense: LevelDB's sizes, a padded tiny filter, r > 16 (the
  // header's bit 6).
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:10", 33), Form::kCompactDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:9.7", 36), Form::kCompactDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:10", 6), Form::kCompactDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:24", 30), Form::kCompactDense);
  // Banded: integer and fractional columns (k > 0), a seed, 32 columns.
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:9.5", 2000), Form::kBanded);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:7.3", 100000), Form::kBanded);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:12:seed=5", 3000), Form::kBanded);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:32", 5000), Form::kBanded);
}

TEST(FormatDecoderTest, BlockedBloomFromTheDocumentAgreesWithTheReader) {
  for (const char* spec : {"blocked_bloom:10", "blocked_bloom:4",
                           "blocked_bloom:16.3:seed=9", "blocked_bloom:64"}) {
    for (uint64_t n : {3000, 30000}) {
      SCOPED_TRACE(std::string(spec) + " n=" + std::to_string(n));
      const std::string bytes = test::BuildFilter(test::MustParse(spec), n);
      Filter f;
      ASSERT_TRUE(ParseByTheBook(bytes, &f));
      ASSERT_EQ(f.kind, 2);
      const FilterReader r = FilterReader::Open(bytes);
      ASSERT_TRUE(r.valid());
      int absent_matches = 0;
      for (uint64_t i = 0; i < 5000; i++) {
        const std::string present = Key(i % n), absent = AbsentKey(i);
        ASSERT_TRUE(BlockedBloomByTheBook(f, Hash64(present, f.seed)));
        ASSERT_TRUE(r.MayMatch(present));
        const bool book = BlockedBloomByTheBook(f, Hash64(absent, f.seed));
        ASSERT_EQ(book, r.MayMatch(absent)) << absent;
        absent_matches += book;
      }
      EXPECT_LT(absent_matches, 2500);
    }
  }
}

}  // namespace
}  // namespace sstfilter
