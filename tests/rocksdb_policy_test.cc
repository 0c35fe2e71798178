// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The RocksDB policy on its own: creation and errors, ids through RocksDB's
// own CreateFromString and ObjectRegistry, and the builder/reader driven
// the way RocksDB drives them (keys out of order, repeats, empty keys,
// partitions, zero keys, batches, post-verification).

#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/object_registry.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "sstfilter/filter.h"
#include "sstfilter/rocksdb.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::Key;

rocksdb::ConfigOptions ConfigWithSstfilter() {
  rocksdb::ConfigOptions co;
  co.registry = rocksdb::ObjectRegistry::NewInstance();
  co.registry->AddLibrary("sstfilter", RegisterRocksDBFilterPolicies, "");
  return co;
}

// ---------------------------------------------------------------------------
// Creation and ids.

TEST(RocksDBPolicyTest, BadSpecsAreErrorsNamingTheProblem) {
  struct Case {
    const char* spec;
    const char* names;  // a part of the message that names the problem
  };
  const Case cases[] = {
      {"", "expected <kind>:<bits_per_key>"},
      {"bloom", "expected <kind>:<bits_per_key>"},
      {"blom:10", "unknown filter kind \"blom\""},
      {"sstfilter.blom:10", "unknown filter kind \"blom\""},
      {"bloom:abc", "\"abc\" is not a decimal number"},
      {"bloom:0.5", "bits per key must be within"},
      {"bloom:1e9", "is not a decimal number"},
      {"bloom:10:salt=3", "unknown option \"salt=3\""},
  };
  for (const Case& c : cases) {
    std::shared_ptr<const rocksdb::FilterPolicy> p;
    const rocksdb::Status s = NewRocksDBFilterPolicy(c.spec, &p);
    EXPECT_TRUE(s.IsInvalidArgument()) << c.spec << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(c.names), std::string::npos)
        << c.spec << ": " << s.ToString();
    EXPECT_NE(s.ToString().find("\"" + std::string(c.spec) + "\""),
              std::string::npos)
        << "the message quotes the spec: " << s.ToString();
    EXPECT_EQ(p, nullptr);
  }
}

TEST(RocksDBPolicyTest, EveryKindTheCoreBuildsAndOnlyThose) {
  // The policy makes no builder until a table needs one, so it relies on
  // this: every spec that parses has a builder, and a kind without one
  // (empty, the mutable forms) fails loudly when the policy is made.
  for (int k = 0; k <= 7; k++) {
    const std::string spec =
        std::string(FilterKindName(static_cast<FilterKind>(k))) + ":12";
    SCOPED_TRACE(spec);
    FilterSpec parsed;
    const bool parses = ParseFilterSpec(spec, &parsed).ok();
    std::shared_ptr<const rocksdb::FilterPolicy> p;
    const rocksdb::Status s = NewRocksDBFilterPolicy(spec, &p);
    if (parses) {
      std::unique_ptr<FilterBuilder> core;
      EXPECT_TRUE(NewFilterBuilder(parsed, &core).ok());
      EXPECT_TRUE(s.ok()) << s.ToString();
      EXPECT_NE(p, nullptr);
    } else {
      EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
      EXPECT_NE(s.ToString().find("unknown filter kind"), std::string::npos)
          << s.ToString();
      EXPECT_EQ(p, nullptr);
    }
  }
  // The kinds with builders are exactly the four of the grammar.
  for (const char* spec :
       {"bloom:12", "blocked_bloom:12", "cuckoo:12", "ribbon:12"}) {
    std::shared_ptr<const rocksdb::FilterPolicy> p;
    EXPECT_TRUE(NewRocksDBFilterPolicy(spec, &p).ok()) << spec;
  }
  for (const char* spec :
       {"empty:12", "counting_bloom:12", "dynamic_cuckoo:12", "unknown:12"}) {
    std::shared_ptr<const rocksdb::FilterPolicy> p;
    EXPECT_TRUE(NewRocksDBFilterPolicy(spec, &p).IsInvalidArgument()) << spec;
  }
}

class RocksDBKindTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<const rocksdb::FilterPolicy> Policy(const std::string& spec) {
    std::shared_ptr<const rocksdb::FilterPolicy> p;
    const rocksdb::Status s = NewRocksDBFilterPolicy(spec, &p);
    EXPECT_TRUE(s.ok()) << spec << ": " << s.ToString();
    return p;
  }
  std::shared_ptr<const rocksdb::FilterPolicy> Policy() {
    return Policy(GetParam());
  }
};

TEST_P(RocksDBKindTest, NamesAndIds) {
  const FilterSpec spec = test::MustParse(GetParam());
  for (const std::string& text : {GetParam(), kRocksDBIdPrefix + GetParam()}) {
    auto p = Policy(text);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->GetId(), kRocksDBIdPrefix + spec.ToString());
    EXPECT_EQ(std::string(p->Name()),
              kRocksDBIdPrefix + std::string(FilterKindName(spec.kind)));
    // The metaindex name: the same for every kind, never a built-in one.
    EXPECT_STREQ(p->CompatibilityName(), "sstfilter.v1");
    EXPECT_STREQ(p->CompatibilityName(), kFamilyName);
  }
}

TEST_P(RocksDBKindTest, IdsRoundTripThroughCreateFromString) {
  const rocksdb::ConfigOptions co = ConfigWithSstfilter();
  for (const std::string& text : {GetParam(), GetParam() + ":seed=12345"}) {
    auto p = Policy(text);
    ASSERT_NE(p, nullptr);
    std::shared_ptr<const rocksdb::FilterPolicy> back;
    const rocksdb::Status s =
        rocksdb::FilterPolicy::CreateFromString(co, p->GetId(), &back);
    ASSERT_TRUE(s.ok()) << p->GetId() << ": " << s.ToString();
    ASSERT_NE(back, nullptr) << p->GetId();
    EXPECT_EQ(back->GetId(), p->GetId());
    EXPECT_STREQ(back->Name(), p->Name());
    // Both forms of a seeded id are accepted.
    if (text.find("seed") != std::string::npos) {
      EXPECT_EQ(p->GetId().rfind("id=", 0), 0u) << p->GetId();
      ASSERT_TRUE(rocksdb::FilterPolicy::CreateFromString(
                      co, kRocksDBIdPrefix + text, &back)
                      .ok());
      ASSERT_NE(back, nullptr);
      EXPECT_EQ(back->GetId(), p->GetId());
    }
  }
}

TEST(RocksDBPolicyTest, MalformedOwnIdsAreErrorsNotSilentDrops) {
  // Our factory claims every "sstfilter*" id, so that RocksDB's default
  // ignore_unsupported_options=true cannot turn a typo into "no filter".
  const rocksdb::ConfigOptions co = ConfigWithSstfilter();
  ASSERT_TRUE(co.ignore_unsupported_options);
  for (const char* id :
       {"sstfilter.blom:10", "sstfilter.bloom:abc", "sstfilter.bloom:0",
        "sstfilter.bloom", "sstfilter.", "sstfilter", "sstfilter.v1",
        "sstfilter_bloom:10", "sstfilterbloom:10", "sstfilter:bloom:10"}) {
    std::shared_ptr<const rocksdb::FilterPolicy> p;
    const rocksdb::Status s =
        rocksdb::FilterPolicy::CreateFromString(co, id, &p);
    EXPECT_TRUE(s.IsInvalidArgument()) << id << ": " << s.ToString();
    EXPECT_NE(s.ToString().find("sstfilter: filter spec"), std::string::npos)
        << s.ToString();
    EXPECT_EQ(p, nullptr) << id;
  }
  // Ids that do not start with "sstfilter" are not ours: RocksDB finds no
  // factory for them (NotSupported once unsupported options are errors).
  rocksdb::ConfigOptions strict = co;
  strict.ignore_unsupported_options = false;
  for (const char* id :
       {"sstfilte.bloom:10", "my_sstfilter.bloom:10", "SSTFILTER.bloom:10"}) {
    std::shared_ptr<const rocksdb::FilterPolicy> p;
    const rocksdb::Status s =
        rocksdb::FilterPolicy::CreateFromString(strict, id, &p);
    EXPECT_TRUE(s.IsNotSupported()) << id << ": " << s.ToString();
  }
}

TEST(RocksDBPolicyTest, UnregisteredIdsAreSilentlyDroppedByRocksDB) {
  // The hazard docs/ROCKSDB.md warns about, pinned so that a RocksDB that
  // changes it is noticed. This binary never registers in the default
  // library, so the default registry does not know our ids.
  rocksdb::ConfigOptions co;
  std::shared_ptr<const rocksdb::FilterPolicy> p;
  EXPECT_TRUE(
      rocksdb::FilterPolicy::CreateFromString(co, "sstfilter.bloom:10", &p)
          .ok());
  EXPECT_EQ(p, nullptr);
  co.ignore_unsupported_options = false;
  EXPECT_TRUE(
      rocksdb::FilterPolicy::CreateFromString(co, "sstfilter.bloom:10", &p)
          .IsNotSupported());
}

TEST(RocksDBPolicyTest, RegistrationCountsAndBuiltinsStillWork) {
  auto library = std::make_shared<rocksdb::ObjectLibrary>("sstfilter");
  // The policies, the level listener and the range collector.
  EXPECT_EQ(library->Register(RegisterRocksDBFilterPolicies, ""), 3);
  EXPECT_EQ(library->GetFactoryCount(rocksdb::FilterPolicy::Type()), 1u);
  EXPECT_EQ(library->GetFactoryCount(rocksdb::EventListener::Type()), 1u);
  // Registering twice is harmless.
  EXPECT_EQ(RegisterRocksDBFilterPolicies(*library, ""), 3);
  rocksdb::ConfigOptions co;
  co.registry = rocksdb::ObjectRegistry::NewInstance();
  co.registry->AddLibrary(library);
  std::shared_ptr<const rocksdb::FilterPolicy> p;
  ASSERT_TRUE(
      rocksdb::FilterPolicy::CreateFromString(co, "sstfilter.bloom:7.5", &p)
          .ok());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->GetId(), "sstfilter.bloom:7.5");
  ASSERT_TRUE(
      rocksdb::FilterPolicy::CreateFromString(co, "bloomfilter:10", &p).ok());
  ASSERT_NE(p, nullptr);
  EXPECT_STRNE(p->CompatibilityName(), kFamilyName);
}

TEST(RocksDBPolicyTest, TableOptionsStringsNameOurPolicy) {
  // The form of OPTIONS files and GetBlockBasedTableOptionsFromString.
  const rocksdb::ConfigOptions co = ConfigWithSstfilter();
  rocksdb::BlockBasedTableOptions in, out;
  ASSERT_TRUE(rocksdb::GetBlockBasedTableOptionsFromString(
                  co, in,
                  "filter_policy=sstfilter.blocked_bloom:9.5;"
                  "partition_filters=true;index_type=kTwoLevelIndexSearch",
                  &out)
                  .ok());
  ASSERT_NE(out.filter_policy, nullptr);
  EXPECT_EQ(out.filter_policy->GetId(), "sstfilter.blocked_bloom:9.5");
  EXPECT_TRUE(out.partition_filters);
  // A malformed id is an error where RocksDB passes errors on: unescaped
  // option strings ...
  rocksdb::ConfigOptions unescaped = co;
  unescaped.input_strings_escaped = false;
  rocksdb::Status s = rocksdb::GetBlockBasedTableOptionsFromString(
      unescaped, in, "filter_policy=sstfilter.blocked_bloom:nine", &out);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("\"nine\" is not a decimal number"),
            std::string::npos);
  s = rocksdb::GetBlockBasedTableOptionsFromString(
      unescaped, in, "filter_policy=sstfilter_blocked_bloom:10", &out);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("sstfilter_blocked_bloom"), std::string::npos)
      << s.ToString();
  // ... but RocksDB 7.8 itself swallows any error of a by-name option such
  // as filter_policy in escaped strings (the default, and OPTIONS files),
  // ignore_unsupported_options=false or not: the table silently gets no
  // filter (docs/ROCKSDB.md warns). Other releases may pass the error on;
  // what no release may do is give the table a filter for a bad id.
  for (const bool ignore : {true, false}) {
    rocksdb::ConfigOptions escaped = co;
    escaped.ignore_unsupported_options = ignore;
    ASSERT_TRUE(escaped.input_strings_escaped);
    for (const char* id :
         {"sstfilter.blocked_bloom:nine", "sstfilter_blocked_bloom:10"}) {
      out = in;
      s = rocksdb::GetBlockBasedTableOptionsFromString(
          escaped, in, std::string("filter_policy=") + id, &out);
      EXPECT_TRUE(s.ok() || s.IsInvalidArgument())
          << id << " " << ignore << ": " << s.ToString();
      if (s.ok()) {
        EXPECT_EQ(out.filter_policy, nullptr) << id << " " << ignore;
      }
      // The same nested in a column family's options.
      rocksdb::ColumnFamilyOptions cf;
      s = rocksdb::GetColumnFamilyOptionsFromString(
          escaped, rocksdb::ColumnFamilyOptions(),
          std::string("block_based_table_factory={filter_policy=") + id + "}",
          &cf);
      EXPECT_TRUE(s.ok() || s.IsInvalidArgument())
          << id << " " << ignore << ": " << s.ToString();
      if (!s.ok()) continue;
      const auto* bt =
          cf.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
      ASSERT_NE(bt, nullptr);
      EXPECT_EQ(bt->filter_policy, nullptr) << id << " " << ignore;
    }
  }
}

// ---------------------------------------------------------------------------
// The builder and reader, as RocksDB drives them.

struct Built {
  std::unique_ptr<const char[]> buf;
  rocksdb::Slice filter;
};

Built Finish(rocksdb::FilterBitsBuilder* b) {
  Built out;
  rocksdb::Status s;
  out.filter = b->Finish(&out.buf, &s);
  EXPECT_TRUE(s.ok()) << s.ToString();
  // Inside the buffer RocksDB frees, at most a cache line in (where the
  // filter starts at a 64-byte boundary: rocksdb_builder_test).
  EXPECT_GE(out.filter.data(), out.buf.get()) << "the slice is in the buffer";
  EXPECT_LT(out.filter.data(), out.buf.get() + 64) << "at most 63 bytes in";
  return out;
}

class Harness {
 public:
  explicit Harness(std::shared_ptr<const rocksdb::FilterPolicy> p,
                   bool verify = false)
      : policy_(std::move(p)) {
    table_options_.detect_filter_construct_corruption = verify;
  }
  std::unique_ptr<rocksdb::FilterBitsBuilder> Builder() {
    rocksdb::FilterBuildingContext ctx(table_options_);
    return std::unique_ptr<rocksdb::FilterBitsBuilder>(
        policy_->GetBuilderWithContext(ctx));
  }
  std::unique_ptr<rocksdb::FilterBitsReader> Reader(const rocksdb::Slice& f) {
    return std::unique_ptr<rocksdb::FilterBitsReader>(
        policy_->GetFilterBitsReader(f));
  }

 private:
  std::shared_ptr<const rocksdb::FilterPolicy> policy_;
  rocksdb::BlockBasedTableOptions table_options_;
};

TEST_P(RocksDBKindTest, ZeroKeysGiveANonEmptyNeverMatchingFilter) {
  // RocksDB reads an EMPTY filter slice as "no filter" (always may match);
  // ours for zero keys is the format's 8-byte empty filter instead.
  Harness h(Policy());
  auto b = h.Builder();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->EstimateEntriesAdded(), 0u);
  Built f = Finish(b.get());
  EXPECT_GT(f.filter.size(), 0u);
  EXPECT_TRUE(b->MaybePostVerify(f.filter).ok());
  EXPECT_EQ(FilterReader::Open({f.filter.data(), f.filter.size()}).kind(),
            FilterKind::kEmpty);
  auto r = h.Reader(f.filter);
  EXPECT_FALSE(r->MayMatch(""));
  EXPECT_FALSE(r->MayMatch(Key(1)));
}

TEST_P(RocksDBKindTest, KeysOutOfOrderRepeatedAndEmpty) {
  // What a prefix extractor makes RocksDB add: whole keys and prefixes
  // interleaved (out of order), repeats, and the empty key.
  Harness h(Policy());
  auto b = h.Builder();
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < 5000; i++) {
    keys.push_back(Key(i));
    keys.push_back(Key(i).substr(0, 13));  // a "prefix" of 100 keys
  }
  keys.push_back("");
  for (const auto& k : keys) b->AddKey(k);
  // Distinct: 5000 keys + 50 prefixes + "" -- repeats back to back are
  // dropped, interleaved ones counted (an estimate, as RocksDB allows).
  EXPECT_GE(b->EstimateEntriesAdded(), 5051u);
  EXPECT_LE(b->EstimateEntriesAdded(), keys.size());
  Built f = Finish(b.get());
  auto r = h.Reader(f.filter);
  for (const auto& k : keys) ASSERT_TRUE(r->MayMatch(k)) << k;
}

TEST_P(RocksDBKindTest, ReusedBuilderMakesIndependentPartitions) {
  // Partitioned filters: one builder, Finish after each partition.
  Harness h(Policy());
  auto b = h.Builder();
  std::vector<Built> parts;
  constexpr uint64_t kPer = 3000;
  for (uint64_t part = 0; part < 4; part++) {
    for (uint64_t i = part * kPer; i < (part + 1) * kPer; i++)
      b->AddKey(Key(i));
    EXPECT_EQ(b->EstimateEntriesAdded(), kPer);
    parts.push_back(Finish(b.get()));
    EXPECT_EQ(b->EstimateEntriesAdded(), 0u);
  }
  for (uint64_t part = 0; part < 4; part++) {
    auto r = h.Reader(parts[part].filter);
    uint64_t others = 0;
    for (uint64_t i = 0; i < 4 * kPer; i++) {
      const bool mine = i / kPer == part;
      const bool m = r->MayMatch(Key(i));
      if (mine) {
        ASSERT_TRUE(m) << part << " " << i;
      }
      others += !mine && m;
    }
    EXPECT_LT(others, 3 * kPer / 20)
        << "partition " << part << " holds only its keys";
  }
}

TEST_P(RocksDBKindTest, ApproximateNumEntriesFitsTheSize) {
  // RocksDB sizes partitions with it: a filter of that many keys must fit
  // in the bytes, and not be much smaller (partitions near the target).
  Harness h(Policy());
  auto b = h.Builder();
  for (size_t bytes : {size_t{64}, size_t{1000}, size_t{3687}, size_t{4096},
                       size_t{16384}, size_t{1} << 20}) {
    const size_t n = b->ApproximateNumEntries(bytes);
    // A kind may need more than a tiny size for even one key (RocksDB then
    // tries larger partitions); from 1000 bytes on, every kind fits keys.
    if (bytes < 1000 && n == 0) continue;
    ASSERT_GT(n, 0u) << bytes;
    for (size_t i = 0; i < n; i++) b->AddKey(Key(i));
    Built f = Finish(b.get());
    EXPECT_LE(f.filter.size(), bytes);
    if (bytes >= 1000) {
      EXPECT_GE(f.filter.size(), bytes * 8 / 10)
          << bytes << " bytes, " << n << " keys";
    }
  }
  EXPECT_EQ(b->ApproximateNumEntries(0), 0u);
  EXPECT_EQ(b->ApproximateNumEntries(3), 0u);
}

TEST_P(RocksDBKindTest, BatchedMayMatchEqualsSingle) {
  Harness h(Policy());
  auto b = h.Builder();
  for (uint64_t i = 0; i < 20000; i++) b->AddKey(Key(i));
  Built f = Finish(b.get());
  auto r = h.Reader(f.filter);
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < 20000; i++) {
    keys.push_back(Key(i));
    keys.push_back(test::NeighbourKey(i));
  }
  keys.push_back("");
  // Batch sizes RocksDB uses (<= 32) and larger ones.
  for (int batch : {1, 7, 32, 33, 100}) {
    std::vector<rocksdb::Slice> slices;
    std::vector<rocksdb::Slice*> ptrs;
    for (const auto& k : keys) slices.emplace_back(k);
    for (auto& s : slices) ptrs.push_back(&s);
    std::unique_ptr<bool[]> out(new bool[keys.size()]);
    for (size_t i = 0; i < keys.size(); i += batch) {
      const int m = static_cast<int>(std::min<size_t>(batch, keys.size() - i));
      r->MayMatch(m, ptrs.data() + i, out.get() + i);
    }
    for (size_t i = 0; i < keys.size(); i++) {
      ASSERT_EQ(out[i], r->MayMatch(keys[i]))
          << "batch " << batch << " key " << i;
    }
  }
  // An empty batch writes nothing.
  rocksdb::Slice key(keys[0]);
  rocksdb::Slice* ptr = &key;
  bool untouched = false;
  r->MayMatch(0, &ptr, &untouched);
  EXPECT_FALSE(untouched);
}

TEST_P(RocksDBKindTest, UnreadableBytesMatchEverything) {
  Harness h(Policy());
  for (const std::string& junk :
       {std::string("x"), std::string(5, '\0'), std::string(100, '\xff'),
        std::string("0123456789abcdef0123456789abcdef")}) {
    auto r = h.Reader(junk);
    EXPECT_TRUE(r->MayMatch(Key(1)));
    EXPECT_TRUE(r->MayMatch(""));
  }
  // A real filter, truncated or extended by a byte.
  auto b = h.Builder();
  for (uint64_t i = 0; i < 1000; i++) b->AddKey(Key(i));
  Built f = Finish(b.get());
  const std::string bytes(f.filter.data(), f.filter.size());
  for (const std::string& damaged :
       {bytes.substr(0, bytes.size() - 1), bytes.substr(1), bytes + '\0'}) {
    auto r = h.Reader(damaged);
    for (uint64_t i = 0; i < 1000; i++) ASSERT_TRUE(r->MayMatch(Key(i)));
  }
}

TEST_P(RocksDBKindTest, PostVerifyCatchesADamagedFilter) {
  // detect_filter_construct_corruption: RocksDB hands the filter back to
  // MaybePostVerify; a filter missing any key is a Corruption.
  Harness h(Policy(), /*verify=*/true);
  auto b = h.Builder();
  for (uint64_t i = 0; i < 2000; i++) b->AddKey(Key(i));
  Built f = Finish(b.get());
  EXPECT_TRUE(b->MaybePostVerify(f.filter).ok());

  for (uint64_t i = 0; i < 2000; i++) b->AddKey(Key(i));
  f = Finish(b.get());
  // Clear the whole payload (keep the trailer): every key is now missing.
  const FilterReader r = FilterReader::Open({f.filter.data(), f.filter.size()});
  ASSERT_GT(r.payload_size(), 0u);
  char* mutable_bytes = const_cast<char*>(f.filter.data());
  std::fill(mutable_bytes, mutable_bytes + r.payload_size(), '\0');
  EXPECT_TRUE(b->MaybePostVerify(f.filter).IsCorruption());
}

INSTANTIATE_TEST_SUITE_P(AllKinds, RocksDBKindTest,
                         ::testing::ValuesIn(test::AllKindSpecs()),
                         test::SpecName);

}  // namespace
}  // namespace sstfilter
