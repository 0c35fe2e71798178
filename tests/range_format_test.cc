// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The range kind (kind 7) read by a second implementation written from
// docs/FORMAT.md alone: the checked full trailer, the params, the key
// image with an offset, the seeded block hash q, the Elias-Fano payload and
// the query rules, with no code shared with the reader (xxHash itself
// aside). It must answer as RangeFilterReader for every range probed.
// Golden bytes pin a filter with a non-zero offset and a seed, and the
// examples in docs/FORMAT.md are checked against the builder's bytes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "sstfilter/hash.h"
#include "sstfilter/range.h"
#include "tests/by_the_book.h"
#include "tests/test_util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sstfilter {
namespace {

using by_the_book::FastRange;
using test::Hex;

uint8_t Byte(std::string_view s, uint64_t i) {
  return static_cast<uint8_t>(s.at(i));
}

// A little-endian integer of `n` bytes at s[i].
uint64_t LittleEndian(std::string_view s, uint64_t i, int n) {
  uint64_t v = 0;
  for (int b = 0; b < n; b++) v |= uint64_t{Byte(s, i + b)} << (8 * b);
  return v;
}

// A range filter as docs/FORMAT.md describes it: section "Layout" (the
// full trailer, either form) and kind 7's params and payload, the stored
// hashes decoded from the Elias-Fano arrays.
struct RangeByTheBook {
  bool valid = false;
  uint64_t seed = 0, len = 0, offset = 0, s = 0, l = 0, r = 0, m = 0;
  std::vector<uint64_t> v;  // v_0 < ... < v_{m-1}

  explicit RangeByTheBook(std::string_view f) { valid = Parse(f); }

  bool Parse(std::string_view f) {
    if (f.size() < 5 || (Byte(f, f.size() - 1) & 0x80)) return false;
    const uint8_t tag = Byte(f, f.size() - 1), len_t = Byte(f, f.size() - 2);
    if ((tag & 15) != 7) return false;
    const uint64_t check_seed = (uint64_t{len_t} << 8) | tag;
    std::string_view body;
    if (tag >> 4 == 2) {  // checked: u32le over payload and body
      if (len_t < 8 || len_t > f.size()) return false;
      if ((XXH3_64bits_withSeed(f.data(), f.size() - 6, check_seed) &
           0xffffffffu) != LittleEndian(f, f.size() - 6, 4)) {
        return false;
      }
      body = f.substr(f.size() - len_t, len_t - 6);
    } else if (tag >> 4 == 1) {  // unchecked: a check byte over the body
      if (len_t < 5 || len_t > f.size()) return false;
      body = f.substr(f.size() - len_t, len_t - 3);
      if ((XXH3_64bits_withSeed(body.data(), body.size(), check_seed) & 0xff) !=
          Byte(f, f.size() - 3)) {
        return false;
      }
    } else {
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
    if (payload_size != f.size() - len_t || pos >= body.size()) return false;
    const uint8_t flags = Byte(body, pos++);
    if (flags & ~1u) return false;  // never keyed
    if (flags & 1) {
      if (body.size() - pos < 8) return false;
      seed = LittleEndian(body, pos, 8);
      pos += 8;
      if (seed == 0) return false;
    }
    // Params: u8 len, u16le offset, u8 s, u8 l, u64le r, u32le m.
    if (body.size() - pos != 17) return false;
    len = Byte(body, pos);
    offset = LittleEndian(body, pos + 1, 2);
    s = Byte(body, pos + 3);
    l = Byte(body, pos + 4);
    r = LittleEndian(body, pos + 5, 8);
    m = LittleEndian(body, pos + 13, 4);
    uint64_t log2r = 0;
    while ((r >> (log2r + 1)) != 0) log2r++;
    if (len < 1 || len > 8 || r < 4 || r >= (uint64_t{1} << 62) || m > r ||
        l > log2r || s + 1 > log2r) {
      return false;
    }
    const uint64_t n_buckets = ((r - 1) >> l) + 1;
    const uint64_t low_words = (m * l + 63) / 64;
    const uint64_t upper_words = (m + n_buckets + 63) / 64;
    const uint64_t samples = (n_buckets + 511) / 512;
    if (payload_size != 8 * low_words + 8 * upper_words + 4 * samples) {
      return false;
    }
    // Bit j of the array starting at payload byte `at` (LSB-first words).
    auto bit = [&](uint64_t at, uint64_t j) {
      return (LittleEndian(f, at + 8 * (j / 64), 8) >> (j % 64)) & 1;
    };
    const uint64_t upper_at = 8 * low_words;
    uint64_t i = 0;
    for (uint64_t j = 0; j < m + n_buckets && i < m; j++) {
      if (!bit(upper_at, j)) continue;
      uint64_t low = 0;
      for (uint64_t b = 0; b < l; b++) low |= bit(0, i * l + b) << b;
      v.push_back(((j - i) << l) | low);  // bucket j - i: zeros before it
      i++;
    }
    // The samples as defined: sample[g] = #{i : (v_i >> l) < 512 g}.
    const uint64_t samples_at = upper_at + 8 * upper_words;
    for (uint64_t g = 0; g < samples; g++) {
      const uint64_t expect = std::count_if(
          v.begin(), v.end(), [&](uint64_t x) { return (x >> l) < 512 * g; });
      EXPECT_EQ(LittleEndian(f, samples_at + 4 * g, 4), expect) << g;
    }
    EXPECT_EQ(v.size(), m);
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    return v.size() == m;
  }

  // q(b) and h(x), section "Hash" of kind 7.
  uint64_t Q(uint64_t b) const {
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
      le[i] = static_cast<unsigned char>(b >> (8 * i));
    return FastRange(XXH3_64bits_withSeed(le, 8, seed), r);
  }
  uint64_t H(uint64_t x) const {
    const uint64_t in_block = s == 0 ? 0 : x & ((uint64_t{1} << s) - 1);
    return (Q(x >> s) + in_block) % r;
  }

  // Whether a stored hash lies in [x, x + n - 1], taken mod r.
  bool Hits(uint64_t x, uint64_t n) const {
    auto any_in = [&](uint64_t a, uint64_t c) {  // [a, c], a <= c
      auto it = std::lower_bound(v.begin(), v.end(), a);
      return it != v.end() && *it <= c;
    };
    if (x + n <= r) return any_in(x, x + n - 1);
    return any_in(x, r - 1) || any_in(0, x + n - 1 - r);
  }

  // Section "Query" of kind 7.
  bool MayContain(uint64_t lo, uint64_t hi) const {
    if (!valid) return true;
    if (lo > hi) return false;
    if (m == 0) return false;
    if ((hi >> s) - (lo >> s) >= 16) return true;
    for (uint64_t b = lo >> s; b <= hi >> s; b++) {
      const uint64_t a = std::max(lo, b << s);
      const uint64_t c = std::min(hi, (b << s) + ((uint64_t{1} << s) - 1));
      if (Hits(H(a), c - a + 1)) return true;
    }
    return false;
  }

  // Section "Key image" of kind 7.
  uint64_t Image(std::string_view k) const {
    uint64_t x = 0;
    for (uint64_t i = 0; i < len; i++) {
      x = x * 256 + (offset + i < k.size() ? Byte(k, offset + i) : 0);
    }
    return x;
  }
  bool MayContainKeys(std::string_view lower,
                      std::optional<std::string_view> upper) const {
    if (!valid) return true;
    if (!upper.has_value()) {
      if (offset > 0) return true;
      const uint64_t top =
          len == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * len)) - 1;
      return MayContain(Image(lower), top);
    }
    if (!(lower < *upper) || lower.size() < offset || upper->size() < offset ||
        lower.substr(0, offset) != upper->substr(0, offset)) {
      return true;
    }
    uint64_t hi = Image(*upper);
    if (upper->size() > offset && upper->size() <= offset + len &&
        upper->back() != 0) {
      hi--;
    }
    return MayContain(Image(lower), hi);
  }
};

RangeFilterSpec MustParseRange(std::string_view text) {
  RangeFilterSpec spec;
  EXPECT_TRUE(ParseRangeFilterSpec(text, &spec).ok()) << text;
  return spec;
}

constexpr char kAlphabet[] = {'\0', '\x01', 'a', 'b', 'c', '\x7f', '\xff'};

// Keys "t:" + `len` random bytes from a small alphabet (so that bounds
// share bytes and end on zero bytes), or a few other prefixes.
std::string RandomKey(std::mt19937_64& rng) {
  static const char prefixes[][3] = {"t:", "t:", "t:", "t:", "t;", "s:", "t"};
  std::string k = prefixes[rng() % 7];
  const size_t n = rng() % 7;
  for (size_t i = 0; i < n; i++) k += kAlphabet[rng() % 7];
  return k;
}

struct Built {
  std::string bytes;
  std::vector<std::string> keys;
};

Built BuildKeys(const char* spec, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Built b;
  RangeFilterBuilder builder(MustParseRange(spec));
  for (size_t i = 0; i < n; i++) {
    std::string k = "t:";
    for (int j = 0; j < 6; j++) k += kAlphabet[rng() % 7];
    k.resize(2 + rng() % 7);
    b.keys.push_back(k);
    builder.AddKey(k);
  }
  builder.Finish(&b.bytes);
  return b;
}

// The book and the reader agree on every probe: key ranges (bounds that
// share the offset's prefix or not, short, ending on zero or non-zero
// bytes, no upper bound) and image ranges (short and long, across
// blocks, past 16 blocks); no added key is ever missed.
void ExpectAgrees(const Built& b, uint64_t probes_seed) {
  const RangeByTheBook book(b.bytes);
  ASSERT_TRUE(book.valid);
  const RangeFilterReader r = RangeFilterReader::Open(b.bytes);
  ASSERT_TRUE(r.valid());
  EXPECT_EQ(book.seed, r.seed());
  EXPECT_EQ(book.offset, r.offset());
  EXPECT_EQ(book.r, r.universe());
  std::mt19937_64 rng(probes_seed);
  uint64_t empty_answers = 0;
  for (const std::string& k : b.keys) {
    ASSERT_TRUE(book.MayContainKeys(k, k + '\0')) << Hex(k);
    ASSERT_TRUE(book.MayContain(book.Image(k), book.Image(k)));
  }
  for (int i = 0; i < 20000; i++) {
    std::string lower = RandomKey(rng), upper = RandomKey(rng);
    if (upper < lower) std::swap(lower, upper);
    const bool no_upper = rng() % 10 == 0;
    const std::optional<std::string_view> u =
        no_upper ? kNoUpperBound : std::optional<std::string_view>(upper);
    const bool expect = book.MayContainKeys(lower, u);
    ASSERT_EQ(expect, r.MayContainKeys(lower, u))
        << Hex(lower) << " " << (no_upper ? "none" : Hex(upper));
    ASSERT_EQ(expect, RangeFilterReader::MayContainKeysOnce(b.bytes, lower, u));
    empty_answers += !expect;
    // A narrow key range: `lower` and a key just past it.
    const std::string next = lower + kAlphabet[rng() % 7];
    const bool narrow = book.MayContainKeys(lower, next);
    ASSERT_EQ(narrow, r.MayContainKeys(lower, next)) << Hex(lower);
    empty_answers += !narrow;
    // Image ranges of 1 to 2^20 images, around the stored images.
    const uint64_t base =
        b.keys.empty() ? rng() : book.Image(b.keys[rng() % b.keys.size()]);
    const uint64_t lo = base - std::min<uint64_t>(base, rng() % 5000);
    const uint64_t hi = lo + (rng() % (uint64_t{1} << (rng() % 21)));
    const bool images = book.MayContain(lo, hi);
    ASSERT_EQ(images, r.MayContain(lo, hi)) << lo << " " << hi;
    empty_answers += !images;
  }
  // The probes reach the payload: many ranges answer "empty".
  EXPECT_GT(empty_answers, 2000u);
}

TEST(RangeFormatTest, DecoderFromTheDocumentAgreesWithTheReader) {
  for (const char* spec :
       {"range:12:offset=2:len=4:max_range=64:seed=99",
        "range:8:offset=2:len=2", "range:16:offset=1:len=8:max_range=1:seed=3",
        "range:6:seed=18446744073709551615", "range:10:max_range=16"}) {
    for (size_t n : {0, 1, 40, 3000}) {
      SCOPED_TRACE(std::string(spec) + " n=" + std::to_string(n));
      ExpectAgrees(BuildKeys(spec, n, n + 7), n);
    }
  }
}

// A filter with a non-zero offset and a seed, pinned: its size, its
// trailer from payload_size on, a Hash64 of the whole.
TEST(RangeFormatTest, GoldenOffsetAndSeed) {
  const Built b =
      BuildKeys("range:12:offset=2:len=4:max_range=64:seed=99", 3000, 11);
  ASSERT_EQ(b.bytes.size(), 1790u);
  const size_t len = Byte(b.bytes, b.bytes.size() - 2);
  EXPECT_EQ(Hex(b.bytes.substr(b.bytes.size() - len)),
            "dc0d"              // payload_size 1756
            "01"                // flags: a seed
            "6300000000000000"  // seed 99
            "04"                // len 4
            "0200"              // offset 2
            "06"                // s: blocks of 64
            "0a"                // l
            "000c120000000000"  // r = 1155 * 2^10 (distinct images)
            "83040000"          // m = 1155
            "72f509e6"          // check32
            "22"                // len 34
            "27");              // tag: checked, kind 7
  EXPECT_EQ(Hash64(b.bytes), 3471790250081687153ull);
}

// docs/FORMAT.md's text from `from` on: the bytes of the next ``` block.
std::string DocExampleBytes(const std::string& doc, const std::string& from) {
  const size_t at = doc.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return "";
  const size_t open = doc.find("```\n", at);
  const size_t close = doc.find("```", open + 4);
  EXPECT_NE(close, std::string::npos);
  std::string hex;
  for (char c : doc.substr(open + 4, close - open - 4)) {
    if (std::isxdigit(static_cast<unsigned char>(c))) hex += c;
  }
  return hex;
}

// The examples of kind 7 in docs/FORMAT.md are what the builder writes.
TEST(RangeFormatTest, DocumentExamplesAreTheBuildersBytes) {
  std::ifstream in(SSTFILTER_SOURCE_DIR "/docs/FORMAT.md");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  {
    RangeFilterBuilder builder(MustParseRange("range:6:max_range=4"));
    for (uint64_t x : {3, 1000, 1001}) builder.AddImage(x);
    std::string bytes;
    builder.Finish(&bytes);
    EXPECT_EQ(DocExampleBytes(doc, "Example (`range:6:max_range=4`"),
              Hex(bytes));
  }
  {
    const char* spec = "range:6:offset=2:len=2:max_range=4:seed=5";
    RangeFilterBuilder builder(MustParseRange(spec));
    for (const char* k : {"t:AB", "t:AC", "t:ZZ"}) builder.AddKey(k);
    std::string bytes;
    builder.Finish(&bytes);
    EXPECT_EQ(DocExampleBytes(doc, std::string("(`") + spec + "`"), Hex(bytes));
    // The decoder reads the example too.
    const RangeByTheBook book(bytes);
    ASSERT_TRUE(book.valid);
    EXPECT_EQ(book.v.size(), 3u);
    EXPECT_FALSE(book.MayContainKeys("t:AD", "t:AF"));
    EXPECT_FALSE(RangeFilterReader::Open(bytes).MayContainKeys("t:AD", "t:AF"));
    EXPECT_TRUE(book.MayContainKeys("t:AC", "t:AD"));
  }
}

}  // namespace
}  // namespace sstfilter
