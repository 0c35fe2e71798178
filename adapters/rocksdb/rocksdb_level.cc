// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// by_level's rule (docs/LEVEL_SIZING.md, "The rule in RocksDB"), and
// auto's (the same, with a kind and bits per run from PlanFilterCosts; "the
// average" is then the auto spec itself, whose builder picks the kind by
// the filter's keys):
//
//   FIFO compaction, level -1 (SstFileWriter)                -> the average
//   a level the listener's tree plans a table for            -> its plan
//     (universal: a compaction's table at L0 -> its output run's plan,
//      else as a flush; the bottom run -> its plan in a tree whose
//      newer runs hold half its keys, unless CompactRange writes it)
//   otherwise (no listener, or a level its tree lacks): the model tree
//     of the compaction style
//     nothing learned yet about the tree                     -> the average
//     level L >= 1, is_bottommost                            -> the bottom's
//     level L >= 1                                           -> depth
//                                                               bottom - L
//     level 0 (flush, recovery, intra-L0)                    -> one L0 file's

#include "adapters/rocksdb/rocksdb_level.h"

#include <rocksdb/table.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sstfilter/params.h"

namespace sstfilter {
namespace internal {

namespace {

bool PlansTree(const FilterSpec& spec) {
  return spec.by_level || spec.auto_kind;
}

// The range a plan's average may move in: the kind's, or auto's.
double MinAverage(const FilterSpec& spec) {
  return spec.auto_kind ? 1 : MinBitsPerKey(spec.kind);
}
double MaxAverage(const FilterSpec& spec) {
  return spec.auto_kind ? 64 : MaxBitsPerKey(spec.kind);
}

}  // namespace

bool LevelSizer::Plans() const { return PlansTree(spec_); }

bool LevelSizer::UsesTree(const rocksdb::FilterBuildingContext& context) const {
  return PlansTree(spec_) &&
         (context.compaction_style == rocksdb::kCompactionStyleLevel ||
          context.compaction_style == rocksdb::kCompactionStyleUniversal) &&
         context.level_at_creation >= 0;
}

FilterSpec LevelSizer::SpecFor(const rocksdb::FilterBuildingContext& context) {
  if (!UsesTree(context)) return spec_;
  const int level = context.level_at_creation;
  std::lock_guard<std::mutex> lock(mu_);
  const bool universal =
      context.compaction_style == rocksdb::kCompactionStyleUniversal;
  universal_ = universal;
  // Universal compaction's merges into L0 (num_levels 1, or no level free
  // above the next run): which run they make, only the listener knows.
  // Without its plan for that run, such a merge of L0 runs is taken for
  // one L0 run, as a flush is.
  if (universal && level == 0 &&
      context.reason == rocksdb::TableFileCreationReason::kCompaction &&
      has_l0_output_) {
    return observed_l0_output_;
  }
  ModelTree* model = universal ? &universal_model_ : &level_model_;
  if (level >= 1) {
    model->top = std::min(model->top, level);
    model->bottom = std::max(model->bottom, level);
  }
  const FilterSpec* observed = ObservedSpec(level);
  return observed != nullptr ? *observed : ModelSpec(context, model);
}

std::vector<FilterSpec> LevelSizer::PlanSpecs(const std::vector<uint64_t>& keys,
                                              const std::vector<bool>& l0,
                                              double average,
                                              double* budget_bits) const {
  std::vector<FilterSpec> specs;
  if (!spec_.auto_kind) {
    LevelPlan plan;
    if (!PlanLevelBits(spec_.kind, keys, average, &plan).ok()) return specs;
    for (double bits : plan.bits_per_key) {
      specs.push_back(spec_);
      specs.back().bits_per_key = bits;
    }
    *budget_bits = plan.budget_bits;
    return specs;
  }
  // TreeRebuilds wants the L0 files first, then the levels from the top.
  std::vector<size_t> order;
  for (size_t i = 0; i < keys.size(); i++) {
    if (l0[i]) order.push_back(i);
  }
  const size_t l0_runs = order.size();
  for (size_t i = 0; i < keys.size(); i++) {
    if (!l0[i]) order.push_back(i);
  }
  std::vector<uint64_t> ordered;
  for (size_t i : order) ordered.push_back(keys[i]);
  const std::vector<double> ordered_weights = TreeRebuilds(ordered, l0_runs);
  std::vector<double> weights(keys.size());
  for (size_t j = 0; j < order.size(); j++)
    weights[order[j]] = ordered_weights[j];
  FilterSpec avg = spec_;
  avg.bits_per_key = average;
  CostPlan plan;
  if (!PlanFilterCosts(avg, keys, weights, &plan).ok()) return specs;
  for (size_t i = 0; i < keys.size(); i++) {
    // The kind's own spec, with the auto spec's hashing: what builders of
    // that kind write, read by any reader of this library.
    FilterSpec k;
    k.kind = plan.kinds[i] == FilterKind::kEmpty ? FilterKind::kBlockedBloom
                                                 : plan.kinds[i];
    k.bits_per_key = plan.kinds[i] == FilterKind::kEmpty ? spec_.bits_per_key
                                                         : plan.bits_per_key[i];
    k.seed = spec_.seed;
    k.keyed = spec_.keyed;
    k.salt = spec_.salt;
    specs.push_back(k);
  }
  *budget_bits = plan.budget_bits;
  return specs;
}

void LevelSizer::Observe(const TreeRuns& tree, uint64_t new_l0_keys,
                         uint64_t flush_keys) {
  if (!Plans()) return;
  const std::vector<Run> runs = PlanRuns(tree, new_l0_keys, flush_keys);
  if (runs.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (tree.manual_level == observed_manual_level_ &&
        NearlySame(runs, observed_runs_)) {
      return;
    }
  }
  // Planned without the lock: tables being built need it meanwhile.
  std::vector<uint64_t> keys;
  std::vector<bool> l0;
  for (const Run& r : runs) {
    keys.push_back(r.keys.keys);
    l0.push_back(r.level <= 0);
  }
  // The spec was validated, so these succeed; if not, keep the old plan.
  double budget_bits = 0;
  std::vector<FilterSpec> specs =
      PlanSpecs(keys, l0, spec_.bits_per_key, &budget_bits);
  if (specs.empty()) return;
  const double average =
      std::clamp(spec_.bits_per_key - Overspent(runs, specs, budget_bits),
                 std::max(MinAverage(spec_), 0.75 * spec_.bits_per_key),
                 std::min(MaxAverage(spec_), 1.25 * spec_.bits_per_key));
  specs = PlanSpecs(keys, l0, average, &budget_bits);
  if (specs.empty()) return;
  if (universal_) {
    AnticipateBottom(runs, tree.manual_level, flush_keys, average, &specs);
  }
  std::lock_guard<std::mutex> lock(mu_);
  observed_runs_ = runs;
  observed_manual_level_ = tree.manual_level;
  FilterSpec none = spec_;
  none.bits_per_key = 0;
  const FilterSpec l0_spec =
      observed_specs_.empty() ? none : observed_specs_[0];
  observed_specs_.assign(std::max<size_t>(1, tree.levels.size()), none);
  observed_specs_[0] = l0_spec;
  has_l0_output_ = false;
  for (size_t i = 0; i < runs.size(); i++) {
    if (runs[i].level >= 0) {
      observed_specs_[static_cast<size_t>(runs[i].level)] = specs[i];
    } else if (runs[i].level == kL0Output) {
      has_l0_output_ = true;
      observed_l0_output_ = specs[i];
    }
  }
}

// Under universal compaction only a merge of every run writes the bottom
// run, which then holds every key; the newer runs grow again until they
// hold about as many keys as it (the next such merge: universal's size
// ratio), or until the load ends. Planned for the whole tree, the bottom
// run would keep those bits while it fills half the tree or less, and the
// newer runs could not make up for them. So its table is planned for the
// middle of its life: with newer runs holding half its keys, shaped as the
// universal model's (each as many keys as all newer ones), down to a flush.
// Not if a manual compaction writes it (CompactRange, as after a bulk
// load): the tree it makes is planned as it is.
void LevelSizer::AnticipateBottom(const std::vector<Run>& runs,
                                  int manual_level, uint64_t flush_keys,
                                  double average,
                                  std::vector<FilterSpec>* specs) const {
  size_t bottom = runs.size();
  for (size_t i = 0; i < runs.size(); i++) {
    if (runs[i].level >= 1 &&
        (bottom == runs.size() || runs[i].level > runs[bottom].level)) {
      bottom = i;
    }
  }
  if (bottom == runs.size() || runs[bottom].level <= manual_level) return;
  const uint64_t n = runs[bottom].keys.keys;
  const uint64_t smallest = std::max<uint64_t>(flush_keys, n / 64 + 1);
  std::vector<uint64_t> keys = {n};
  std::vector<bool> l0 = {false};
  uint64_t newer = 0;
  for (uint64_t run = n / 4; newer < n / 2; run /= 2) {
    const uint64_t k = run >= smallest ? run : n / 2 - newer;
    keys.insert(keys.begin(), k);  // newer runs first, as PlanSpecs wants
    l0.push_back(false);
    newer += k;
  }
  double budget_bits = 0;
  const std::vector<FilterSpec> plan =
      PlanSpecs(keys, l0, average, &budget_bits);
  if (!plan.empty()) (*specs)[bottom] = plan.back();
}

// The runs in plan order, each with its level: levels >= 1, then the L0
// files (level -1: no new table goes to them, but for the output of a
// running compaction, kL0Output), the new L0 file, and the L0 files to
// come.
std::vector<LevelSizer::Run> LevelSizer::PlanRuns(const TreeRuns& tree,
                                                  uint64_t new_l0_keys,
                                                  uint64_t flush_keys) const {
  std::vector<Run> runs;
  for (size_t level = 1; level < tree.levels.size(); level++) {
    if (tree.levels[level].keys > 0) {
      runs.push_back({static_cast<int>(level), tree.levels[level]});
    }
  }
  for (size_t i = 0; i < tree.l0_files.size(); i++) {
    const int level = static_cast<int>(i) == tree.l0_output ? kL0Output : -1;
    if (tree.l0_files[i].keys > 0) runs.push_back({level, tree.l0_files[i]});
  }
  if (new_l0_keys > 0) runs.push_back({0, {new_l0_keys, {}}});
  const size_t l0_runs = tree.l0_files.size() + (new_l0_keys > 0 ? 1 : 0);
  const size_t l0_mean = static_cast<size_t>(spec_.l0_files + 1) / 2;
  for (size_t f = l0_runs; flush_keys > 0 && f < l0_mean; f++) {
    runs.push_back({-1, {flush_keys, {}}});
  }
  return runs;
}

// Tables keep the bits of the tree they were planned for, so once the tree
// changed shape, the filters that stay spend more or less than their runs'
// plan. The next tables make up for it: the plan's average moves by the
// difference per key of the tree (in the spec's unit). As jobs rewrite a
// fraction f of the keys, the difference left shrinks by f each time.
double LevelSizer::Overspent(const std::vector<Run>& runs,
                             const std::vector<FilterSpec>& specs,
                             double budget_bits) {
  double over = 0, keys = 0;
  for (size_t i = 0; i < runs.size(); i++) {
    keys += static_cast<double>(runs[i].keys.keys);
    const std::vector<BuiltFilter>& built = runs[i].keys.built;
    if (built.empty()) continue;
    const std::vector<uint64_t> bytes = PlannedBytes(specs[i], built);
    for (size_t f = 0; f < built.size(); f++) {
      if (bytes[f] > 0)
        over += built[f].bits - 8.0 * static_cast<double>(bytes[f]);
    }
  }
  // Spec bits per bit written (a cuckoo spec bit costs 1/0.95 bits).
  const double per_bit = spec_.bits_per_key * keys / budget_bits;
  return over / keys * per_bit;
}

std::vector<uint64_t> LevelSizer::PlannedBytes(
    const FilterSpec& spec, const std::vector<BuiltFilter>& built) {
  std::vector<uint64_t> out(built.size(), 0);
  std::vector<size_t> missing;
  {
    std::lock_guard<std::mutex> lock(planned_mu_);
    const auto s = std::find_if(planned_.begin(), planned_.end(),
                                [&](const auto& e) { return e.first == spec; });
    for (size_t f = 0; f < built.size(); f++) {
      if (s != planned_.end()) {
        const auto it = s->second.find(built[f].keys);
        if (it != s->second.end()) {
          out[f] = it->second;
          continue;
        }
      }
      missing.push_back(f);
    }
  }
  if (missing.empty()) return out;
  // Planned without the lock: another job's plan may need it meanwhile.
  // Files of one flush size share their key count: planned once.
  std::map<uint64_t, uint64_t> planned;
  for (size_t f : missing) {
    const auto [it, added] = planned.emplace(built[f].keys, 0);
    if (added) {
      FilterParams p;
      it->second = ParamsForSpec(spec, built[f].keys, &p).ok() ? p.filter_bytes
                                                               : uint64_t{0};
    }
    out[f] = it->second;
  }
  std::lock_guard<std::mutex> lock(planned_mu_);
  auto s = std::find_if(planned_.begin(), planned_.end(),
                        [&](const auto& e) { return e.first == spec; });
  if (s == planned_.end()) {
    // A new spec: the oldest goes (by_level's bits move with the tree).
    if (planned_.size() >= kMaxPlannedSpecs) planned_.erase(planned_.begin());
    s = planned_.insert(planned_.end(), {spec, {}});
  }
  if (s->second.size() + planned.size() > kMaxPlannedCounts) s->second.clear();
  s->second.insert(planned.begin(), planned.end());
  return out;
}

const FilterSpec* LevelSizer::ObservedSpec(int level) const {
  const size_t l = static_cast<size_t>(level);
  return l < observed_specs_.size() && observed_specs_[l].bits_per_key > 0
             ? &observed_specs_[l]
             : nullptr;
}

bool LevelSizer::NearlySame(const std::vector<Run>& a,
                            const std::vector<Run>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    const uint64_t x = a[i].keys.keys, y = b[i].keys.keys;
    if (a[i].level != b[i].level || (x > y ? x - y : y - x) > x / 32) {
      return false;
    }
  }
  return true;
}

// The model: levels top..bottom, each `ratio` times the one above, and L0
// files. Level compaction: ratio size_ratio, l0_files L0 files holding
// together 1/size_ratio of the top level. Universal compaction (RocksDB's
// default options: size_ratio 1%, min_merge_width 2): runs merge once the
// newer runs hold about as many keys, so each run holds about as many as
// all newer ones, twice the next newer: ratio 2, and L0 holds
// (l0_files + 1) / 2 flushes (its mean between merges), each 1/2 of the
// top level.
FilterSpec LevelSizer::ModelSpec(const rocksdb::FilterBuildingContext& context,
                                 ModelTree* model) {
  if (model->bottom < 1) return spec_;  // a flush before compactions
  const std::vector<FilterSpec>& specs = ModelPlan(model);
  const int level = context.level_at_creation;
  if (level == 0) return specs[0];
  const int depth = context.is_bottommost ? 0 : model->bottom - level;
  return specs[1 + static_cast<size_t>(std::max(0, depth))];
}

// [0]: an L0 file's spec; [1 + d]: that of the level d above the bottom.
// Cached: the model changes shape rarely.
const std::vector<FilterSpec>& LevelSizer::ModelPlan(ModelTree* model) {
  const int top = model->top, bottom = model->bottom;
  std::vector<FilterSpec>& specs = model->plans[{top, bottom}];
  if (!specs.empty()) return specs;
  const double ratio = model->universal ? 2 : spec_.size_ratio;
  const int l0_files =
      model->universal ? (spec_.l0_files + 1) / 2 : spec_.l0_files;
  // Key counts of the model: the bottom at 10^12 keys, every run at least 1.
  const int levels = bottom - top + 1;
  std::vector<uint64_t> runs;
  double keys = 1e12;
  for (int d = 0; d < levels; d++) {
    runs.push_back(static_cast<uint64_t>(std::max(1.0, keys)));
    if (d + 1 < levels) keys /= ratio;
  }
  const double l0_keys =
      model->universal ? keys / ratio : keys / ratio / l0_files;
  const uint64_t l0_file = static_cast<uint64_t>(std::max(1.0, l0_keys));
  runs.insert(runs.end(), static_cast<size_t>(l0_files), l0_file);
  std::vector<bool> l0(runs.size(), false);
  std::fill(l0.end() - l0_files, l0.end(), true);
  // Levels from the top down, as PlanSpecs orders them for auto.
  std::reverse(runs.begin(), runs.begin() + levels);
  double budget_bits = 0;
  const std::vector<FilterSpec> plan =
      PlanSpecs(runs, l0, spec_.bits_per_key, &budget_bits);
  specs.assign(1 + static_cast<size_t>(levels), spec_);
  // The spec was validated, so this succeeds; if not, the average.
  if (plan.empty()) return specs;
  specs[0] = plan.back();
  for (int d = 0; d < levels; d++) {
    specs[1 + static_cast<size_t>(d)] =
        plan[static_cast<size_t>(levels - 1 - d)];
  }
  return specs;
}

void LevelSizer::NoteFollowed(const std::shared_ptr<rocksdb::Logger>& info_log,
                              const std::string& cf) {
  if (info_log == nullptr) return;
  std::lock_guard<std::mutex> lock(followed_mu_);
  followed_.erase(
      std::remove_if(followed_.begin(), followed_.end(),
                     [](const Followed& f) { return f.info_log.expired(); }),
      followed_.end());
  for (const Followed& f : followed_) {
    if (f.log == info_log.get() && f.cf == cf) return;
  }
  followed_.push_back({info_log, info_log.get(), cf});
}

bool LevelSizer::Follows(const rocksdb::Logger* info_log,
                         const std::string& cf) {
  std::lock_guard<std::mutex> lock(followed_mu_);
  for (const Followed& f : followed_) {
    // A live entry at this address is this log (as in FindTreeChannel).
    if (f.log == info_log && f.cf == cf && !f.info_log.expired()) return true;
  }
  return false;
}

void TreeChannel::Observe(const TreeRuns& tree, uint64_t new_l0_keys,
                          uint64_t flush_keys) {
  std::vector<LevelSizer*> sizers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    posted_ = true;
    last_tree_ = tree;
    last_new_l0_keys_ = new_l0_keys;
    last_flush_keys_ = flush_keys;
    for (const auto& [spec, sizer] : sizers_) sizers.push_back(sizer.get());
  }
  // Planned without the channel's lock: the tables being built need it.
  for (LevelSizer* sizer : sizers)
    sizer->Observe(tree, new_l0_keys, flush_keys);
}

LevelSizer* TreeChannel::SizerFor(const FilterSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<LevelSizer>& sizer = sizers_[spec.ToString()];
  if (sizer == nullptr) {
    sizer = std::make_unique<LevelSizer>(spec);
    if (posted_)
      sizer->Observe(last_tree_, last_new_l0_keys_, last_flush_keys_);
  }
  return sizer.get();
}

namespace {

struct ChannelEntry {
  std::weak_ptr<rocksdb::Logger> info_log;  // expired: the DB is closed
  const rocksdb::Logger* log;               // its address, to compare
  std::string db_name;
  std::string cf;
  std::shared_ptr<TreeChannel> channel;
};

// The process's channels: few (one per column family of an open database
// with a listener), so a vector.
struct ChannelRegistry {
  std::mutex mu;
  std::vector<ChannelEntry> entries;

  // REQUIRES: mu held.
  void DropClosed() {
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const ChannelEntry& e) {
                                   return e.info_log.expired();
                                 }),
                  entries.end());
  }
};

ChannelRegistry& Registry() {
  static ChannelRegistry* registry = new ChannelRegistry;  // never destroyed
  return *registry;
}

}  // namespace

std::shared_ptr<TreeChannel> ListenedTreeChannel(rocksdb::DB* db,
                                                 const std::string& cf) {
  const std::shared_ptr<rocksdb::Logger> info_log = db->GetDBOptions().info_log;
  const std::string db_name = db->GetName();
  ChannelRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.DropClosed();
  for (const ChannelEntry& e : r.entries) {
    if (e.log == info_log.get() && e.db_name == db_name && e.cf == cf) {
      return e.channel;
    }
  }
  r.entries.push_back(
      {info_log, info_log.get(), db_name, cf, std::make_shared<TreeChannel>()});
  return r.entries.back().channel;
}

ChannelLookup FindTreeChannel(const rocksdb::Logger* info_log,
                              const std::string& cf,
                              std::shared_ptr<TreeChannel>* out) {
  if (info_log == nullptr) return ChannelLookup::kNone;
  ChannelRegistry& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  int found = 0;
  for (const ChannelEntry& e : r.entries) {
    // A live entry at this address is this log: an address is reused only
    // after its logger is gone, and the builder's logger is alive.
    if (e.log == info_log && e.cf == cf && !e.info_log.expired()) {
      *out = e.channel;
      found++;
    }
  }
  if (found > 1) {
    out->reset();
    return ChannelLookup::kShared;
  }
  return found == 1 ? ChannelLookup::kFound : ChannelLookup::kNone;
}

}  // namespace internal
}  // namespace sstfilter
