// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// sstfilter policies in a real LevelDB, beside LevelDB's built-in Bloom
// (NewBloomFilterPolicy(10)) and no filter, in one process.
//
// First a report of data-block reads per absent Get. Reads are counted (an
// EnvWrapper counts Read calls on table files; block cache off), not timed,
// so the figures are exact for the fixed keys and need no repetitions.
// Two databases per policy, both compacted into one level:
//   small values  SSTFILTER_LEVELDB_BENCH_KEYS keys (default 1,000,000) of
//                 16 bytes with 100-byte values: ~34 keys per filter
//   large values  1/100 as many keys with 3,000-byte values: one key per
//                 filter
// each probed with 200,000 absent keys inside the key range per column:
// "far" ones (another length and tail than any stored key) and neighbours
// (a stored key with its last byte changed: to 'b', to 'q', to each other
// byte in turn). Also filter bits per key on disk (table bytes beyond the
// no-filter DB's).
//
// Then Google Benchmark timings:
//   CreateFilter/<policy>/<n>        one CreateFilter call of n keys
//   KeyMayMatch/<policy>             one call, a 36-key filter, absent keys
//   AbsentGet/<policy>/<far|nb_any>  DB::Get, small-values DB; counter
//                                    reads_per_get
//
//   build/bench/leveldb_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true      (one command line)
//
// Databases go to a fresh directory under $TMPDIR (default /tmp), removed
// at exit; 1M keys take ~130 MB per policy.

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "harness/keys.h"
#include "harness/leveldb_counting.h"
#include "harness/scratch.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/options.h"
#include "leveldb/slice.h"
#include "leveldb/write_batch.h"
#include "policy/format.h"
#include "sstfilter/leveldb.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace {

std::string Key(uint64_t i, char last = 'a') {
  return harness::FixedKeys().Key(i, last);
}

// At 10 bits/key, and bloom:9 and ribbon:9, whose filters take about the
// bytes on disk of LevelDB's Bloom at 10 (our trailer is a few bytes
// longer; ribbon:9 is what ribbon@leveldb:bloom:10 resolves to).
const char* const kSpecs[] = {"bloom:10", "blocked_bloom:10", "cuckoo:10",
                              "bloom:9", "ribbon:9"};
constexpr uint64_t kAbsentGets = 200000;

struct Policy {
  std::string label;
  std::unique_ptr<const leveldb::FilterPolicy> policy;  // null: no filter
};

// No filter, LevelDB's Bloom, then every sstfilter spec this build makes.
std::vector<Policy> MakePolicies() {
  std::vector<Policy> out;
  out.push_back({"none", nullptr});
  out.push_back(
      {"leveldb_bloom:10", std::unique_ptr<const leveldb::FilterPolicy>(
                               leveldb::NewBloomFilterPolicy(10))});
  for (const char* spec : kSpecs) {
    Policy p{std::string(kPolicyPrefix) + spec, nullptr};
    leveldb::Status s = NewLevelDBFilterPolicy(spec, &p.policy);
    if (!s.ok()) {
      std::fprintf(stderr, "leveldb_bench: skipping %s: %s\n", spec,
                   s.ToString().c_str());
      continue;
    }
    out.push_back(std::move(p));
  }
  return out;
}

uint64_t NumKeys() {
  const char* env = std::getenv("SSTFILTER_LEVELDB_BENCH_KEYS");
  const uint64_t n = env ? std::strtoull(env, nullptr, 10) : 0;
  return n >= 10000 ? n : 1000000;
}

std::string Value(uint64_t i, size_t size) {
  std::string v = Key(i);
  v.resize(size, static_cast<char>('a' + i % 26));
  return v;
}

// One database on disk, compacted into one level, with counted reads.
class Db {
 public:
  Db(const std::string& dir, const leveldb::FilterPolicy* policy,
     uint64_t num_keys, size_t value_size)
      : dir_(dir), num_keys_(num_keys), value_size_(value_size) {
    block_cache_.reset(leveldb::NewLRUCache(0));  // no caching
    leveldb::Options o;
    o.env = &env_;
    o.create_if_missing = true;
    o.error_if_exists = true;
    o.filter_policy = policy;
    o.block_cache = block_cache_.get();
    o.compression = leveldb::kNoCompression;
    leveldb::DB* db = nullptr;
    Check(leveldb::DB::Open(o, dir_, &db));
    db_.reset(db);
    const auto start = std::chrono::steady_clock::now();
    leveldb::WriteBatch batch;
    for (uint64_t i = 0; i < num_keys; i++) {
      batch.Put(Key(i), Value(i, value_size));
      if (batch.ApproximateSize() > (1 << 20) || i + 1 == num_keys) {
        Check(db_->Write(leveldb::WriteOptions(), &batch));
        batch.Clear();
      }
    }
    db_->CompactRange(nullptr, nullptr);
    load_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      if (harness::CountingEnv::IsTableFile(e.path().string())) {
        table_bytes_ += e.file_size();
      }
    }
    // Open every table now, so that later reads are data blocks only.
    std::string v;
    for (uint64_t i = 0; i < num_keys; i += 97) Get(Key(i), &v);
  }

  bool Get(const std::string& key, std::string* value) {
    leveldb::ReadOptions r;
    r.fill_cache = false;
    return db_->Get(r, key, value).ok();
  }

  // Reads per Get of kAbsentGets absent keys made by key(j, num_keys).
  double ReadsPerAbsentGet(std::string (*key)(uint64_t, uint64_t)) {
    std::string v;
    env_.Reset();
    for (uint64_t j = 0; j < kAbsentGets; j++) {
      if (Get(key(j, num_keys_), &v)) {
        std::fprintf(stderr, "leveldb_bench: an absent key was found\n");
        std::exit(1);
      }
    }
    return env_.reads() / double(kAbsentGets);
  }

  // Reads per Get of present keys, checking every value.
  double ReadsPerPresentGet() {
    std::string v;
    env_.Reset();
    uint64_t gets = 0;
    for (uint64_t i = 0; i < num_keys_; i += 7, gets++) {
      if (!Get(Key(i), &v) || v != Value(i, value_size_)) {
        std::fprintf(stderr, "leveldb_bench: key %llu lost\n",
                     static_cast<unsigned long long>(i));
        std::exit(1);
      }
    }
    return env_.reads() / double(gets);
  }

  harness::CountingEnv& env() { return env_; }
  uint64_t num_keys() const { return num_keys_; }
  uint64_t table_bytes() const { return table_bytes_; }
  double load_seconds() const { return load_seconds_; }

 private:
  static void Check(const leveldb::Status& s) {
    if (!s.ok()) {
      std::fprintf(stderr, "leveldb_bench: %s\n", s.ToString().c_str());
      std::exit(1);
    }
  }

  harness::CountingEnv env_;
  const std::string dir_;
  const uint64_t num_keys_;
  const size_t value_size_;
  std::unique_ptr<leveldb::Cache> block_cache_;
  std::unique_ptr<leveldb::DB> db_;
  uint64_t table_bytes_ = 0;
  double load_seconds_ = 0;
};

// The absent keys of the report, each a column.
struct AbsentKind {
  const char* name;
  std::string (*key)(uint64_t j, uint64_t num_keys);
};
std::string QNeighbourKey(uint64_t j, uint64_t num_keys) {
  return Key(j * 7919 % num_keys, 'q');
}
const AbsentKind kAbsentKinds[] = {
    {"far", harness::FarAbsentKey},
    {"nb 'b'", harness::NeighbourAbsentKey},
    {"nb 'q'", QNeighbourKey},
    {"nb any", harness::AnyByteNeighbourKey},
};
constexpr size_t kNumAbsentKinds =
    sizeof(kAbsentKinds) / sizeof(kAbsentKinds[0]);

// Builds both databases of every policy and prints the report. Keeps the
// small-values databases (index i = policy i) for the timed Gets.
std::vector<std::unique_ptr<Db>> Report(const std::vector<Policy>& policies,
                                        const std::string& root) {
  std::vector<std::unique_ptr<Db>> kept;
  const uint64_t n = NumKeys();
  struct Scenario {
    const char* name;
    uint64_t keys;
    size_t value_size;
  };
  const Scenario scenarios[] = {{"small values", n, 100},
                                {"large values", n / 100, 3000}};
  std::printf(
      "LevelDB 1.23: data-block reads per absent Get, %llu Gets per column, "
      "block cache off.\n"
      "far: absent keys of another length and tail; nb 'b', nb 'q': a stored "
      "key with its\nlast byte 'a' changed to 'b' or 'q'; nb any: to each "
      "of the 255 other bytes in turn.\n(x: ratio to leveldb_bloom:10; "
      "present: reads per present Get; bits/key: table bytes\nbeyond the "
      "no-filter DB's; load: write + CompactRange seconds, noisy)\n",
      static_cast<unsigned long long>(kAbsentGets));
  for (const Scenario& sc : scenarios) {
    const size_t index = &sc - scenarios;
    std::printf(
        "\n%s: %llu keys of 16 B, %zu-byte values, 4 KiB blocks, "
        "no compression, one level\n%-26s",
        sc.name, static_cast<unsigned long long>(sc.keys), sc.value_size,
        "policy");
    for (const AbsentKind& k : kAbsentKinds)
      std::printf(" %8s %6s", k.name, "x");
    std::printf(" %7s %8s %6s\n", "present", "bits/key", "load s");
    double bloom[kNumAbsentKinds] = {};
    uint64_t none_bytes = 0;
    for (size_t p = 0; p < policies.size(); p++) {
      const std::string dir =
          root + "/" + std::to_string(index) + "_" + std::to_string(p);
      auto db = std::make_unique<Db>(dir, policies[p].policy.get(), sc.keys,
                                     sc.value_size);
      std::printf("%-26s", policies[p].label.c_str());
      for (size_t k = 0; k < kNumAbsentKinds; k++) {
        const double reads = db->ReadsPerAbsentGet(kAbsentKinds[k].key);
        if (p == 1) bloom[k] = reads;  // policies[1] is LevelDB's Bloom
        if (p == 0) {
          std::printf(" %8.5f %6s", reads, "-");
        } else {
          std::printf(" %8.5f %6.3f", reads, reads / bloom[k]);
        }
      }
      if (p == 0) none_bytes = db->table_bytes();
      std::printf(
          " %7.3f %8.2f %6.1f\n", db->ReadsPerPresentGet(),
          8.0 * (double(db->table_bytes()) - double(none_bytes)) / sc.keys,
          db->load_seconds());
      std::fflush(stdout);
      if (index == 0) {
        kept.push_back(std::move(db));
      } else {
        db.reset();
        std::filesystem::remove_all(dir);
      }
    }
  }
  std::printf("\n");
  return kept;
}

// --- timings
// ------------------------------------------------------------------

// 1024 batches of n keys, as LevelDB passes them.
struct Batches {
  std::vector<std::string> keys;
  std::vector<leveldb::Slice> slices;
  uint64_t n;
  explicit Batches(uint64_t n_) : n(n_) {
    for (uint64_t i = 0; i < 1024 * n; i++) keys.push_back(Key(i));
    slices.assign(keys.begin(), keys.end());
  }
  const leveldb::Slice* batch(uint64_t b) const {
    return &slices[(b % 1024) * n];
  }
};

void BM_CreateFilter(benchmark::State& state,
                     const leveldb::FilterPolicy* policy, uint64_t n) {
  const Batches batches(n);
  std::string dst;
  uint64_t b = 0, bytes = 0;
  for (auto _ : state) {
    dst.clear();
    policy->CreateFilter(batches.batch(b++), static_cast<int>(n), &dst);
    bytes += dst.size();
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["bits_per_key"] = 8.0 * bytes / (double(b) * n);
}

// KeyMayMatch over 1024 filters of 36 keys, absent keys. With `unchecked`,
// our filters' trailers are rewritten in the unchecked forms of format
// versions before 4 (same payload, same answers): the difference is the
// cost of checking the filter's bytes on each "no" (docs/RELIABILITY.md,
// "What the payload check costs").
void BM_KeyMayMatch(benchmark::State& state,
                    const leveldb::FilterPolicy* policy, bool unchecked) {
  const Batches batches(36);
  std::vector<std::string> filters;
  for (uint64_t b = 0; b < 1024; b++) {
    filters.emplace_back();
    policy->CreateFilter(batches.batch(b), 36, &filters.back());
    internal::Trailer t;
    const auto* d = reinterpret_cast<const uint8_t*>(filters.back().data());
    if (unchecked && internal::ParseTrailer(d, filters.back().size(), &t)) {
      filters.back().resize(t.payload_size);
      internal::AppendTrailer(t, &filters.back(), /*checked=*/false);
    }
  }
  std::vector<std::string> probes;
  // 2^16 keys: a sequence of calls too long for the branch predictor to
  // learn, as a database's Gets are.
  constexpr uint64_t kProbes = 1 << 16;
  for (uint64_t i = 0; i < kProbes; i++)
    probes.push_back(harness::OtherPrefixKey(i));
  uint64_t i = 0, matches = 0;
  for (auto _ : state) {
    matches += policy->KeyMayMatch(probes[i % kProbes], filters[i % 1024]);
    i++;
  }
  state.counters["fp_pct"] = 100.0 * matches / double(i);
}

void BM_AbsentGet(benchmark::State& state, Db* db,
                  std::string (*key)(uint64_t, uint64_t)) {
  std::vector<std::string> keys;
  for (uint64_t j = 0; j < kAbsentGets; j++) {
    keys.push_back(key(j, db->num_keys()));
  }
  std::string v;
  uint64_t j = 0;
  db->env().Reset();
  for (auto _ : state) {
    benchmark::DoNotOptimize(db->Get(keys[j++ % kAbsentGets], &v));
  }
  state.counters["reads_per_get"] = db->env().reads() / double(j);
}

// The policies, databases and their folder, until the benchmarks have run.
// Members go in reverse order: the databases close before their policies
// and their folder go.
struct Databases {
  harness::ScratchDir root{"sstfilter_leveldb_bench"};
  std::vector<Policy> policies = MakePolicies();
  std::vector<std::unique_ptr<Db>> dbs;
};

}  // namespace

std::shared_ptr<void> bench::RegisterBenchmarks() {
  auto state = std::make_shared<Databases>();
  const std::vector<Policy>& policies = state->policies;
  state->dbs = Report(policies, state->root.path());
  std::vector<std::unique_ptr<Db>>& dbs = state->dbs;

  for (size_t p = 1; p < policies.size(); p++) {
    const leveldb::FilterPolicy* policy = policies[p].policy.get();
    const std::string& label = policies[p].label;
    for (uint64_t n : {1, 8, 36, 200}) {
      benchmark::RegisterBenchmark(
          ("CreateFilter/" + label + "/" + std::to_string(n)).c_str(),
          BM_CreateFilter, policy, n);
    }
    benchmark::RegisterBenchmark(("KeyMayMatch/" + label).c_str(),
                                 BM_KeyMayMatch, policy, false);
    if (p >= 2) {  // ours: the same filters without the payload check
      benchmark::RegisterBenchmark(
          ("KeyMayMatch/" + label + "/unchecked").c_str(), BM_KeyMayMatch,
          policy, true);
    }
  }
  for (size_t p = 0; p < policies.size(); p++) {
    const std::string& label = policies[p].label;
    benchmark::RegisterBenchmark(("AbsentGet/" + label + "/far").c_str(),
                                 BM_AbsentGet, dbs[p].get(),
                                 harness::FarAbsentKey);
    benchmark::RegisterBenchmark(("AbsentGet/" + label + "/nb_any").c_str(),
                                 BM_AbsentGet, dbs[p].get(),
                                 harness::AnyByteNeighbourKey);
  }
  return state;
}

}  // namespace sstfilter
