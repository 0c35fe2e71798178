// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The LevelDB adapter: a leveldb::FilterPolicy over the core's builder and
// reader. The only file that sees LevelDB's Slice and Status.
//
// LevelDB calls CreateFilter once per 2 KiB of data-block offsets (tens of
// keys) on every flush and compaction, and KeyMayMatch once per Get per
// table, so both stay free of per-call allocation:
// - CreateFilter reuses one builder (its hash buffer keeps its capacity).
//   CreateFilter is const and may run on several threads at once (DBs
//   sharing the policy, a DB::Open recovering its log while another DB
//   compacts), so the spare builder sits in an atomic slot: a call takes it
//   out, builds, and puts it back. A call that finds the slot empty (another
//   thread holds the builder) makes its own and frees it afterwards; that
//   costs an allocation only under contention, never a lock or a wrong
//   result.
// - KeyMayMatch asks FilterReader::MayMatchOnce, a view over LevelDB's bytes
//   that checks the bytes only when it would answer "no".

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"
#include "leveldb/status.h"
#include "sstfilter/filter.h"
#include "sstfilter/leveldb.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"
#include "sstfilter/status.h"

namespace sstfilter {
namespace {

std::string_view View(const leveldb::Slice& s) {
  return std::string_view(s.data(), s.size());
}

class LevelDBFilterPolicy final : public leveldb::FilterPolicy {
 public:
  // REQUIRES: `builder` was made by NewFilterBuilder with `secret`, so its
  // spec is valid.
  LevelDBFilterPolicy(std::unique_ptr<FilterBuilder> builder,
                      std::shared_ptr<const FilterSecret> secret)
      : spec_(builder->spec()),
        secret_(std::move(secret)),
        spare_(builder.release()) {}

  ~LevelDBFilterPolicy() override { delete spare_.load(); }

  // The family name, the same for every kind: see sstfilter/leveldb.h.
  const char* Name() const override { return kFamilyName; }

  void CreateFilter(const leveldb::Slice* keys, int n,
                    std::string* dst) const override {
    std::unique_ptr<FilterBuilder> builder(
        spare_.exchange(nullptr, std::memory_order_acq_rel));
    if (builder == nullptr) {
      // Another thread holds the spare. The spec was validated when the
      // policy was made, so this cannot fail; should it ever, write a
      // filter that matches everything rather than none (an empty filter
      // might be taken for "no key").
      if (!NewFilterBuilder(spec_, &builder, secret_.get()).ok()) {
        AppendMatchAll(dst);
        return;
      }
    }
    for (int i = 0; i < n; i++) builder->AddKey(View(keys[i]));
    builder->Finish(dst);  // appends; empties the builder, keeps its memory
    FilterBuilder* empty = nullptr;
    if (spare_.compare_exchange_strong(empty, builder.get(),
                                       std::memory_order_acq_rel)) {
      builder.release();  // the slot owns it now
    }
  }

  bool KeyMayMatch(const leveldb::Slice& key,
                   const leveldb::Slice& filter) const override {
    return FilterReader::MayMatchOnce(View(filter), View(key), secret_.get());
  }

 private:
  // A byte no valid filter ends with (a full trailer's tag has a high
  // nibble of 1 or 2): every reader treats it as "may match".
  static void AppendMatchAll(std::string* dst) { dst->push_back('\0'); }

  const FilterSpec spec_;
  const std::shared_ptr<const FilterSecret> secret_;  // may be null
  // The builder no call is using, or null while one is.
  mutable std::atomic<FilterBuilder*> spare_;
};

// Every error of NewLevelDBFilterPolicy is an InvalidArgument: a bad spec,
// or a keyed spec without its secret.
leveldb::Status ToLevelDB(const Status& s, const std::string& spec) {
  return leveldb::Status::InvalidArgument(
      "sstfilter LevelDB policy \"" + spec + "\"", s.message());
}

}  // namespace

leveldb::Status NewLevelDBFilterPolicy(
    const std::string& spec,
    std::unique_ptr<const leveldb::FilterPolicy>* out) {
  return NewLevelDBFilterPolicy(spec, nullptr, out);
}

leveldb::Status NewLevelDBFilterPolicy(
    const std::string& spec, std::shared_ptr<const FilterSecret> secret,
    std::unique_ptr<const leveldb::FilterPolicy>* out) {
  FilterSpec parsed;
  Status s = ParseFilterSpec(spec, &parsed);
  std::unique_ptr<FilterBuilder> builder;
  if (s.ok()) s = NewFilterBuilder(parsed, &builder, secret.get());
  if (!s.ok()) return ToLevelDB(s, spec);
  *out = std::make_unique<LevelDBFilterPolicy>(std::move(builder),
                                               std::move(secret));
  return leveldb::Status::OK();
}

}  // namespace sstfilter
