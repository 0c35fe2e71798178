// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The mutable filters (include/sstfilter/mutable.h): insert/erase/contains
// sequences against a std::unordered_set model, a full cuckoo filter,
// saturated counters, serialization round trips, and bad input.

#include "sstfilter/mutable.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "sstfilter/filter.h"
#include "sstfilter/params.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::AbsentKey;
using test::Key;

MutableFilterOptions Options(uint64_t capacity, double fpr, uint64_t seed = 0) {
  MutableFilterOptions o;
  o.capacity = capacity;
  o.target_fpr = fpr;
  o.seed = seed;
  return o;
}

std::string Bytes(const DynamicCuckooFilter& f) {
  std::string s;
  f.Serialize(&s);
  return s;
}
std::string Bytes(const CountingBloomFilter& f) {
  std::string s;
  f.Serialize(&s);
  return s;
}

// Random inserts, erases and lookups over keys 0..universe-1, checked
// against a set: every key in the set must be contained (set semantics
// at the caller: a key in the set is not inserted again, and only keys in
// the set are erased). Of the operations, insert_pct percent are inserts,
// as many half erases, the rest lookups. Returns the false-positive rate
// seen on absent keys; *mean_size (if not null) is the mean number of keys
// in the filter at those lookups.
template <typename Filter, typename InsertFn>
double RunModel(Filter* filter, InsertFn insert, uint64_t universe, int ops,
                uint32_t seed, int insert_pct = 34,
                double* mean_size = nullptr) {
  double size_sum = 0;
  std::mt19937 rng(seed);
  std::unordered_set<std::string> model;
  std::vector<std::string> members;  // the model's keys, for erasing
  int absent_queries = 0, false_positives = 0;
  for (int op = 0; op < ops; op++) {
    const std::string key = Key(rng() % universe);
    const int dice = static_cast<int>(rng() % 100);
    switch (dice < insert_pct ? 0 : dice < insert_pct * 3 / 2 ? 1 : 2) {
      case 0:
        if (model.count(key) == 0 && insert(filter, key)) {
          model.insert(key);
          members.push_back(key);
        }
        break;
      case 1:
        if (!members.empty()) {
          const size_t i = rng() % members.size();
          EXPECT_TRUE(filter->Erase(members[i])) << members[i];
          model.erase(members[i]);
          members[i] = members.back();
          members.pop_back();
        }
        break;
      default:
        if (model.count(key) != 0) {
          EXPECT_TRUE(filter->Contains(key)) << "false negative: " << key;
        } else {
          absent_queries++;
          size_sum += static_cast<double>(members.size());
          false_positives += filter->Contains(key);
        }
        break;
    }
    if (op % 5000 == 0 || op == ops - 1) {
      for (const std::string& k : members) {
        if (!filter->Contains(k)) {
          ADD_FAILURE() << "false negative at op " << op << ": " << k;
          return 1;
        }
      }
    }
  }
  if (mean_size) *mean_size = absent_queries ? size_sum / absent_queries : 0;
  return absent_queries == 0 ? 0 : false_positives / double(absent_queries);
}

// The bound of a measured FPR of `probes` absent lookups: twice the
// expected rate plus 5 sigma; and at least one false positive where the
// expected count is 20 or more (else the lookups never reached the filter).
void ExpectFprNear(double fpr, double expected, int probes) {
  EXPECT_LE(fpr, 2 * expected + 5 * std::sqrt(expected / probes))
      << "expected " << expected;
  if (expected * probes >= 20) {
    EXPECT_GE(fpr, expected / 2) << "expected " << expected;
  }
}

// --- DynamicCuckooFilter -----------------------------------------------------

TEST(DynamicCuckooTest, MatchesASetModel) {
  DynamicCuckooFilter f;
  ASSERT_TRUE(DynamicCuckooFilter::Create(Options(5000, 0.001), &f).ok());
  EXPECT_EQ(f.fingerprint_bits(), 13);  // 8 * 0.95 / 8191 = 0.093%
  // A universe of 6000 keys keeps the filter around 3000 keys (~60% load).
  double mean_size = 0;
  const double fpr = RunModel(
      &f,
      [](DynamicCuckooFilter* x, const std::string& k) { return x->Insert(k); },
      6000, 200000, 1, 34, &mean_size);
  // About a third of the 200,000 operations are lookups, half of them absent.
  ExpectFprNear(fpr, CuckooFpr(13, mean_size / f.num_slots()), 30000);
}

TEST(DynamicCuckooTest, FullFilterSaysSoAndKeepsEverything) {
  DynamicCuckooFilter f;
  ASSERT_TRUE(DynamicCuckooFilter::Create(Options(1000, 0.01), &f).ok());
  uint64_t accepted = 0;
  uint64_t i = 0;
  for (; i < 2000; i++) {
    const std::string before = Bytes(f);
    if (!f.Insert(Key(i))) {
      // A refused insert changes nothing at all.
      EXPECT_EQ(Bytes(f), before);
      break;
    }
    accepted++;
  }
  ASSERT_LT(i, 2000u) << "never full";
  EXPECT_EQ(f.size(), accepted);
  // It filled at least 90% of its slots (95% is the sizing target).
  EXPECT_GE(static_cast<double>(accepted) / f.num_slots(), 0.90);
  for (uint64_t j = 0; j < accepted; j++) {
    ASSERT_TRUE(f.Contains(Key(j))) << j;
  }
  // More refusals, still nothing lost.
  int refused = 0;
  for (uint64_t j = accepted + 1; j < accepted + 200; j++) {
    if (f.Insert(Key(j))) {
      accepted++;
      EXPECT_TRUE(f.Contains(Key(j)));
    } else {
      refused++;
    }
  }
  EXPECT_GT(refused, 100);
  for (uint64_t j = 0; j < i; j++) ASSERT_TRUE(f.Contains(Key(j))) << j;
  // Erasing makes room again.
  for (uint64_t j = 0; j < 100; j++) ASSERT_TRUE(f.Erase(Key(j)));
  for (uint64_t j = 0; j < 50; j++) EXPECT_TRUE(f.Insert(AbsentKey(j)));
  for (uint64_t j = 100; j < i; j++) ASSERT_TRUE(f.Contains(Key(j))) << j;
  for (uint64_t j = 0; j < 50; j++) EXPECT_TRUE(f.Contains(AbsentKey(j)));
}

TEST(DynamicCuckooTest, FullFilterModel) {
  // The model run on a filter kept near full: inserts keep failing, and
  // still no key in the set is ever reported absent.
  DynamicCuckooFilter f;
  ASSERT_TRUE(DynamicCuckooFilter::Create(Options(500, 0.01), &f).ok());
  RunModel(
      &f,
      [](DynamicCuckooFilter* x, const std::string& k) { return x->Insert(k); },
      100000, 50000, 2, /*insert_pct=*/60);
  EXPECT_GE(static_cast<double>(f.size()) / f.num_slots(), 0.85);
}

TEST(DynamicCuckooTest, MultisetSemantics) {
  DynamicCuckooFilter f;
  ASSERT_TRUE(DynamicCuckooFilter::Create(Options(100, 0.001), &f).ok());
  EXPECT_TRUE(f.Insert("k"));
  EXPECT_TRUE(f.Insert("k"));
  EXPECT_EQ(f.size(), 2u);
  EXPECT_TRUE(f.Erase("k"));
  EXPECT_TRUE(f.Contains("k"));  // one copy left
  EXPECT_TRUE(f.Erase("k"));
  EXPECT_FALSE(f.Contains("k"));
  EXPECT_FALSE(f.Erase("k"));  // certainly absent: refused
  EXPECT_EQ(f.size(), 0u);
  // A key fits 8 times (two buckets of 4 slots), not 9.
  int stored = 0;
  for (int i = 0; i < 9; i++) stored += f.Insert("same");
  EXPECT_EQ(stored, 8);
}

TEST(DynamicCuckooTest, SerializeRoundTripAndReader) {
  DynamicCuckooFilter f;
  ASSERT_TRUE(DynamicCuckooFilter::Create(Options(3000, 0.0001, 77), &f).ok());
  for (int i = 0; i < 2500; i++) ASSERT_TRUE(f.Insert(Key(i)));
  for (int i = 0; i < 500; i++) ASSERT_TRUE(f.Erase(Key(i)));
  std::string bytes = "prefix";
  f.Serialize(&bytes);
  const std::string_view filter = std::string_view(bytes).substr(6);

  DynamicCuckooFilter g;
  ASSERT_TRUE(DynamicCuckooFilter::Deserialize(filter, &g).ok());
  EXPECT_EQ(g.size(), 2000u);
  EXPECT_EQ(g.seed(), 77u);
  EXPECT_EQ(g.fingerprint_bits(), f.fingerprint_bits());
  EXPECT_EQ(Bytes(g), std::string(filter));

  const FilterReader r = FilterReader::Open(filter);
  ASSERT_TRUE(r.valid());
  EXPECT_EQ(r.kind(), FilterKind::kDynamicCuckoo);
  EXPECT_EQ(r.seed(), 77u);
  for (int i = 0; i < 5000; i++) {
    ASSERT_EQ(r.MayMatch(Key(i)), f.Contains(Key(i))) << i;
    ASSERT_EQ(r.MayMatch(AbsentKey(i)), g.Contains(AbsentKey(i))) << i;
  }
  for (int i = 500; i < 2500; i++) ASSERT_TRUE(g.Contains(Key(i)));
  // The loaded copy keeps working.
  for (int i = 2500; i < 3000; i++) ASSERT_TRUE(g.Insert(Key(i)));
  for (int i = 500; i < 3000; i++) ASSERT_TRUE(g.Contains(Key(i)));
}

TEST(DynamicCuckooTest, WideFingerprints) {
  // 128-bit bucket words (f > 16).
  MutableFilterOptions o = Options(2000, 0);
  o.bits_per_key = 24;
  DynamicCuckooFilter f;
  ASSERT_TRUE(DynamicCuckooFilter::Create(o, &f).ok());
  EXPECT_EQ(f.fingerprint_bits(), 24);
  RunModel(
      &f,
      [](DynamicCuckooFilter* x, const std::string& k) { return x->Insert(k); },
      3000, 30000, 3);
}

// --- CountingBloomFilter -----------------------------------------------------

TEST(CountingBloomTest, MatchesASetModel) {
  CountingBloomFilter f;
  ASSERT_TRUE(CountingBloomFilter::Create(Options(5000, 0.01), &f).ok());
  EXPECT_EQ(f.num_probes(), 7);
  double mean_size = 0;
  const double fpr = RunModel(
      &f,
      [](CountingBloomFilter* x, const std::string& k) {
        x->Insert(k);
        return true;
      },
      6000, 200000, 4, 34, &mean_size);
  ExpectFprNear(fpr,
                StandardBloomFpr(f.num_counters() / mean_size, f.num_probes()),
                30000);
}

TEST(CountingBloomTest, SaturatedCountersNeverCauseFalseNegatives) {
  MutableFilterOptions o = Options(100, 0);
  o.bits_per_key = 10;
  CountingBloomFilter f;
  ASSERT_TRUE(CountingBloomFilter::Create(o, &f).ok());
  EXPECT_EQ(f.num_counters(), 1000u);
  // "hot" 20 times: its counters pass 15 and stick there.
  for (int i = 0; i < 20; i++) f.Insert("hot");
  EXPECT_GE(f.CountSaturated(), 1u);
  for (int i = 0; i < 40; i++) f.Insert(Key(i));
  // Erasing "hot" 20 times cannot bring a saturated counter to 0, so the
  // other keys sharing those counters survive, and so does "hot" itself.
  for (int i = 0; i < 20; i++) EXPECT_TRUE(f.Erase("hot"));
  EXPECT_TRUE(f.Contains("hot"));
  for (int i = 0; i < 40; i++) EXPECT_TRUE(f.Contains(Key(i))) << i;
  for (int i = 0; i < 40; i++) EXPECT_TRUE(f.Erase(Key(i)));

  // Saturate every counter: nothing can be forgotten any more, and nothing
  // breaks.
  // (2000 keys * 7 probes leave a counter unprobed with probability e^-14.)
  for (int rep = 0; rep < 16; rep++) {
    for (int i = 0; i < 2000; i++) f.Insert(Key(i));
  }
  EXPECT_EQ(f.CountSaturated(), f.num_counters());
  for (int i = 0; i < 2000; i++) EXPECT_TRUE(f.Erase(Key(i)));
  for (int i = 0; i < 2000; i++) EXPECT_TRUE(f.Contains(Key(i)));
  EXPECT_TRUE(f.Contains(AbsentKey(1)));  // all counters set
}

TEST(CountingBloomTest, EraseOfAnAbsentKeyIsRefused) {
  CountingBloomFilter f;
  ASSERT_TRUE(CountingBloomFilter::Create(Options(1000, 0.001), &f).ok());
  for (int i = 0; i < 500; i++) f.Insert(Key(i));
  int refused = 0;
  for (int i = 0; i < 1000; i++) {
    const std::string before = Bytes(f);
    if (!f.Contains(AbsentKey(i))) {
      EXPECT_FALSE(f.Erase(AbsentKey(i)));
      EXPECT_EQ(Bytes(f), before);
      refused++;
    }
  }
  EXPECT_GT(refused, 990);
}

TEST(CountingBloomTest, SerializeRoundTripAndReader) {
  CountingBloomFilter f;
  ASSERT_TRUE(CountingBloomFilter::Create(Options(2000, 0.02, 5), &f).ok());
  for (int i = 0; i < 2000; i++) f.Insert(Key(i));
  for (int i = 0; i < 1000; i++) ASSERT_TRUE(f.Erase(Key(i)));
  const std::string bytes = Bytes(f);
  CountingBloomFilter g;
  ASSERT_TRUE(CountingBloomFilter::Deserialize(bytes, &g).ok());
  EXPECT_EQ(Bytes(g), bytes);
  EXPECT_EQ(g.seed(), 5u);
  EXPECT_EQ(g.num_probes(), f.num_probes());
  const FilterReader r = FilterReader::Open(bytes);
  ASSERT_TRUE(r.valid());
  EXPECT_EQ(r.kind(), FilterKind::kCountingBloom);
  std::vector<std::string> keys;
  for (int i = 0; i < 4000; i++) keys.push_back(i % 2 ? Key(i) : AbsentKey(i));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::unique_ptr<bool[]> batched(new bool[keys.size()]);
  r.MayMatch(views.size(), views.data(), batched.get());
  for (size_t i = 0; i < keys.size(); i++) {
    ASSERT_EQ(r.MayMatch(keys[i]), g.Contains(keys[i])) << keys[i];
    ASSERT_EQ(batched[i], g.Contains(keys[i])) << keys[i];
  }
  for (int i = 1000; i < 2000; i++) ASSERT_TRUE(r.MayMatch(Key(i)));
}

// --- both --------------------------------------------------------------------

TEST(MutableFilterTest, CreateRejectsBadOptionsNamingThem) {
  struct Case {
    MutableFilterOptions o;
    const char* must_mention;
  };
  MutableFilterOptions base = Options(1000, 0.01);
  std::vector<Case> cases;
  cases.push_back({Options(0, 0.01), "capacity"});
  cases.push_back({Options(1000, 0), "target_fpr"});
  cases.push_back({Options(1000, 1), "target_fpr"});
  cases.push_back({Options(1000, -1), "target_fpr"});
  cases.push_back({Options(1000, std::nan("")), "target_fpr"});
  MutableFilterOptions bad_bits = base;
  bad_bits.bits_per_key = -2;
  cases.push_back({bad_bits, "bits_per_key"});
  bad_bits.bits_per_key = 1000;
  cases.push_back({bad_bits, "bits_per_key"});
  cases.push_back({Options(uint64_t{1} << 62, 0.01), "capacity"});
  for (const Case& c : cases) {
    DynamicCuckooFilter d;
    Status s = DynamicCuckooFilter::Create(c.o, &d);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(c.must_mention), std::string::npos)
        << s.ToString();
    EXPECT_EQ(d.num_slots(), 0u);  // unchanged
    CountingBloomFilter b;
    s = CountingBloomFilter::Create(c.o, &b);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(c.must_mention), std::string::npos)
        << s.ToString();
    EXPECT_EQ(b.num_counters(), 0u);
  }
  // Targets beyond what the kinds can reach.
  DynamicCuckooFilter d;
  EXPECT_FALSE(DynamicCuckooFilter::Create(Options(10, 1e-12), &d).ok());
  CountingBloomFilter b;
  EXPECT_FALSE(CountingBloomFilter::Create(Options(10, 1e-300), &b).ok());
}

TEST(MutableFilterTest, DefaultConstructedFiltersAreEmptyAndInert) {
  DynamicCuckooFilter d;
  EXPECT_FALSE(d.Insert("a"));
  EXPECT_FALSE(d.Contains("a"));
  EXPECT_FALSE(d.Erase("a"));
  CountingBloomFilter b;
  b.Insert("a");
  EXPECT_FALSE(b.Contains("a"));
  EXPECT_FALSE(b.Erase("a"));
  // They serialize as empty filters, which load back.
  EXPECT_EQ(FilterReader::Open(Bytes(d)).kind(), FilterKind::kEmpty);
  EXPECT_EQ(FilterReader::Open(Bytes(b)).kind(), FilterKind::kEmpty);
  EXPECT_TRUE(DynamicCuckooFilter::Deserialize(Bytes(d), &d).ok());
  EXPECT_TRUE(CountingBloomFilter::Deserialize(Bytes(b), &b).ok());
  // Moves leave a usable filter behind them.
  DynamicCuckooFilter e;
  ASSERT_TRUE(DynamicCuckooFilter::Create(Options(10, 0.01), &e).ok());
  EXPECT_TRUE(e.Insert("x"));
  d = std::move(e);
  EXPECT_TRUE(d.Contains("x"));
  // The filter moved from is inert, as a default-constructed one.
  EXPECT_FALSE(e.Insert("y"));  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(e.Contains("x"));
  EXPECT_EQ(e.num_slots(), 0u);
  EXPECT_EQ(FilterReader::Open(Bytes(e)).kind(), FilterKind::kEmpty);
  CountingBloomFilter c;
  ASSERT_TRUE(CountingBloomFilter::Create(Options(10, 0.01), &c).ok());
  c.Insert("x");
  b = std::move(c);
  EXPECT_TRUE(b.Contains("x"));
  c.Insert("y");  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(c.Contains("y"));
  EXPECT_EQ(c.num_counters(), 0u);
}

TEST(MutableFilterTest, DeserializeRejectsOtherBytes) {
  DynamicCuckooFilter d;
  ASSERT_TRUE(DynamicCuckooFilter::Create(Options(100, 0.01), &d).ok());
  d.Insert("k");
  CountingBloomFilter b;
  ASSERT_TRUE(CountingBloomFilter::Create(Options(100, 0.01), &b).ok());
  b.Insert("k");
  const std::string cuckoo = Bytes(d), counting = Bytes(b);
  const std::string bloom = test::BuildFilter(test::MustParse("bloom:10"), 10);

  DynamicCuckooFilter d2;
  CountingBloomFilter b2;
  Status s = DynamicCuckooFilter::Deserialize(counting, &d2);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("counting_bloom"), std::string::npos)
      << s.ToString();
  s = CountingBloomFilter::Deserialize(bloom, &b2);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("bloom"), std::string::npos) << s.ToString();
  EXPECT_FALSE(DynamicCuckooFilter::Deserialize("garbage", &d2).ok());
  EXPECT_FALSE(CountingBloomFilter::Deserialize("", &b2).ok());
  for (size_t len = 0; len < cuckoo.size(); len++) {
    EXPECT_FALSE(
        DynamicCuckooFilter::Deserialize(cuckoo.substr(0, len), &d2).ok());
  }
  for (size_t len = 0; len < counting.size(); len++) {
    EXPECT_FALSE(
        CountingBloomFilter::Deserialize(counting.substr(0, len), &b2).ok());
  }
  EXPECT_EQ(d2.num_slots(), 0u);  // unchanged by every failure
  EXPECT_EQ(b2.num_counters(), 0u);
}

TEST(MutableFilterTest, DamagedBytesReadAsMayMatch) {
  // Truncations and trailer bit flips of both kinds: never a crash, never
  // a false negative through FilterReader.
  DynamicCuckooFilter d;
  ASSERT_TRUE(DynamicCuckooFilter::Create(Options(300, 0.01), &d).ok());
  CountingBloomFilter b;
  ASSERT_TRUE(CountingBloomFilter::Create(Options(300, 0.01), &b).ok());
  for (int i = 0; i < 200; i++) {
    ASSERT_TRUE(d.Insert(Key(i)));
    b.Insert(Key(i));
  }
  for (const std::string& bytes : {Bytes(d), Bytes(b)}) {
    for (size_t len = 0; len < bytes.size(); len++) {
      const FilterReader r =
          FilterReader::Open(std::string_view(bytes).substr(0, len));
      ASSERT_FALSE(r.valid()) << len;
      ASSERT_TRUE(r.MayMatch(Key(0)));
    }
    const size_t trailer = static_cast<uint8_t>(bytes[bytes.size() - 2]);
    for (size_t pos = bytes.size() - trailer; pos < bytes.size(); pos++) {
      for (int bit = 0; bit < 8; bit++) {
        std::string bad = bytes;
        bad[pos] ^= static_cast<char>(1 << bit);
        const FilterReader r = FilterReader::Open(bad);
        EXPECT_FALSE(r.valid()) << pos << " " << bit;
        for (int i = 0; i < 200; i++) ASSERT_TRUE(r.MayMatch(Key(i)));
      }
    }
  }
}

}  // namespace
}  // namespace sstfilter
