// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The RocksDB adapter: thin translations of the core's three steps.
//
//   FilterPolicy::GetBuilderWithContext -> NewFilterBuilder(spec), wrapped
//   FilterPolicy::GetFilterBitsReader   -> FilterReader::Open(bytes), wrapped
//   ObjectLibrary factory "sstfilter.*" -> NewRocksDBFilterPolicy(id)

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/rocksdb.h"
#include "sstfilter/spec.h"

#include <rocksdb/table.h>

namespace sstfilter {
namespace {

std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

// The id of `spec`. A seed is written "seed=<n>", and RocksDB's option
// parser reads a bare '=' as an assignment: an OPTIONS file line
// "filter_policy={sstfilter.bloom:10:seed=7}" loads as NO filter, silently.
// So a seeded id is the value of "id=", which RocksDB writes as
// "{id=sstfilter.bloom:10:seed=7}" and reads back (tested).
std::string IdOf(const FilterSpec& spec) {
  std::string id = kRocksDBIdPrefix + spec.ToString();
  if (spec.seed != 0) id = "id=" + id;
  return id;
}

// Builds one filter per Finish: one per SST (full filters) or one per
// partition (partitioned filters, where RocksDB reuses the builder).
class Builder final : public rocksdb::FilterBitsBuilder {
 public:
  // `verify`: keep the hashes of each filter so MaybePostVerify can check
  // every one of them against the bytes (detect_filter_construct_corruption).
  Builder(std::unique_ptr<FilterBuilder> core, bool verify)
      : core_(std::move(core)), seed_(core_->spec().seed), verify_(verify) {}

  void AddKey(const rocksdb::Slice& key) override {
    const uint64_t h = Hash64(View(key), seed_);
    core_->AddHash(h);
    if (verify_) pending_.push_back(h);
  }

  size_t EstimateEntriesAdded() override { return core_->NumEntries(); }

  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    // The core appends to a std::string; RocksDB wants a buffer it frees
    // with delete[]. Zero keys give the 5-byte "never matches" filter, not
    // an empty slice (which RocksDB would read as "no filter").
    std::string bytes;
    core_->Finish(&bytes);
    char* out = new char[bytes.size()];
    std::memcpy(out, bytes.data(), bytes.size());
    buf->reset(out);
    finished_.swap(pending_);
    pending_.clear();
    return rocksdb::Slice(out, bytes.size());
  }

  rocksdb::Status MaybePostVerify(const rocksdb::Slice& filter) override {
    if (!verify_) return rocksdb::Status::OK();
    const FilterReader r = FilterReader::Open(View(filter));
    bool ok = r.valid();
    for (size_t i = 0; ok && i < finished_.size(); i++) {
      ok = r.MayMatchHash(finished_[i]);
    }
    finished_.clear();
    return ok ? rocksdb::Status::OK()
              : rocksdb::Status::Corruption(
                    "sstfilter: a built filter misses one of its keys");
  }

  size_t ApproximateNumEntries(size_t bytes) override {
    return core_->MaxEntriesForSize(bytes);
  }

 private:
  const std::unique_ptr<FilterBuilder> core_;
  const uint64_t seed_;
  const bool verify_;
  std::vector<uint64_t> pending_;   // hashes since the last Finish
  std::vector<uint64_t> finished_;  // hashes of the filter Finish returned
};

// One per filter block, shared by RocksDB between threads: FilterReader is
// an immutable view, so every call is thread-safe.
class Reader final : public rocksdb::FilterBitsReader {
 public:
  explicit Reader(const FilterReader& r) : r_(r), seed_(r.seed()) {}

  bool MayMatch(const rocksdb::Slice& entry) override {
    // Unreadable bytes match without hashing; every other mode, "never
    // matches" included, is MayMatchHash's.
    return !r_.valid() || r_.MayMatchHash(Hash64(View(entry), seed_));
  }

  // MultiGet's path: hash the whole batch straight from RocksDB's slices,
  // then let the core prefetch every probe before testing any key.
  void MayMatch(int num_keys, rocksdb::Slice** keys,
                bool* may_match) override {
    if (!r_.valid() || r_.kind() == FilterKind::kEmpty) {
      std::fill(may_match, may_match + num_keys, !r_.valid());
      return;
    }
    constexpr int kChunk = 32;  // RocksDB's MultiGet batch size
    uint64_t hashes[kChunk];
    for (int i = 0; i < num_keys; i += kChunk) {
      const int m = std::min(kChunk, num_keys - i);
      for (int j = 0; j < m; j++) hashes[j] = Hash64(View(*keys[i + j]), seed_);
      r_.MayMatchHashes(static_cast<size_t>(m), hashes, may_match + i);
    }
  }

 private:
  const FilterReader r_;
  const uint64_t seed_;
};

class Policy final : public rocksdb::FilterPolicy {
 public:
  explicit Policy(const FilterSpec& spec)
      : spec_(spec),
        name_(kRocksDBIdPrefix + std::string(FilterKindName(spec.kind))),
        id_(IdOf(spec)) {}

  // "sstfilter.<kind>": the Customizable name, shared by every size.
  const char* Name() const override { return name_.c_str(); }
  std::string GetId() const override { return id_; }
  // One family for every kind: the filter bytes say which kind they are.
  const char* CompatibilityName() const override { return kFamilyName; }

  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext& context) const override {
    std::unique_ptr<FilterBuilder> core;
    // The spec was checked buildable when the policy was made, so this
    // cannot fail; if it did, nullptr means "no filter", never a wrong one.
    if (!NewFilterBuilder(spec_, &core).ok()) return nullptr;
    // Raw owning pointer: RocksDB's signature; it deletes the builder.
    return new Builder(std::move(core),
                       context.table_options.detect_filter_construct_corruption);
  }

  rocksdb::FilterBitsReader* GetFilterBitsReader(
      const rocksdb::Slice& contents) const override {
    // Raw owning pointer: RocksDB's signature. Unreadable bytes give a
    // reader that matches every key.
    return new Reader(FilterReader::Open(View(contents)));
  }

 private:
  const FilterSpec spec_;
  const std::string name_;
  const std::string id_;
};

rocksdb::Status ToRocksDB(const Status& s, const std::string& spec) {
  if (s.ok()) return rocksdb::Status::OK();
  std::string msg = s.message();
  // ParseFilterSpec quotes the spec itself; other errors get it here.
  if (msg.find('"' + spec + '"') == std::string::npos) {
    msg = "filter spec \"" + spec + "\": " + msg;
  }
  msg = "sstfilter: " + msg;
  if (s.code() == Status::Code::kNotSupported) {
    return rocksdb::Status::NotSupported(msg);
  }
  return rocksdb::Status::InvalidArgument(msg);
}

rocksdb::Status NewPolicy(const std::string& text,
                          std::unique_ptr<Policy>* out) {
  FilterSpec spec;
  Status s = ParseFilterSpec(text, &spec);
  // A kind may parse yet have no builder in this build: fail now, loudly,
  // rather than write SSTs without filters later.
  std::unique_ptr<FilterBuilder> probe;
  if (s.ok()) s = NewFilterBuilder(spec, &probe);
  if (!s.ok()) return ToRocksDB(s, text);
  *out = std::make_unique<Policy>(spec);
  return rocksdb::Status::OK();
}

}  // namespace

rocksdb::Status NewRocksDBFilterPolicy(
    const std::string& spec, std::shared_ptr<const rocksdb::FilterPolicy>* out) {
  std::unique_ptr<Policy> p;
  rocksdb::Status s = NewPolicy(spec, &p);
  if (s.ok()) *out = std::move(p);
  return s;
}

int RegisterRocksDBFilterPolicies(rocksdb::ObjectLibrary& library,
                                  const std::string& /*arg*/) {
  // "sstfilter", optionally followed by "." and anything: every id of
  // ours, valid or not, so that a typo is an error, not a silent "no filter".
  library.AddFactory<const rocksdb::FilterPolicy>(
      rocksdb::ObjectLibrary::PatternEntry("sstfilter", true)
          .AddSeparator(".", false),
      [](const std::string& uri,
         std::unique_ptr<const rocksdb::FilterPolicy>* guard,
         std::string* errmsg) -> const rocksdb::FilterPolicy* {
        std::unique_ptr<Policy> p;
        rocksdb::Status s = NewPolicy(uri, &p);
        if (!s.ok()) {
          // RocksDB turns a null result with a message into InvalidArgument
          // (whatever our code), which ignore_unsupported_options does not
          // hide.
          *errmsg = s.getState() != nullptr ? s.getState() : "sstfilter: error";
          return nullptr;
        }
        guard->reset(p.release());
        return guard->get();
      });
  return 1;
}

}  // namespace sstfilter
