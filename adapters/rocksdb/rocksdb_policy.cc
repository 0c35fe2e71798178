// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The RocksDB adapter: thin translations of the core's three steps.
//
//   FilterPolicy::GetBuilderWithContext -> NewFilterBuilder(spec), wrapped
//   FilterPolicy::GetFilterBitsReader   -> FilterReader::Open(bytes), wrapped
//   ObjectLibrary factory "sstfilter.*" -> NewRocksDBFilterPolicy(id)

#include <rocksdb/env.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "adapters/rocksdb/rocksdb_builder.h"
#include "adapters/rocksdb/rocksdb_level.h"
#include "adapters/rocksdb/rocksdb_range.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/params.h"
#include "sstfilter/rocksdb.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace {

std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }
// Key i of the rocksdb::Slice* array `keys` (FilterReader::KeyAt).
std::string_view SliceAt(const void* keys, size_t i) {
  return View(*static_cast<rocksdb::Slice* const*>(keys)[i]);
}

// Where Finish places a filter in the buffer it hands RocksDB.
constexpr uintptr_t kCacheLineBytes = 64;

// The id of `spec`. A seed is written "seed=<n>" (and by_level's tree
// options "size_ratio=<x>", "l0_files=<n>"), and RocksDB's option
// parser reads a bare '=' as an assignment: an OPTIONS file line
// "filter_policy={sstfilter.bloom:10:seed=7}" loads as NO filter, silently.
// So an id with '=' is the value of "id=", which RocksDB writes as
// "{id=sstfilter.bloom:10:seed=7}" and reads back (tested).
std::string IdOf(const FilterSpec& spec) {
  std::string id = kRocksDBIdPrefix + spec.ToString();
  if (id.find('=') != std::string::npos) id = "id=" + id;
  return id;
}

}  // namespace

namespace internal {

RocksDBBitsBuilder::RocksDBBitsBuilder(
    std::unique_ptr<FilterBuilder> core, bool verify,
    std::shared_ptr<const FilterSecret> secret)
    : core_(std::move(core)), verify_(verify), secret_(std::move(secret)) {}

void RocksDBBitsBuilder::Add(uint64_t hash) {
  core_->AddHash(hash);
  if (verify_) pending_.push_back(hash);
}

void RocksDBBitsBuilder::AddKey(const rocksdb::Slice& key) {
  const uint64_t k = core_->HashKey(View(key));
  if (!(has_last_key_ && k == last_key_)) Add(k);
  last_key_ = k;
  has_last_key_ = true;
}

// RocksDB 9.6+ passes a key with its prefix, or a prefix twice (partitioned
// filters). The core drops only a hash equal to the one added just before
// it: not enough once keys and alts interleave, (k1, p) (k2, p) adding
// k1 p k2 p. So both hashes are first compared with the previous call's
// key and alt, which are in the filter being built (Finish forgets them):
// every key and alt still matches.
void RocksDBBitsBuilder::AddKeyAndAlt(const rocksdb::Slice& key,
                                      const rocksdb::Slice& alt) {
  const uint64_t k = core_->HashKey(View(key));
  const uint64_t a = core_->HashKey(View(alt));
  const bool key_seen =
      (has_last_key_ && k == last_key_) || (has_last_alt_ && k == last_alt_);
  if (!key_seen) Add(k);
  const bool seen = a == k || (has_last_alt_ && a == last_alt_) ||
                    (has_last_key_ && a == last_key_);
  if (!seen) Add(a);
  last_key_ = k;
  last_alt_ = a;
  has_last_key_ = has_last_alt_ = true;
}

size_t RocksDBBitsBuilder::EstimateEntriesAdded() {
  return core_->NumEntries();
}

rocksdb::Slice RocksDBBitsBuilder::Finish(std::unique_ptr<const char[]>* buf) {
  // The core appends to a std::string; RocksDB wants a buffer it frees
  // with delete[], so the bytes are copied once (2-10 ms for the 12.5 MB
  // of 10^7 keys: under 2% of the build). RocksDB reads the filter through the returned slice, which may
  // start anywhere in *buf: it starts at a cache line, so a reader over it
  // (MaybePostVerify, a table reader handed this memory) finds every
  // blocked Bloom block in one line.
  std::string bytes;
  core_->Finish(&bytes);
  char* owned = new char[bytes.size() + kCacheLineBytes - 1];
  const uintptr_t addr = reinterpret_cast<uintptr_t>(owned);
  char* out = owned + (-addr & (kCacheLineBytes - 1));
  std::memcpy(out, bytes.data(), bytes.size());
  buf->reset(owned);
  finished_.swap(pending_);
  pending_.clear();
  has_last_key_ = has_last_alt_ = false;
  return rocksdb::Slice(out, bytes.size());
}

rocksdb::Status RocksDBBitsBuilder::MaybePostVerify(
    const rocksdb::Slice& filter) {
  if (!verify_) return rocksdb::Status::OK();
  const FilterReader r = FilterReader::Open(View(filter), secret_.get());
  bool ok = r.valid();
  for (size_t i = 0; ok && i < finished_.size(); i++) {
    ok = r.MayMatchHash(finished_[i]);
  }
  finished_.clear();
  return ok ? rocksdb::Status::OK()
            : rocksdb::Status::Corruption(
                  "sstfilter: a built filter misses one of its keys");
}

size_t RocksDBBitsBuilder::ApproximateNumEntries(size_t bytes) {
  return core_->MaxEntriesForSize(bytes);
}

size_t RocksDBBitsBuilder::CalculateSpace(size_t num_entries) {
  return core_->FilterSize(num_entries);
}

// The size of what Finish writes is a function of the entry count alone,
// so `bytes` adds nothing to the estimate.
double RocksDBBitsBuilder::EstimatedFpRate(size_t num_entries,
                                           size_t /*bytes*/) {
  FilterParams p;
  if (num_entries == 0 || !ParamsForSpec(core_->spec(), num_entries, &p).ok()) {
    return 0.0;
  }
  return p.expected_fpr;
}

}  // namespace internal

namespace {

// One per filter block, shared by RocksDB between threads: FilterReader is
// an immutable view, so every call is thread-safe. It holds the policy's
// secret, which a keyed FilterReader points to, for as long as it lives
// (RocksDB may keep it in its cache after the policy is gone).
class Reader final : public rocksdb::FilterBitsReader {
 public:
  Reader(std::string_view bytes, std::shared_ptr<const FilterSecret> secret)
      : secret_(std::move(secret)),
        r_(FilterReader::Open(bytes, secret_.get())) {}

  bool MayMatch(const rocksdb::Slice& entry) override {
    // Unreadable bytes match without hashing; every other mode, "never
    // matches" included, is MayMatchHash's.
    return !r_.valid() || r_.MayMatchHash(r_.Hash(View(entry)));
  }

  // MultiGet's path: the core's batched query hashes the keys one at a
  // time, prefetching what each needs, then tests them. It reads each key
  // through its Slice as it hashes it: a copy of the keys first would be a
  // pass of its own, slower than the misses it precedes.
  void MayMatch(int num_keys, rocksdb::Slice** keys, bool* may_match) override {
    if (num_keys <= 0) return;
    r_.MayMatch(static_cast<size_t>(num_keys), SliceAt, keys, may_match);
  }

 private:
  const std::shared_ptr<const FilterSecret> secret_;
  const FilterReader r_;
};

// The policies of this library that are alive. LevelSizerOf tells them
// from any other FilterPolicy without RTTI: RocksDB's release builds, and
// so the build plugin, compile with -fno-rtti.
class LivePolicies {
 public:
  static LivePolicies& Get() {
    static LivePolicies* live = new LivePolicies;  // outlives every policy
    return *live;
  }
  void Add(const rocksdb::FilterPolicy* p) {
    std::lock_guard<std::mutex> l(mu_);
    policies_.insert(p);
  }
  void Remove(const rocksdb::FilterPolicy* p) {
    std::lock_guard<std::mutex> l(mu_);
    policies_.erase(p);
  }
  bool Contains(const rocksdb::FilterPolicy* p) {
    std::lock_guard<std::mutex> l(mu_);
    return policies_.count(p) != 0;
  }

 private:
  std::mutex mu_;
  std::set<const rocksdb::FilterPolicy*> policies_;
};

class Policy final : public rocksdb::FilterPolicy {
 public:
  Policy(const FilterSpec& spec, std::shared_ptr<const FilterSecret> secret)
      : spec_(spec),
        secret_(std::move(secret)),
        name_(kRocksDBIdPrefix +
              std::string(spec.auto_kind ? "auto" : FilterKindName(spec.kind))),
        id_(IdOf(spec)),
        sizer_(spec),
        model_(spec) {
    LivePolicies::Get().Add(this);
  }
  ~Policy() override { LivePolicies::Get().Remove(this); }
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;

  // "sstfilter.<kind>" ("sstfilter.auto"): the Customizable name, shared
  // by every size.
  const char* Name() const override { return name_.c_str(); }
  std::string GetId() const override { return id_; }
#if SSTFILTER_ROCKSDB_GENERATION >= 1
  // One family for every kind: the filter bytes say which kind they are.
  const char* CompatibilityName() const override { return kFamilyName; }
#endif

  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext& context) const override {
    std::unique_ptr<FilterBuilder> core;
    // The spec was checked buildable when the policy was made (and
    // by_level keeps bits within the kind's range), so this cannot fail;
    // if it did, nullptr means "no filter", never a wrong one.
    if (!NewFilterBuilder(SpecFor(context), &core, secret_.get()).ok()) {
      return nullptr;
    }
    // Raw owning pointer: RocksDB's signature; it deletes the builder.
    return new internal::RocksDBBitsBuilder(
        std::move(core),
        context.table_options.detect_filter_construct_corruption, secret_);
  }

  internal::LevelSizer* sizer() const { return &sizer_; }

  // The spec of a new table's filter: by_level and auto plan it on the
  // tree that the listener made in code for this policy reports (if that
  // listener follows the table's database and column family; if not, on
  // the model tree), else on that of the listener of the table's database
  // and column family (internal::TreeChannel), else on the model tree.
  FilterSpec SpecFor(const rocksdb::FilterBuildingContext& context) const {
    if (!sizer_.UsesTree(context)) return sizer_.SpecFor(context);
    if (sizer_.bound()) {
      if (sizer_.Follows(context.info_log, context.column_family_name)) {
        NoteOnce(context, Note::kListened);
        return sizer_.SpecFor(context);
      }
      // A flush always tells the listeners first; a job that does not
      // (CompactFiles) may run before the listener has heard of the
      // database, so only a flush says that the listener is missing.
      if (context.reason == rocksdb::TableFileCreationReason::kFlush) {
        NoteOnce(context, Note::kBoundElsewhere);
      }
      return model_.SpecFor(context);
    }
    std::shared_ptr<internal::TreeChannel> channel;
    const internal::ChannelLookup found = internal::FindTreeChannel(
        context.info_log, context.column_family_name, &channel);
    if (found == internal::ChannelLookup::kFound) {
      NoteOnce(context, Note::kListened);
      return channel->SizerFor(spec_)->SpecFor(context);
    }
    // A table rebuilt from the WAL at open (reason kRecovery) comes before
    // any listener event: it says nothing.
    if (context.reason == rocksdb::TableFileCreationReason::kFlush ||
        context.reason == rocksdb::TableFileCreationReason::kCompaction) {
      NoteOnce(context, found == internal::ChannelLookup::kShared
                            ? Note::kShared
                            : Note::kNoListener);
    }
    return sizer_.SpecFor(context);
  }

  rocksdb::FilterBitsReader* GetFilterBitsReader(
      const rocksdb::Slice& contents) const override {
    // Raw owning pointer: RocksDB's signature. Unreadable bytes give a
    // reader that matches every key.
    return new Reader(View(contents), secret_);
  }

 private:
  const FilterSpec spec_;
  // Null unless given or the spec is keyed; readers use it for keyed
  // filters whatever the spec.
  const std::shared_ptr<const FilterSecret> secret_;
  const std::string name_;
  const std::string id_;
  // What the database's info LOG is told, each note once per database and
  // column family: whether a level listener plans the filters, and if none
  // how to add one (a warning, then the listened line if a listener
  // reports the column family later).
  enum class Note { kListened, kNoListener, kShared, kBoundElsewhere };
  void NoteOnce(const rocksdb::FilterBuildingContext& context,
                Note note) const {
    if (context.info_log == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(noted_mu_);
      if (!noted_.insert({context.info_log, context.column_family_name, note})
               .second) {
        return;
      }
    }
    const std::string cf =
        "column family \"" + context.column_family_name + "\"";
    const std::string listener = kLevelListenerId;
    // What by_level or auto does without the tree.
    const std::string sizing = spec_.auto_kind ? "auto" : "by_level";
    const std::string fallback =
        context.compaction_style == rocksdb::kCompactionStyleUniversal
            ? "sizes its filters on a model tree of sorted runs each twice "
              "the next newer (RocksDB's default universal options), not on "
              "the runs it has"
            : "sizes its filters on a model tree, which spends about 20% "
              "more filter memory than asked on trees RocksDB shapes";
    rocksdb::InfoLogLevel level = rocksdb::InfoLogLevel::WARN_LEVEL;
    std::string text;
    switch (note) {
      case Note::kListened:
        level = rocksdb::InfoLogLevel::INFO_LEVEL;
        text = cf + " sizes its filters on the tree that the level listener (" +
               listener + ") reports";
        break;
      case Note::kShared:
        text = "two open databases share this info log and have a " + cf +
               ": " + sizing + " cannot tell their trees apart and " +
               fallback + ". Fix: give each database its own info_log";
        break;
      case Note::kNoListener:
        text = "no level listener follows " + cf + " yet, so " + sizing + " " +
               fallback + ". Fix: add the line \"listeners={" + listener +
               "}\" to [DBOptions] in the OPTIONS file (or \"listeners=" +
               listener +
               "\" to the DB options string), with the sstfilter plugin "
               "loaded; in C++, sstfilter::NewRocksDBLevelListener. (With "
               "the listener attached: RocksDB tells listeners of no "
               "CompactFiles job, and this table's job came before any "
               "flush or compaction of the column family since the "
               "database opened; later tables follow the tree.)";
        break;
      case Note::kBoundElsewhere:
        text =
            "this policy has a level listener made by "
            "sstfilter::NewRocksDBLevelListener, but this database does not "
            "carry one that follows " +
            cf + ", so " + sizing + " " + fallback +
            ". Fix: add the listener to options.listeners before DB::Open, "
            "made for this column family (its column_family argument); one "
            "policy and listener per column family and database";
        break;
    }
    rocksdb::Log(level, context.info_log, "[sstfilter] %s: %s", id_.c_str(),
                 text.c_str());
  }

  // GetBuilderWithContext is const, and learns the tree's levels.
  mutable internal::LevelSizer sizer_;
  // The model of a database that does not carry the listener made in code
  // for this policy, which reports to sizer_.
  mutable internal::LevelSizer model_;
  mutable std::mutex noted_mu_;
  // The (info log, column family, note) NoteOnce wrote.
  mutable std::set<std::tuple<const rocksdb::Logger*, std::string, Note>>
      noted_;
};

// Every error of NewPolicy is an InvalidArgument: a bad spec, or a keyed
// spec without its secret.
rocksdb::Status ToRocksDB(const Status& s, const std::string& spec) {
  std::string msg = s.message();
  // ParseFilterSpec quotes the spec itself; other errors get it here.
  if (msg.find('"' + spec + '"') == std::string::npos) {
    msg = "filter spec \"" + spec + "\": " + msg;
  }
  return rocksdb::Status::InvalidArgument("sstfilter: " + msg);
}

// The secret of a keyed spec given none through the API: the file named
// by kSecretFileEnvVar (OPTIONS files, the plugin, the stock tools).
Status SecretFromEnvironment(std::shared_ptr<const FilterSecret>* out) {
  const char* path = std::getenv(kSecretFileEnvVar);
  if (path == nullptr || *path == '\0') {
    return Status::InvalidArgument(
        std::string("a keyed spec needs the application's secret: pass it "
                    "to NewRocksDBFilterPolicy or name a file holding it in "
                    "the environment variable ") +
        kSecretFileEnvVar + ", which is not set");
  }
  std::unique_ptr<const FilterSecret> secret;
  Status s = ReadFilterSecretFile(path, &secret);
  if (!s.ok()) {
    return Status::InvalidArgument(s.message() + " (named by " +
                                   kSecretFileEnvVar + ")");
  }
  *out = std::move(secret);
  return Status::OK();
}

rocksdb::Status NewPolicy(const std::string& text,
                          std::shared_ptr<const FilterSecret> secret,
                          std::unique_ptr<Policy>* out) {
  FilterSpec spec;
  Status s = ParseFilterSpec(text, &spec);
  if (s.ok() && spec.keyed && secret == nullptr) {
    s = SecretFromEnvironment(&secret);
  }
  // A parsed spec is valid, and a keyed one now has its secret: nothing
  // else makes NewFilterBuilder fail, so builders can be made later.
  if (!s.ok()) return ToRocksDB(s, text);
  *out = std::make_unique<Policy>(spec, std::move(secret));
  return rocksdb::Status::OK();
}

}  // namespace

namespace internal {

LevelSizer* LevelSizerOf(const rocksdb::FilterPolicy* policy) {
  if (policy == nullptr || !LivePolicies::Get().Contains(policy)) {
    return nullptr;
  }
  return static_cast<const Policy*>(policy)->sizer();
}

}  // namespace internal

rocksdb::Status NewRocksDBFilterPolicy(
    const std::string& spec,
    std::shared_ptr<const rocksdb::FilterPolicy>* out) {
  return NewRocksDBFilterPolicy(spec, nullptr, out);
}

rocksdb::Status NewRocksDBFilterPolicy(
    const std::string& spec, std::shared_ptr<const FilterSecret> secret,
    std::shared_ptr<const rocksdb::FilterPolicy>* out) {
  std::unique_ptr<Policy> p;
  rocksdb::Status s = NewPolicy(spec, std::move(secret), &p);
  if (s.ok()) *out = std::move(p);
  return s;
}

int RegisterRocksDBFilterPolicies(rocksdb::ObjectLibrary& library,
                                  const std::string& /*arg*/) {
  // Every id starting with "sstfilter" (an empty separator followed by
  // anything): ours, valid or not, so that a typo such as
  // "sstfilter_bloom:10" is an error, not a silent "no filter". No other
  // id is claimed.
  library.AddFactory<const rocksdb::FilterPolicy>(
      rocksdb::ObjectLibrary::PatternEntry("sstfilter", true)
          .AddSeparator("", false),
      [](const std::string& uri,
         std::unique_ptr<const rocksdb::FilterPolicy>* guard,
         std::string* errmsg) -> const rocksdb::FilterPolicy* {
        std::unique_ptr<Policy> p;
        rocksdb::Status s = NewPolicy(uri, nullptr, &p);
        if (!s.ok()) {
          // RocksDB turns a null result with a message into InvalidArgument
          // (whatever our code), which ignore_unsupported_options does not
          // hide. From an OPTIONS file RocksDB drops the error and runs
          // without a filter (docs/ROCKSDB.md), so say it on stderr too:
          // the stock tools have no other way to show it.
          *errmsg = s.getState() != nullptr ? s.getState() : "sstfilter: error";
          std::fprintf(stderr,
                       "%s (if this came from an OPTIONS file, RocksDB goes "
                       "on without a filter)\n",
                       errmsg->c_str());
          return nullptr;
        }
        guard->reset(p.release());
        return guard->get();
      });
  internal::RegisterRocksDBRangeCollector(library);
  return 2 + internal::RegisterLevelListener(library);
}

}  // namespace sstfilter
