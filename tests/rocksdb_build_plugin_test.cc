// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The RocksDB build plugin (plugin/sstfilter), checked cheaply: its one
// source, built alone as a library (tests/CMakeLists.txt), registers every
// sstfilter policy id and the level listener through the function that
// sstfilter.mk names, called as RocksDB's build calls it; a database
// configured from an option string then filters with sstfilter, its filter
// answering absent-key reads, and plans by_level on its tree. The source
// includes every source of the core and the adapter. (Building RocksDB
// itself with the plugin: docs/ROCKSDB.md.)

#include <gtest/gtest.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/object_registry.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "adapters/rocksdb/rocksdb_compat.h"
#include "sstfilter/rocksdb.h"

// As RocksDB's util/build_version.cc declares a plugin's function.
extern "C" int sstfilter_register_rocksdb_plugin(
    ROCKSDB_NAMESPACE::ObjectLibrary&, const std::string&);

namespace {

std::string ReadFile(const std::string& path) {
  std::string out;
  EXPECT_TRUE(
      rocksdb::ReadFileToString(rocksdb::Env::Default(), path, &out).ok())
      << path;
  return out;
}

TEST(RocksDBBuildPluginTest, MakefileNamesTheSourceAndTheFunction) {
  const std::string mk =
      ReadFile(SSTFILTER_SOURCE_DIR "/plugin/sstfilter/sstfilter.mk");
  // RocksDB's CMakeLists.txt reads the first "SOURCES = " line.
  const size_t sources = mk.find("SOURCES = ");
  ASSERT_NE(sources, std::string::npos);
  EXPECT_EQ(mk.substr(sources, mk.find('\n', sources) - sources),
            "SOURCES = sstfilter_plugin.cc");
  EXPECT_NE(mk.find("\nsstfilter_FUNC = sstfilter_register_rocksdb_plugin\n"),
            std::string::npos);
}

TEST(RocksDBBuildPluginTest, SourceIncludesEverySource) {
  const std::string source =
      ReadFile(SSTFILTER_SOURCE_DIR "/plugin/sstfilter/sstfilter_plugin.cc");
  std::istringstream all(SSTFILTER_PLUGIN_SOURCES);
  int n = 0;
  for (std::string file; all >> file; n++) {
    EXPECT_NE(source.find("#include \"" + file + "\""), std::string::npos)
        << "plugin/sstfilter/sstfilter_plugin.cc lacks " << file;
  }
  EXPECT_GT(n, 3);
}

TEST(RocksDBBuildPluginTest, RegistersPoliciesAndListener) {
  auto library = std::make_shared<rocksdb::ObjectLibrary>("sstfilter");
  EXPECT_EQ(sstfilter_register_rocksdb_plugin(*library, ""), 3);
  rocksdb::ConfigOptions co;
  co.registry = rocksdb::ObjectRegistry::NewInstance();
  co.registry->AddLibrary(library);
  co.ignore_unsupported_options = false;

  char dir_template[] = "/tmp/sstfilter_build_plugin.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  rocksdb::Options base;
  base.create_if_missing = true;
  base.info_log_level = rocksdb::InfoLogLevel::INFO_LEVEL;
  base.statistics = rocksdb::CreateDBStatistics();
  rocksdb::DBOptions db_options;
  rocksdb::ColumnFamilyOptions cf_options;
  ASSERT_TRUE(rocksdb::GetDBOptionsFromString(
                  co, base, "listeners={sstfilter.level_listener}", &db_options)
                  .ok());
  ASSERT_TRUE(rocksdb::GetColumnFamilyOptionsFromString(
                  co, base,
                  "block_based_table_factory={filter_policy="
                  "sstfilter.ribbon:10:by_level}",
                  &cf_options)
                  .ok());
  ASSERT_EQ(db_options.listeners.size(), 1u);
  EXPECT_EQ(db_options.listeners[0]->GetId(), sstfilter::kLevelListenerId);
  {
    std::unique_ptr<rocksdb::DB> db;
    ASSERT_TRUE(sstfilter::OpenInto(&db, [&](auto* out) {
                  return rocksdb::DB::Open(
                      rocksdb::Options(db_options, cf_options), dir, out);
                }).ok());
    for (int i = 0; i < 1000; i++) {
      ASSERT_TRUE(
          db->Put(rocksdb::WriteOptions(), "key" + std::to_string(i), "value")
              .ok());
    }
    ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
    rocksdb::TablePropertiesCollection props;
    ASSERT_TRUE(db->GetPropertiesOfAllTables(&props).ok());
    ASSERT_EQ(props.size(), 1u);
    EXPECT_EQ(props.begin()->second->filter_policy_name, "sstfilter.ribbon");
    std::string v;
    EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), "key7", &v).ok());
    // Absent keys: the plugin's filter answers all but its false positives
    // (ribbon:10: ~1%, ~10 of 1000; measured 1) without reading a block.
    base.statistics->Reset();
    for (int i = 0; i < 1000; i++) {
      EXPECT_TRUE(
          db->Get(rocksdb::ReadOptions(), "absent" + std::to_string(i), &v)
              .IsNotFound());
    }
    EXPECT_GE(base.statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL),
              980u);
  }
  EXPECT_NE(ReadFile(dir + "/LOG")
                .find("[sstfilter] sstfilter.ribbon:10:by_level: column family "
                      "\"default\" sizes its filters on the tree"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
