// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Keyed filters in a real RocksDB on disk: a keyed DB reopened with its
// secret filters as well as an unkeyed one; reopened with another secret
// or an unkeyed policy it still returns every key (its filters then answer
// "may match"); a keyed spec without a secret reads it from
// SSTFILTER_SECRET_FILE, and fails loudly, naming it, when it cannot.

#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/utilities/object_registry.h>
#include <rocksdb/utilities/options_util.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sstfilter/rocksdb.h"
#include "sstfilter/secret.h"
#include "tests/rocksdb_test_util.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace {

using test::Counts;
using test::ExpectAllPresent;
using test::MakeOptions;
using test::MissingKey;
using test::OpenDB;
using test::ReadAbsent;
using test::ScratchDir;
using test::TableSetup;
using test::WriteKeys;

constexpr uint64_t kKeys = 20000;
constexpr uint64_t kAbsent = 2000;  // absent Gets per check
constexpr char kSecret[] = "rocksdb keyed test secret, 32 b.";

std::shared_ptr<const FilterSecret> Secret(std::string_view bytes) {
  std::unique_ptr<const FilterSecret> s;
  if (!NewFilterSecret(bytes, &s).ok()) std::abort();
  return s;
}

std::shared_ptr<const rocksdb::FilterPolicy> Policy(
    const std::string& spec, std::shared_ptr<const FilterSecret> secret) {
  std::shared_ptr<const rocksdb::FilterPolicy> p;
  const rocksdb::Status s = NewRocksDBFilterPolicy(spec, secret, &p);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return p;
}

// Writes `contents` to `path`.
void WriteFile(const std::string& path, const std::string& contents) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(contents.data(), 1, contents.size(), f);
  std::fclose(f);
}

// Sets SSTFILTER_SECRET_FILE for the life of the object.
class SecretFileEnv {
 public:
  explicit SecretFileEnv(const char* path) {
    if (path == nullptr) {
      unsetenv(kSecretFileEnvVar);
    } else {
      setenv(kSecretFileEnvVar, path, 1);
    }
  }
  ~SecretFileEnv() { unsetenv(kSecretFileEnvVar); }
};

class RocksDBKeyedTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string keyed() const { return GetParam() + ":keyed:salt"; }

  // Absent Gets answered "no" by a filter, over 2000 of them; and the
  // positive rate, checked against the spec's expected FPR if filtering.
  uint64_t Negatives(rocksdb::DB* db, const rocksdb::Options& o) {
    o.statistics->Reset();
    ReadAbsent(db, kAbsent, MissingKey, false);
    return Counts(o.statistics.get()).negatives;
  }

  // The filters answered the kAbsent absent Gets: each Get probed at least
  // one filter, and the share of probes that passed is within twice the
  // spec's expected FPR for a file's keys, plus 5 sigma.
  void ExpectFiltered(rocksdb::DB* db, const rocksdb::Options& o) {
    o.statistics->Reset();
    ReadAbsent(db, kAbsent, MissingKey, false);
    const test::FilterCounts c = Counts(o.statistics.get());
    const double expected = test::ExpectedFpr(GetParam(), kKeys / 4);
    EXPECT_GE(c.probes(), kAbsent);
    EXPECT_LE(c.positive_rate(),
              2 * expected + 5 * std::sqrt(expected / c.probes()))
        << "expected " << expected << ", " << c.positives << " of "
        << c.probes();
  }

  // A DB of kKeys keys in 4 files written with `secret`, partitioned or not.
  void WriteDB(const std::string& path, bool partitioned) {
    TableSetup t;
    t.policy = Policy(keyed(), Secret(kSecret));
    t.partitioned = partitioned;
    t.detect_filter_construct_corruption = true;  // verifies keyed filters
    auto db = OpenDB(MakeOptions(t), path);
    ASSERT_TRUE(db);
    for (uint64_t i = 0; i < 4; i++) {
      WriteKeys(db.get(), i * kKeys / 4, (i + 1) * kKeys / 4);
    }
  }
};

TEST_P(RocksDBKeyedTest, RightSecretFiltersOthersStillReadEverything) {
  for (bool partitioned : {false, true}) {
    SCOPED_TRACE(partitioned ? "partitioned" : "full");
    ScratchDir dir;
    WriteDB(dir.path(), partitioned);
    if (HasFatalFailure()) return;
    const std::pair<const char*, std::shared_ptr<const rocksdb::FilterPolicy>>
        readers[] = {
            {"same secret", Policy(keyed(), Secret(kSecret))},
            {"same secret, unkeyed spec", Policy(GetParam(), Secret(kSecret))},
            {"another secret",
             Policy(keyed(), Secret("another secret of 32 bytes......"))},
            {"no secret, unkeyed spec", Policy(GetParam(), nullptr)},
        };
    for (const auto& [what, policy] : readers) {
      SCOPED_TRACE(what);
      TableSetup t;
      t.policy = policy;
      t.partitioned = partitioned;
      const rocksdb::Options o = MakeOptions(t);
      auto db = OpenDB(o, dir.path());
      ASSERT_TRUE(db);
      ExpectAllPresent(db.get(), kKeys);
      if (std::string(what).find("same secret") == 0) {
        ExpectFiltered(db.get(), o);
      } else {
        EXPECT_EQ(Negatives(db.get(), o), 0u)
            << "a filter without its secret matched nothing but everything";
      }
    }
  }
}

TEST_P(RocksDBKeyedTest, SecretFromTheEnvironment) {
  ScratchDir dir;
  const std::string file = dir.path() + "/secret";
  WriteFile(file, kSecret);
  std::shared_ptr<const rocksdb::FilterPolicy> p;
  {
    SecretFileEnv env(nullptr);
    const rocksdb::Status s = NewRocksDBFilterPolicy(keyed(), &p);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find("SSTFILTER_SECRET_FILE"), std::string::npos)
        << s.ToString();
  }
  {
    const std::string short_file = dir.path() + "/short";
    WriteFile(short_file, "too short");
    SecretFileEnv env(short_file.c_str());
    const rocksdb::Status s = NewRocksDBFilterPolicy(keyed(), &p);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find(short_file), std::string::npos);
    EXPECT_NE(s.ToString().find("SSTFILTER_SECRET_FILE"), std::string::npos);
  }
  {
    SecretFileEnv env((dir.path() + "/missing").c_str());
    EXPECT_FALSE(NewRocksDBFilterPolicy(keyed(), &p).ok());
  }
  // An unkeyed spec never needs it.
  EXPECT_TRUE(NewRocksDBFilterPolicy(GetParam(), &p).ok());

  // Written with the secret from the file; read back through the OPTIONS
  // file (the id names no secret), with the secret from the file again.
  SecretFileEnv env(file.c_str());
  ASSERT_TRUE(NewRocksDBFilterPolicy(keyed(), &p).ok());
  EXPECT_EQ(p->GetId(), "sstfilter." + keyed());
  const std::string db_path = dir.path() + "/db";
  TableSetup t;
  t.policy = p;
  {
    auto db = OpenDB(MakeOptions(t), db_path);
    ASSERT_TRUE(db);
    WriteKeys(db.get(), 0, kKeys);
  }
  rocksdb::ConfigOptions co;
  co.registry = rocksdb::ObjectRegistry::NewInstance();
  co.registry->AddLibrary("sstfilter", RegisterRocksDBFilterPolicies, "");
  rocksdb::DBOptions db_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  ASSERT_TRUE(rocksdb::LoadLatestOptions(co, db_path, &db_options, &cfs).ok());
  rocksdb::Options o(db_options, cfs[0].options);
  o.statistics = rocksdb::CreateDBStatistics();
  auto db = OpenDB(o, db_path);
  ASSERT_TRUE(db);
  ExpectAllPresent(db.get(), kKeys);
  ExpectFiltered(db.get(), o);  // keyed filters used
}

INSTANTIATE_TEST_SUITE_P(AllKinds, RocksDBKeyedTest,
                         ::testing::ValuesIn(test::AllKindSpecs()),
                         test::SpecName);

}  // namespace
}  // namespace sstfilter
