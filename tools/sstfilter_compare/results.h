// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// What a comparison measured, and the lookup phases that measure it.

#ifndef SSTFILTER_TOOLS_COMPARE_RESULTS_H_
#define SSTFILTER_TOOLS_COMPARE_RESULTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tools/sstfilter_compare/bound.h"
#include "tools/sstfilter_compare/engine.h"
#include "tools/sstfilter_compare/policies.h"
#include "tools/sstfilter_compare/workload.h"

namespace sstfilter {
namespace compare {

// One lookup phase of one policy on one engine. An "op" is one key looked
// up (a Get, or one key of a MultiGet batch); a "call" is one Get or one
// MultiGet. Latencies are per call.
struct PhaseResult {
  Phase phase = Phase::kPresent;
  uint64_t ops = 0;
  uint64_t calls = 0;
  uint64_t found = 0;  // keys found (present keys: all of them)
  double seconds = 0;
  bool time_capped = false;  // stopped by --phase_seconds before --reads
  IoCounters io;
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  EngineCounters engine;

  double PerOp(uint64_t v) const {
    return ops == 0 ? 0 : static_cast<double>(v) / static_cast<double>(ops);
  }
  double probes_per_op() const { return PerOp(io.probes); }
  double reads_per_op() const { return PerOp(io.reads); }
  double bytes_per_op() const { return PerOp(io.bytes); }
  double ops_per_second() const {
    return seconds > 0 ? static_cast<double>(ops) / seconds : 0;
  }
  // False-positive rate per filter probe: "may match" answers from tables
  // that do not hold the key, over all probes of such tables. Each found
  // key was probed (and matched) in exactly the one table that holds it.
  // -1 if there were no such probes (no filter).
  double fpr() const {
    if (io.probes <= found) return -1;
    return static_cast<double>(io.positives - found) /
           static_cast<double>(io.probes - found);
  }
};

// One policy on one engine.
struct PolicyRun {
  std::string engine;
  std::string label;  // as planned: "cuckoo@rocksdb:bloom:10"
  Policy policy;      // what ran: "cuckoo:9"
  bool sized = false;
  std::string reference;  // label of Y for X@Y
  bool implicit = false;
  bool skipped = false;
  std::string skip_reason;
  BuildResult build;
  std::vector<PhaseResult> phases;

  double bits_per_key_disk(uint64_t keys) const {
    return keys == 0 ? 0
                     : 8.0 * static_cast<double>(build.filter_block_bytes) /
                           static_cast<double>(keys);
  }
  // -1 if unknown.
  double bits_per_key_memory(uint64_t keys) const {
    if (build.filter_memory_bytes < 0 || keys == 0) return -1;
    return 8.0 * static_cast<double>(build.filter_memory_bytes) /
           static_cast<double>(keys);
  }
  double keys_per_filter(uint64_t keys) const {
    return build.num_filters == 0 ? 0
                                  : static_cast<double>(keys) /
                                        static_cast<double>(build.num_filters);
  }
  double build_share() const {
    return build.load_seconds > 0
               ? build.filter_build_seconds / build.load_seconds
               : 0;
  }
  const PhaseResult* Find(Phase p) const {
    for (const PhaseResult& r : phases) {
      if (r.phase == p) return &r;
    }
    return nullptr;
  }
  // H of the tree's sorted runs (bound.h), or -1 if its tables are unknown.
  double run_entropy() const {
    return RunEntropy(
        SortedRunKeys(build.tables.empty() ? build.shape : build.tables));
  }
  // The information bound on reads per absent Get at this run's filter
  // bits per key (bound.h), or -1 if its tree is unknown or it has no
  // filters.
  double absent_reads_bound(uint64_t keys) const {
    const double h = run_entropy();
    if (h < 0 || build.filter_block_bytes == 0 || keys == 0) return -1;
    return AbsentReadsBound(bits_per_key_disk(keys), h);
  }
  // The absent phase's reads per Get over the bound, or -1.
  double ratio_vs_bound(uint64_t keys) const {
    const PhaseResult* a = Find(Phase::kAbsent);
    const double bound = absent_reads_bound(keys);
    if (a == nullptr || a->ops == 0 || bound <= 0) return -1;
    return a->reads_per_op() / bound;
  }
};

struct EngineInfo {
  std::string name;
  std::string version;
  std::string io_mode;
};

// Everything a report prints, in order.
struct Report {
  std::vector<std::pair<std::string, std::string>> header;  // key, value
  std::vector<EngineInfo> engines;
  std::vector<PolicyRun> runs;
  std::vector<std::string> baselines;  // labels, first match per engine
  std::vector<std::string> notes;
  uint64_t num_keys = 0;

  // The baseline run of `engine`, or null.
  const PolicyRun* Baseline(const std::string& engine) const;
  // The run `label` on `engine`, or null.
  const PolicyRun* FindRun(const std::string& engine,
                           const std::string& label) const;
};

struct LookupOptions {
  uint64_t reads = 0;      // ops per phase
  double max_seconds = 0;  // per phase; 0: no limit
  int threads = 1;
  int batch = 32;  // MultiGet keys per call
  double multiget_present = 0.5;
  uint64_t seed = 0;
  // Phase::kMixed: the share of absent keys, and their distribution (over
  // the present keys, and likewise over as many absent ones): uniform if
  // zipf is null.
  double absent_share = 0.5;
  const Zipf* zipf = nullptr;
};

// Runs `phase` on the open database of `engine`. Every present key must be
// found with its value and every absent key not found: anything else is an
// error (a false negative, or a broken engine): Corruption.
Status RunPhase(Engine* engine, const KeySpace& keys, Phase phase,
                const LookupOptions& options,
                const std::function<void(uint64_t, uint64_t)>& progress,
                PhaseResult* out);

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_RESULTS_H_
