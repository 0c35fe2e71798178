// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// A tree RocksDB shapes itself, and what by_level's filters cost and save
// on it: `num` random Puts (16-byte keys, 100-byte values, no WAL, no
// compression) with RocksDB's default leveled options, automatic
// compactions and level_compaction_dynamic_level_bytes=true, then `reads`
// absent-key Gets. Reports per level the keys and filter bits per key, the
// whole tree's filter bits per key against the spec's uniform filters, the
// measured false positives per absent Get (filters' positives / Gets), and
// PlanLevelBits on the tree's real runs at that memory: the optimum and
// uniform bits (for an auto spec: PlanFilterCosts, its kinds and bits).
// docs/BENCHMARKS.md ("Bits per level") has the figures.
//
//   build/bench/rocksdb_level_tree --spec=blocked_bloom:10:by_level
//       --db=/tmp/tree --listener=true      (one command line)

#include <gflags/gflags.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "adapters/rocksdb/rocksdb_compat.h"
#include "sstfilter/params.h"
#include "sstfilter/rocksdb.h"
#include "sstfilter/spec.h"

DEFINE_string(spec, "blocked_bloom:10:by_level", "sstfilter spec");
DEFINE_string(db, "", "database directory (created; must not exist)");
DEFINE_bool(listener, true, "add NewRocksDBLevelListener's listener");
DEFINE_uint64(num, 10000000, "random Puts (keys drawn from [0, num))");
DEFINE_uint64(reads, 300000, "absent-key Gets");
DEFINE_uint64(seed, 301, "seed of the keys");

namespace {

// Key r: 2r as 16 decimal digits; absent keys are the odd numbers between.
std::string Key(uint64_t n) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIu64, n);
  return buf;
}

void Die(const std::string& what, const rocksdb::Status& s) {
  std::fprintf(stderr, "rocksdb_level_tree: %s: %s\n", what.c_str(),
               s.ToString().c_str());
  std::exit(1);
}

void WaitIdle(rocksdb::DB* db) {
  for (;;) {
    uint64_t pending = 0, running = 0, flushes = 0;
    db->GetIntProperty("rocksdb.compaction-pending", &pending);
    db->GetIntProperty("rocksdb.num-running-compactions", &running);
    db->GetIntProperty("rocksdb.num-running-flushes", &flushes);
    if (pending + running + flushes == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

struct Level {
  int files = 0;
  double keys = 0, bits = 0, uniform_bits = 0;
};

}  // namespace

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  sstfilter::FilterSpec spec;
  if (FLAGS_db.empty() || !sstfilter::ParseFilterSpec(FLAGS_spec, &spec).ok()) {
    std::fprintf(stderr, "rocksdb_level_tree: need --db and a valid --spec\n");
    return 2;
  }
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  rocksdb::Status s = sstfilter::NewRocksDBFilterPolicy(FLAGS_spec, &policy);
  if (!s.ok()) Die("policy", s);
  rocksdb::Options o;
  o.create_if_missing = true;
  o.error_if_exists = true;
  o.compression = rocksdb::kNoCompression;
  o.level_compaction_dynamic_level_bytes = true;
  o.statistics = rocksdb::CreateDBStatistics();
  rocksdb::BlockBasedTableOptions bt;
  bt.filter_policy = policy;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(bt));
  if (FLAGS_listener) {
    std::shared_ptr<rocksdb::EventListener> listener;
    s = sstfilter::NewRocksDBLevelListener(policy, &listener);
    if (!s.ok()) Die("listener", s);
    o.listeners.push_back(listener);
  }
  std::unique_ptr<rocksdb::DB> db;
  s = sstfilter::OpenInto(
      &db, [&](auto* out) { return rocksdb::DB::Open(o, FLAGS_db, out); });
  if (!s.ok()) Die("open " + FLAGS_db, s);

  std::mt19937_64 rng(FLAGS_seed);
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  const std::string value(100, 'v');
  for (uint64_t i = 0; i < FLAGS_num; i++) {
    s = db->Put(wo, Key(2 * (rng() % FLAGS_num)), value);
    if (!s.ok()) Die("put", s);
  }
  s = db->Flush(rocksdb::FlushOptions());
  if (!s.ok()) Die("flush", s);
  WaitIdle(db.get());

  // Per level: files, filter keys and bits, and the spec's uniform bits.
  std::map<std::string, int> level_of;
  rocksdb::ColumnFamilyMetaData meta;
  db->GetColumnFamilyMetaData(&meta);
  for (const auto& l : meta.levels) {
    for (const auto& f : l.files) level_of[f.db_path + f.name] = l.level;
  }
  rocksdb::TablePropertiesCollection props;
  s = db->GetPropertiesOfAllTables(&props);
  if (!s.ok()) Die("properties", s);
  std::map<int, Level> levels;
  std::vector<uint64_t> runs;  // L0 files, then levels >= 1
  sstfilter::FilterSpec uniform = spec;
  uniform.by_level = false;
  for (const auto& [file, p] : props) {
    const int level = level_of[file];
    Level& l = levels[level];
    sstfilter::FilterParams fp;
    if (!sstfilter::ParamsForSpec(uniform, p->num_filter_entries, &fp).ok()) {
      return 1;
    }
    l.files++;
    l.keys += static_cast<double>(p->num_filter_entries);
    l.bits += 8.0 * static_cast<double>(p->filter_size);
    l.uniform_bits += 8.0 * static_cast<double>(fp.filter_bytes);
    if (level == 0) runs.push_back(p->num_filter_entries);
  }
  Level all;
  for (const auto& [level, l] : levels) {
    if (level >= 1) runs.push_back(static_cast<uint64_t>(l.keys));
    all.files += l.files;
    all.keys += l.keys;
    all.bits += l.bits;
    all.uniform_bits += l.uniform_bits;
  }
  std::printf("spec %s listener %d num %" PRIu64 "\n", FLAGS_spec.c_str(),
              FLAGS_listener ? 1 : 0, FLAGS_num);
  for (const auto& [level, l] : levels) {
    std::printf("L%d files %d keys %.0f (%.1f%%) filter bits/key %.2f\n", level,
                l.files, l.keys, 100 * l.keys / all.keys, l.bits / l.keys);
  }
  std::printf("tree filter bits/key %.3f, uniform %s %.3f: %+.2f%%\n",
              all.bits / all.keys, uniform.ToString().c_str(),
              all.uniform_bits / all.keys,
              100 * (all.bits / all.uniform_bits - 1));

  // Absent keys: the odd numbers between present ones.
  o.statistics->Reset();
  std::string v;
  for (uint64_t i = 0; i < FLAGS_reads; i++) {
    if (!db->Get(rocksdb::ReadOptions(), Key(2 * (rng() % FLAGS_num) + 1), &v)
             .IsNotFound()) {
      Die("absent Get", rocksdb::Status::Corruption("found"));
    }
  }
  const double positives = static_cast<double>(
      o.statistics->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE));
  std::printf("measured false positives per absent Get %.5f (%" PRIu64
              " Gets)\n",
              positives / static_cast<double>(FLAGS_reads), FLAGS_reads);

  // At this tree's memory, in the spec's unit: the optimum and uniform.
  sstfilter::LevelPlan plan;
  const double avg = spec.bits_per_key * all.bits / all.uniform_bits;
  if (spec.auto_kind) {
    // An auto spec's own plan: its kinds and bits at this tree's memory.
    const size_t l0 = levels.count(0) != 0 ? levels[0].files : 0;
    sstfilter::FilterSpec at = spec;
    at.bits_per_key = avg;
    sstfilter::CostPlan cost;
    if (sstfilter::PlanFilterCosts(at, runs, sstfilter::TreeRebuilds(runs, l0),
                                   &cost)
            .ok()) {
      std::printf("PlanFilterCosts on these %zu runs at %.3f bits/key:",
                  runs.size(), avg);
      for (size_t i = 0; i < runs.size(); i++) {
        std::printf(" %s:%.2f", sstfilter::FilterKindName(cost.kinds[i]),
                    cost.bits_per_key[i]);
      }
      std::printf(", %.5f expected false positives per absent Get\n",
                  cost.expected_false_positives);
    }
  } else if (sstfilter::PlanLevelBits(spec.kind, runs, avg, &plan).ok()) {
    std::printf(
        "PlanLevelBits on these %zu runs at %.3f bits/key: optimum %.5f, "
        "uniform %.5f expected false positives per absent Get\n",
        runs.size(), avg, plan.expected_false_positives,
        plan.uniform_false_positives);
  }
  return 0;
}
