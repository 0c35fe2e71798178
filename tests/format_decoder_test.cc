// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// A second implementation of the blocked Bloom and ribbon kinds (dense,
// compact dense, banded, segmented), written from docs/FORMAT.md alone:
// trailers (full and compact), hashing and the match rules, bit by bit, with
// no code shared with the reader. It must agree with FilterReader on every
// key. (The banded form, which builders no longer write for the spec's
// defaults, is built through the ribbon builder's internal options.)

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "policy/format.h"
#include "policy/ribbon/ribbon.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/secret.h"
#include "tests/by_the_book.h"
#include "tests/format_versions.h"
#include "tests/test_util.h"

// The keyed hash by the book uses xxHash directly, as a second
// implementation would.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sstfilter {
namespace {

using by_the_book::Bit;
using by_the_book::FastRange;
using by_the_book::Mix64;
using test::AbsentKey;
using test::Key;

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

uint8_t Byte(std::string_view s, uint64_t i) {
  return static_cast<uint8_t>(s.at(i));
}

uint64_t Word(std::string_view payload, uint64_t i) {
  uint64_t w = 0;
  for (int b = 0; b < 8; b++)
    w |= uint64_t{Byte(payload, 8 * i + b)} << (8 * b);
  return w;
}

// A little-endian u32 at byte `i`.
uint64_t U32(std::string_view s, uint64_t i) {
  uint64_t v = 0;
  for (int b = 0; b < 4; b++) v |= uint64_t{Byte(s, i + b)} << (8 * b);
  return v;
}

unsigned Parity(uint64_t x) {
  unsigned p = 0;
  for (; x != 0; x &= x - 1) p ^= 1;
  return p;
}

using U128 = unsigned __int128;

unsigned Parity128(U128 x) {
  return Parity(static_cast<uint64_t>(x)) ^
         Parity(static_cast<uint64_t>(x >> 64));
}

struct Filter {
  int kind = -1;
  bool compact = false;
  std::string_view payload;
  uint64_t seed = 0;
  bool keyed = false;   // flags bit 1
  uint32_t key_id = 0;  // if keyed
  std::string params;   // the kind params (compact: the one param)
};

// Section "Checked compact form": CRC-7 with generator x^7 + x^3 + 1,
// initial value 0, most significant bit first, no final XOR.
unsigned Crc7(std::string_view bytes) {
  unsigned crc = 0;  // 7 bits
  for (const char c : bytes) {
    for (int b = 7; b >= 0; b--) {
      const unsigned in = (static_cast<uint8_t>(c) >> b) & 1;
      const unsigned top = (crc >> 6) & 1;
      crc = (crc << 1) & 0x7f;
      if (top ^ in) crc ^= 0x09;
    }
  }
  return crc;
}

// Section "Checked compact form": the payload XOR-folded into 8 bytes
// (little-endian words, the last zero-padded: fold byte j is the XOR of
// payload bytes j, j + 8, ...), then its CRC-7.
unsigned FoldedCrc7(std::string_view payload) {
  std::string fold(8, '\0');
  for (size_t i = 0; i < payload.size(); i++) fold[i % 8] ^= payload[i];
  return Crc7(fold);
}

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
    const unsigned field = (w >> 11) & 15;
    out->payload = f.substr(0, payload_size);
    if (field & 8) check ^= FoldedCrc7(out->payload);  // the checked form
    if (check != (w & 0x7f)) return false;
    out->kind = field & 7;
    if (out->kind != 1 && out->kind != 6) return false;
    out->compact = true;
    out->params = std::string(1, static_cast<char>((w >> 7) & 15));
    return true;
  }
  if (f.size() < 5) return false;
  const uint8_t tag = Byte(f, f.size() - 1), len = Byte(f, f.size() - 2);
  const int version = tag >> 4;
  // Unchecked (0x1k): a check byte over the body; checked (0x2k): a u32le
  // check over the payload and the body.
  const size_t check_size = version == 2 ? 4 : 1;
  if ((version != 1 && version != 2) || len < check_size + 4 ||
      len > f.size()) {
    return false;
  }
  const std::string_view body = f.substr(f.size() - len, len - 2 - check_size);
  const uint64_t seed = (uint64_t{len} << 8) | tag;
  if (version == 1 && (Hash64(body, seed) & 0xff) != Byte(f, f.size() - 3)) {
    return false;
  }
  if (version == 2 && (Hash64(f.substr(0, f.size() - 6), seed) & 0xffffffffu) !=
                          U32(f, f.size() - 6)) {
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
  // Rule 4: bit 0 a seed, bit 1 keyed; [seed] then [key_id].
  const uint8_t flags = Byte(body, pos++);
  if (flags & ~3u) return false;
  if (flags & 1) {
    if (body.size() - pos < 8) return false;
    for (int i = 0; i < 8; i++)
      out->seed |= uint64_t{Byte(body, pos++)} << (8 * i);
    if (out->seed == 0) return false;
  }
  if (flags & 2) {
    if (body.size() - pos < 4) return false;
    out->keyed = true;
    out->key_id = static_cast<uint32_t>(U32(body, pos));
    pos += 4;
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

// The segmented form (form 2): a directory of S + 1 entries, then W
// columns of 16 bytes. Returns true ("may match") for anything the
// document says a reader refuses.
bool SegmentedByTheBook(std::string_view payload, uint64_t r, uint64_t segs,
                        uint64_t h) {
  if (r < 1 || r > 32 || segs == 0) return true;
  const uint64_t dir = 8 * (segs + 1);
  if (payload.size() < dir || (payload.size() - dir) % 16 != 0) return true;
  const uint64_t columns = (payload.size() - dir) / 16;
  auto first_column = [&](uint64_t e) { return U32(payload, 8 * e); };
  auto first_block = [&](uint64_t e) { return U32(payload, 8 * e + 4) >> 8; };
  auto salt = [&](uint64_t e) { return U32(payload, 8 * e + 4) & 0xff; };
  if (first_column(0) != 0 || first_block(0) != 0 ||
      first_column(segs) != columns || salt(segs) != 0) {
    return true;
  }
  const uint64_t i = ((h & 0xffffffffull) * segs) >> 32;
  const uint64_t c0 = first_column(i), c1 = first_column(i + 1);
  const uint64_t t0 = first_block(i), t1 = first_block(i + 1);
  if (t1 < t0 + 2 || c1 < c0 || c1 > columns) return true;
  const uint64_t blocks = t1 - t0, n_cols = c1 - c0;
  if (n_cols < r * blocks) return true;
  const uint64_t k = n_cols - r * blocks;
  if (k > blocks || (r == 32 && k != 0)) return true;

  const uint64_t a = Mix64(h ^ (salt(i) * kGolden));
  const RibbonKey low = RibbonRowByTheBook(a, 0);
  uint64_t y = (a + kGolden) * 0xbf58476d1ce4e5b9ull;
  y ^= y >> 28;
  y *= 0x94d049bb133111ebull;
  const uint64_t row_hi = y ^ (y >> 31);
  const U128 row = (U128{row_hi} << 64) | low.row | 1;
  const uint64_t s = FastRange(a, 128 * (blocks - 1));
  const uint64_t q = s / 128, o = s % 128;
  auto start = [&](uint64_t t) {
    return c0 + t * r + (t > blocks - k ? t - (blocks - k) : 0);
  };
  auto column = [&](uint64_t c) {
    return (U128{Word(payload, (dir + 16 * c) / 8 + 1)} << 64) |
           Word(payload, (dir + 16 * c) / 8);
  };
  const uint64_t c = q >= blocks - k ? r + 1 : r;
  for (uint64_t j = 0; j < c; j++) {
    const U128 lo = column(start(q) + j), hi = column(start(q + 1) + j);
    const U128 seg = (lo & (row << o)) ^ (o == 0 ? 0 : hi & (row >> (128 - o)));
    if (Parity128(seg) != ((low.fp >> j) & 1)) return false;
  }
  return true;
}

enum class Form { kDense, kCompactDense, kBanded, kSegmented };

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
  if (p[0] == 2) {  // segmented: u8 r, u32le S
    *form = Form::kSegmented;
    return SegmentedByTheBook(f.payload, static_cast<uint8_t>(p[1]), U32(p, 2),
                              h);
  }
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
  const uint64_t blocks = U32(p, 2);
  const uint64_t words = f.payload.size() / 8;
  if (p[0] != 1 || blocks < 2 || f.payload.size() % 8 != 0 ||
      words / blocks < 1 || words / blocks > 32 ||
      (words / blocks == 32 && words % blocks != 0)) {
    return false;
  }
  *form = Form::kBanded;
  return BandedByTheBook(f.payload, blocks, salt, h);
}

// The banded form (form 1), which builders wrote for n > 64 keys before the
// segmented form and still write where it does not apply: Key(0 .. n-1)
// hashed with the spec's seed, through the builder's internal options.
std::string BuildBanded(const FilterSpec& spec, uint64_t n) {
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < n; i++) hashes.push_back(Hash64(Key(i), spec.seed));
  internal::RibbonBuildOptions banded;
  banded.segmented = false;
  std::string bytes;
  internal::AppendRibbonFilter(spec, hashes, &bytes, banded);
  return bytes;
}

// What a ribbon filter is, read by the book: its form and, if segmented,
// its columns per block `r` and segments `S` (the kind params).
struct RibbonShape {
  Form form = Form::kDense;
  uint64_t r = 0, segments = 0;
};

// Checks the second implementation against FilterReader on `bytes`, the
// filter of Key(0 .. n-1), on the keys and on as many absent keys (at
// least 3000), through the single query and the batched one (on x86-64
// the reader may build them for different instruction sets).
RibbonShape ExpectRibbonAgrees(const std::string& bytes, uint64_t n) {
  Filter f;
  EXPECT_TRUE(ParseByTheBook(bytes, &f));
  EXPECT_EQ(f.kind, 6);
  const FilterReader r = FilterReader::Open(bytes);
  EXPECT_TRUE(r.valid());
  RibbonShape shape;
  int absent_matches = 0;
  const uint64_t probes = n < 3000 ? 3000 : n;
  std::vector<uint64_t> absent_hashes;
  std::vector<bool> books;
  for (uint64_t i = 0; i < probes; i++) {
    const std::string present = Key(i % n), absent = AbsentKey(i);
    EXPECT_TRUE(RibbonByTheBook(f, Hash64(present, f.seed), &shape.form));
    EXPECT_TRUE(r.MayMatch(present));
    const bool book = RibbonByTheBook(f, Hash64(absent, f.seed), &shape.form);
    EXPECT_EQ(book, r.MayMatch(absent)) << absent;
    absent_hashes.push_back(r.Hash(absent));
    books.push_back(book);
    absent_matches += book;
  }
  std::unique_ptr<bool[]> batched(new bool[probes]);
  r.MayMatchHashes(probes, absent_hashes.data(), batched.get());
  for (uint64_t i = 0; i < probes; i++) {
    EXPECT_EQ(books[i], batched[i]) << AbsentKey(i);
  }
  // Absent keys reach the columns: most fail.
  EXPECT_LT(absent_matches, static_cast<int>(probes / 2));
  if (shape.form == Form::kSegmented) {
    shape.r = static_cast<uint8_t>(f.params[1]);
    shape.segments = U32(f.params, 2);
  }
  return shape;
}

// The same for the filter a builder of `spec` writes.
RibbonShape ExpectRibbonAgrees(const char* spec, uint64_t n) {
  SCOPED_TRACE(std::string(spec) + " n=" + std::to_string(n));
  return ExpectRibbonAgrees(test::BuildFilter(test::MustParse(spec), n), n);
}
Form ExpectBandedAgrees(const char* spec, uint64_t n) {
  SCOPED_TRACE(std::string(spec) + " banded n=" + std::to_string(n));
  return ExpectRibbonAgrees(BuildBanded(test::MustParse(spec), n), n).form;
}

TEST(FormatDecoderTest, Crc7OfTheDocument) {
  EXPECT_EQ(Crc7("123456789"), 0x75u);
  EXPECT_EQ(Crc7(""), 0u);
}

// The trailers earlier versions wrote (the unchecked full trailer and
// compact form) still decode by the book with the same answers.
TEST(FormatDecoderTest, UncheckedTrailersFromTheDocument) {
  EXPECT_EQ(ExpectRibbonAgrees(test::Unchecked(test::BuildFilter(
                                   test::MustParse("ribbon:10"), 33)),
                               33)
                .form,
            Form::kCompactDense);
  EXPECT_EQ(ExpectRibbonAgrees(test::Unchecked(test::BuildFilter(
                                   test::MustParse("ribbon:10:seed=3"), 33)),
                               33)
                .form,
            Form::kDense);
  EXPECT_EQ(ExpectRibbonAgrees(test::Unchecked(test::BuildFilter(
                                   test::MustParse("ribbon:9.5"), 2000)),
                               2000)
                .form,
            Form::kSegmented);
}

TEST(FormatDecoderTest, RibbonFromTheDocumentAgreesWithTheReader) {
  // Dense with a full trailer (a seed; without one, 5 keys now get the
  // compact form: the checked full trailer would make the filter larger).
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:8.5:seed=2", 5).form, Form::kDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:8.5", 5).form, Form::kCompactDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:10:seed=3", 33).form, Form::kDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:7.3:seed=11", 64).form, Form::kDense);
  // Compact dense: LevelDB's sizes, a padded tiny filter, r > 16 (the
  // header's bit 6).
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:10", 33).form, Form::kCompactDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:9.7", 36).form, Form::kCompactDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:10", 6).form, Form::kCompactDense);
  EXPECT_EQ(ExpectRibbonAgrees("ribbon:24", 30).form, Form::kCompactDense);
  // Banded (written through the builder's internal options): integer and
  // fractional columns (k > 0), a seed, 32 columns.
  EXPECT_EQ(ExpectBandedAgrees("ribbon:9.5", 2000), Form::kBanded);
  EXPECT_EQ(ExpectBandedAgrees("ribbon:7.3", 100000), Form::kBanded);
  EXPECT_EQ(ExpectBandedAgrees("ribbon:12:seed=5", 3000), Form::kBanded);
  EXPECT_EQ(ExpectBandedAgrees("ribbon:32", 5000), Form::kBanded);
}

TEST(FormatDecoderTest, SegmentedRibbonFromTheDocumentAgreesWithTheReader) {
  struct Case {
    const char* spec;
    uint64_t n, r, segments;
  };
  // One segment (small and the largest, 2^15 keys), several (n > 2^15, the last
  // one short), seeded, r = 1 and r = 31 (the most the form takes), whole
  // and fractional bits per key (extra columns in the last blocks).
  const Case cases[] = {
      {"ribbon:9.5", 1000, 9, 1},
      {"ribbon:9.5", 2000, 9, 1},
      {"ribbon:10", 32768, 9, 1},
      {"ribbon:7.3", 100000, 7, 4},
      {"ribbon:12:seed=5", 3000, 11, 1},
      {"ribbon:8.6:seed=77", 70000, 8, 3},
      {"ribbon:2", 40000, 1, 2},
      {"ribbon:32", 5000, 31, 1},
      {"ribbon:31.9:seed=3", 40000, 31, 2},
  };
  for (const Case& c : cases) {
    const RibbonShape shape = ExpectRibbonAgrees(c.spec, c.n);
    EXPECT_EQ(shape.form, Form::kSegmented) << c.spec << " n=" << c.n;
    EXPECT_EQ(shape.r, c.r) << c.spec << " n=" << c.n;
    EXPECT_EQ(shape.segments, c.segments) << c.spec << " n=" << c.n;
  }
}

// A damaged directory in the unchecked trailer of earlier versions, which
// does not cover the payload: the rules under which the document says a
// reader answers "may match", for the whole filter or for the keys of one
// segment, agree with the reader. (The checked trailer refuses each of
// these damaged filters as a whole.)
TEST(FormatDecoderTest, SegmentedDirectoryRulesAgreeWithTheReader) {
  const std::string checked =
      test::BuildFilter(test::MustParse("ribbon:7.3"), 100000);  // S = 4
  const std::string good = test::Unchecked(checked);
  // Entry e is payload bytes 8e .. 8e + 7: u32le C_e, salt_e, u24le T_e.
  struct Damage {
    const char* what;
    uint64_t byte;   // of the payload
    int value;       // -1: copy entry 1's byte (T_2 = T_1: B_1 = 0)
    bool all_match;  // every key "may match" (else segments 1 and 2 only)
  };
  const Damage damages[] = {
      {"salt byte of entry S", 8 * 4 + 4, 1, true},
      {"C_0 not 0", 0, 1, true},
      {"T_0 not 0", 5, 1, true},
      {"C_S not W", 8 * 4 + 1, 0xff, true},
      // C_2 past W (segment 1), so columns decrease (segment 2).
      {"C_2 past W", 8 * 2 + 3, 0x7f, false},
      // B_1 = 0; segment 2 then has too few columns for its blocks.
      {"T_2 = T_1", 8 * 2 + 5, -1, false},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    std::string bytes = good;
    if (d.value >= 0) {
      bytes[d.byte] = static_cast<char>(d.value);
    } else {
      for (int i = 0; i < 3; i++) bytes[d.byte + i] = bytes[d.byte - 8 + i];
    }
    std::string damaged_checked = checked;
    std::copy(bytes.begin(), bytes.begin() + 8 * 5, damaged_checked.begin());
    Filter f;
    EXPECT_FALSE(ParseByTheBook(damaged_checked, &f));
    EXPECT_FALSE(FilterReader::Open(damaged_checked).valid());
    ASSERT_TRUE(ParseByTheBook(bytes, &f));
    const FilterReader r = FilterReader::Open(bytes);
    Form form = Form::kDense;
    int matches = 0;
    for (uint64_t i = 0; i < 4000; i++) {
      const std::string present = Key(i), absent = AbsentKey(i);
      ASSERT_EQ(RibbonByTheBook(f, Hash64(present, 0), &form),
                r.MayMatch(present));
      const bool book = RibbonByTheBook(f, Hash64(absent, 0), &form);
      ASSERT_EQ(book, r.MayMatch(absent)) << absent;
      matches += book;
    }
    ASSERT_EQ(form, Form::kSegmented);
    // All keys, or the half in two segments of four plus ~1% elsewhere.
    if (d.all_match) {
      EXPECT_EQ(matches, 4000);
    } else {
      EXPECT_GT(matches, 1800);
      EXPECT_LT(matches, 2300);
    }
  }
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

// The reader compiles a query per probe count up to 16 and one for the
// rest: every count a reader accepts (1 to 32), with payloads of three bit
// densities so that keys pass many probes before they fail or pass all,
// agrees with the document through the single, batched and hash queries.
TEST(FormatDecoderTest, BlockedBloomAgreesAtEveryProbeCount) {
  std::mt19937_64 rng(32);
  constexpr size_t kKeys = 1000;
  std::vector<std::string> keys;
  for (size_t i = 0; i < kKeys; i++) keys.push_back(AbsentKey(i));
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  for (int k = 1; k <= 32; k++) {
    size_t yes = 0;
    for (const double density : {0.5, 0.9, 0.98}) {
      SCOPED_TRACE("k=" + std::to_string(k) +
                   " density=" + std::to_string(density));
      std::bernoulli_distribution bit(density);
      std::string bytes(64 * 37, '\0');
      for (char& c : bytes) {
        for (int b = 0; b < 8; b++) c = static_cast<char>(c | (bit(rng) << b));
      }
      internal::Trailer t;
      t.kind = FilterKind::kBlockedBloom;
      t.payload_size = bytes.size();
      t.params[t.params_size++] = static_cast<uint8_t>(k);
      internal::AppendTrailer(t, &bytes);
      Filter f;
      ASSERT_TRUE(ParseByTheBook(bytes, &f));
      ASSERT_EQ(f.kind, 2);
      const FilterReader r = FilterReader::Open(bytes);
      ASSERT_TRUE(r.valid());
      std::vector<uint64_t> hashes;
      for (const std::string& key : keys) hashes.push_back(r.Hash(key));
      std::unique_ptr<bool[]> batched(new bool[kKeys]);
      std::unique_ptr<bool[]> by_hash(new bool[kKeys]);
      r.MayMatch(kKeys, views.data(), batched.get());
      r.MayMatchHashes(kKeys, hashes.data(), by_hash.get());
      for (size_t i = 0; i < kKeys; i++) {
        const bool book = BlockedBloomByTheBook(f, Hash64(keys[i], f.seed));
        ASSERT_EQ(book, r.MayMatch(keys[i])) << keys[i];
        ASSERT_EQ(book, batched[i]) << keys[i];
        ASSERT_EQ(book, by_hash[i]) << keys[i];
        yes += book;
      }
    }
    // Both answers occur at every count (0.98^32 passes half the keys).
    EXPECT_GT(yes, kKeys / 4) << k;
    EXPECT_LT(yes, 3 * kKeys - kKeys / 4) << k;
  }
}

// Section "Keyed filters": the derived secret S, the key id a writer of S
// stores, and the key's hash h (section "Hash").
class SecretByTheBook {
 public:
  explicit SecretByTheBook(std::string_view secret) {
    XXH3_generateSecret(s_, sizeof(s_), secret.data(), secret.size());
  }
  uint32_t KeyId() const {
    return static_cast<uint32_t>(
        XXH3_64bits_withSecret("sstfilter.key_id", 16, s_, sizeof(s_)));
  }
  uint64_t Hash(std::string_view key, uint64_t seed) const {
    const uint64_t x =
        XXH3_64bits_withSecret(key.data(), key.size(), s_, sizeof(s_));
    return seed == 0 ? x : Mix64(x ^ seed);
  }

 private:
  unsigned char s_[192];
};

// The fixed secret of the keyed golden bytes (as tests/keyed_test.cc and
// docs/FORMAT.md's keyed examples): 32 ASCII bytes.
constexpr char kTestSecret[] = "sstfilter test secret 0123456789";

std::unique_ptr<const FilterSecret> TestSecret() {
  std::unique_ptr<const FilterSecret> s;
  if (!NewFilterSecret(kTestSecret, &s).ok()) abort();
  return s;
}

// docs/FORMAT.md with every run of white space read as one space.
std::string FormatDoc() {
  std::ifstream in(SSTFILTER_SOURCE_DIR "/docs/FORMAT.md");
  EXPECT_TRUE(in.good());
  std::string doc, word;
  while (in >> word) doc += word + " ";
  return doc;
}

// The hex digits of the first `...` after "): " that follows `anchor`
// in docs/FORMAT.md.
std::string DocExample(const std::string& anchor) {
  static const std::string doc = FormatDoc();
  const size_t at = doc.find(anchor);
  if (at == std::string::npos) return "no \"" + anchor + "\" in FORMAT.md";
  const size_t open = doc.find("): `", at) + 4;
  const size_t close = doc.find('`', open);
  std::string hex;
  for (char ch : doc.substr(open, close - open)) {
    if (std::isxdigit(static_cast<unsigned char>(ch))) hex += ch;
  }
  return hex;
}

// Keyed filters as writers write them: golden bytes (the size, the full
// trailer from payload_size on, a Hash64 of the whole filter), then a
// decoder of docs/FORMAT.md alone (trailer with flags 2 or 3, [seed] then
// [key_id]; the keyed hash; the kind's match rule) that answers as
// FilterReader with the secret for every key probed, present and absent.
// Without the secret the reader may match every key. docs/FORMAT.md
// shows three of the trailers.
TEST(FormatDecoderTest, KeyedFiltersFromTheDocumentAgreeWithTheReader) {
  const auto secret = TestSecret();
  const SecretByTheBook book(kTestSecret);
  struct Case {
    const char* spec;
    uint64_t n;
    int kind;
    uint8_t flags;        // 2: keyed; 3: a seed and keyed
    Form form;            // kind 6
    size_t size;          // of the whole filter
    const char* trailer;  // hex, from payload_size on
    uint64_t hash;        // Hash64 of the whole filter
    double max_fpr;       // about twice the expected FPR
    const char* doc;      // docs/FORMAT.md shows the trailer after this
  };
  const Case cases[] = {
      // Segmented ribbon, one segment: payload_size 2496, flags 2, key id
      // 0x1fa75097, form 2, r 9, S 1, check32, len 19, tag 0x26.
      {"ribbon:10:keyed", 2000, 6, 2, Form::kSegmented, 2515,
       "c013"
       "02"
       "9750a71f"
       "02"
       "09"
       "01000000"
       "2f931e79"
       "13"
       "26",
       12717941583291591073ull, 0.004, "over 2000 keys (segmented"},
      // Two segments (n > 2^15): payload_size 49992, S 2.
      {"ribbon:10:keyed", 40000, 6, 2, Form::kSegmented, 50012,
       "c88603"
       "02"
       "9750a71f"
       "02"
       "09"
       "02000000"
       "9b9b5bf6"
       "14"
       "26",
       4290505886681081117ull, 0.004, "over 40000 keys (`S = 2`)"},
      // Segmented with a seed: flags 3, the seed 7 (u64le), then the key
      // id.
      {"ribbon:10:keyed:seed=7", 3000, 6, 3, Form::kSegmented, 3771,
       "a01d"
       "03"
       "0700000000000000"
       "9750a71f"
       "02"
       "09"
       "01000000"
       "7a509bb4"
       "1b"
       "26",
       17668410600177528500ull, 0.004,
       "`ribbon:10:keyed:seed=7` over 3000 keys (flags 3"},
      // Dense with a seed (n <= 64): form 0, salt 1, m 41 (40 keys and a
      // spare slot), r 10.
      {"ribbon:10:keyed:seed=7", 40, 6, 3, Form::kDense, 78,
       "34"
       "03"
       "0700000000000000"
       "9750a71f"
       "0001290a0000"
       "6af277b8"
       "1a"
       "26",
       12049118166116202864ull, 0.004, nullptr},
      // Blocked Bloom with a seed: 20 blocks (19 would miss the spec's
      // FPR), k 7, tag 0x22.
      {"blocked_bloom:10:keyed:seed=9", 1000, 2, 3, Form::kDense, 1302,
       "800a"
       "03"
       "0900000000000000"
       "9750a71f"
       "07"
       "04e4f686"
       "16"
       "22",
       17712904892457346081ull, 0.02, nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.spec) + " n=" + std::to_string(c.n));
    const std::string bytes =
        test::BuildFilter(test::MustParse(c.spec), c.n, secret.get());
    Filter f;
    ASSERT_TRUE(ParseByTheBook(bytes, &f));
    ASSERT_EQ(f.kind, c.kind);
    ASSERT_TRUE(f.keyed);
    EXPECT_EQ(f.key_id, book.KeyId());
    EXPECT_EQ(f.key_id, 0x1fa75097u);
    const size_t len = Byte(bytes, bytes.size() - 2);
    const std::string trailer = test::Hex(bytes.substr(bytes.size() - len));
    EXPECT_EQ(bytes.size(), c.size);
    EXPECT_EQ(trailer, c.trailer);
    EXPECT_EQ(Hash64(bytes), c.hash);
    if (c.doc != nullptr) {
      EXPECT_EQ(DocExample(c.doc), c.trailer);
    }
    // The flags byte follows the payload_size varint.
    size_t flags_at = bytes.size() - len;
    while (Byte(bytes, flags_at) & 0x80) flags_at++;
    flags_at++;
    EXPECT_EQ(Byte(bytes, flags_at), c.flags);
    EXPECT_EQ(f.seed != 0, (c.flags & 1) != 0);

    const FilterReader r = FilterReader::Open(bytes, secret.get());
    const FilterReader without = FilterReader::Open(bytes);
    ASSERT_TRUE(r.valid());
    const uint64_t probes = std::max<uint64_t>(c.n, 20000);
    uint64_t absent_matches = 0;
    for (uint64_t i = 0; i < probes; i++) {
      const std::string present = Key(i % c.n), absent = AbsentKey(i);
      const uint64_t hp = book.Hash(present, f.seed);
      const uint64_t ha = book.Hash(absent, f.seed);
      Form form = Form::kDense;
      bool in, out;
      if (c.kind == 6) {
        in = RibbonByTheBook(f, hp, &form);
        out = RibbonByTheBook(f, ha, &form);
        ASSERT_EQ(form, c.form);
      } else {
        in = BlockedBloomByTheBook(f, hp);
        out = BlockedBloomByTheBook(f, ha);
      }
      ASSERT_TRUE(in) << present;
      ASSERT_TRUE(r.MayMatch(present)) << present;
      ASSERT_EQ(out, r.MayMatch(absent)) << absent;
      absent_matches += out;
      if (i < 1000) {
        ASSERT_TRUE(without.MayMatch(absent));
      }
    }
    // The absent keys reach the match rule: few pass.
    EXPECT_LT(absent_matches, c.max_fpr * probes);
  }
}

// The keyed dense filter of 40 keys (`ribbon:10:keyed:seed=7`) as
// releases before the spare slot wrote it: 40 slots, salt 1. The reader
// and the document's decoder still agree on it, key for key.
constexpr char kSquareKeyedDense40[] =
    "ca00ef896821008bd36a06efb552eb3f314b5d981762802f12e9433766a8e49baab1d4"
    "84e30cd7a11f019d948cff815aa849320307000000000000009750a71f0001280a0000"
    "b14b270f1a26";

TEST(FormatDecoderTest, GoldenSquareKeyedDenseFilterStillReads) {
  const auto secret = TestSecret();
  const SecretByTheBook book(kTestSecret);
  const std::string bytes = test::FromHex(kSquareKeyedDense40);
  ASSERT_EQ(bytes.size(), 76u);
  EXPECT_EQ(Hash64(bytes), 5096119925116672081ull);
  Filter f;
  ASSERT_TRUE(ParseByTheBook(bytes, &f));
  ASSERT_EQ(f.kind, 6);
  const FilterReader r = FilterReader::Open(bytes, secret.get());
  ASSERT_TRUE(r.valid());
  uint64_t absent_matches = 0;
  for (uint64_t i = 0; i < 20000; i++) {
    const std::string present = Key(i % 40), absent = AbsentKey(i);
    Form form = Form::kSegmented;
    ASSERT_TRUE(RibbonByTheBook(f, book.Hash(present, f.seed), &form));
    ASSERT_EQ(form, Form::kDense);
    ASSERT_TRUE(r.MayMatch(present)) << present;
    const bool out = RibbonByTheBook(f, book.Hash(absent, f.seed), &form);
    ASSERT_EQ(out, r.MayMatch(absent)) << absent;
    absent_matches += out;
  }
  EXPECT_EQ(absent_matches, 22u);  // r = 10: ~1/1024 of them
}

}  // namespace
}  // namespace sstfilter
