// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Range filters in RocksDB through public APIs only (sstfilter/rocksdb.h):
//
//   TablePropertiesCollectorFactory "sstfilter.range_collector"
//       -> RangeFilterBuilder over every key a table stores
//       -> user-collected property kRocksDBRangeProperty
//   ReadOptions::table_filter (RocksDBRangeScan)
//       -> RangeFilterReader::MayContainKeysOnce(property, lower, upper)

#include "adapters/rocksdb/rocksdb_range.h"

#include <rocksdb/table_properties.h>
#include <rocksdb/utilities/options_type.h>

#include <unordered_map>
#include <utility>

#include "adapters/rocksdb/rocksdb_compat.h"
#include "sstfilter/range.h"
#include "sstfilter/rocksdb.h"

namespace sstfilter {
namespace {

// Collects every key the table stores, of any entry type: a table holding
// only the tombstone of a key in the range must still be read, or the
// older value below it would show. A range tombstone's key is only its
// start; tables with range tombstones are never skipped (RocksDBRangeScan
// reads num_range_deletions), so they need no filter.
class RangeCollector : public rocksdb::TablePropertiesCollector {
 public:
  RangeCollector(const RangeFilterSpec& spec, bool valid)
      : builder_(spec), valid_(valid) {}

  rocksdb::Status AddUserKey(const rocksdb::Slice& key,
                             const rocksdb::Slice& /*value*/,
                             rocksdb::EntryType type,
                             rocksdb::SequenceNumber /*seq*/,
                             uint64_t /*file_size*/) override {
    if (type == rocksdb::kEntryRangeDeletion) {
      has_range_deletion_ = true;
    } else if (valid_) {
      builder_.AddKey(std::string_view(key.data(), key.size()));
    }
    return rocksdb::Status::OK();
  }

  rocksdb::Status Finish(rocksdb::UserCollectedProperties* props) override {
    if (!valid_ || has_range_deletion_) return rocksdb::Status::OK();
    std::string bytes;
    builder_.Finish(&bytes);
    (*props)[kRocksDBRangeProperty] = std::move(bytes);
    return rocksdb::Status::OK();
  }

  rocksdb::UserCollectedProperties GetReadableProperties() const override {
    return {{std::string(kRocksDBRangeProperty) + ".spec",
             valid_ ? builder_.spec().ToString() : "invalid"}};
  }

  const char* Name() const override { return kRocksDBRangeCollectorId; }

 private:
  RangeFilterBuilder builder_;
  bool valid_;
  bool has_range_deletion_ = false;
};

// The option "spec" of the factory, as OPTIONS files write it:
// table_properties_collectors={id=sstfilter.range_collector;spec=range:14}
const std::unordered_map<std::string, rocksdb::OptionTypeInfo>
    kRangeCollectorOptions = {
        {"spec", rocksdb::OptionTypeInfo(0, rocksdb::OptionType::kString)},
};

class RangeCollectorFactory : public rocksdb::TablePropertiesCollectorFactory {
 public:
  explicit RangeCollectorFactory(std::string spec) : spec_text_(spec) {
    RegisterOptions("sstfilter.range_collector.options", &spec_text_,
                    &kRangeCollectorOptions);
  }

  static const char* kClassName() { return kRocksDBRangeCollectorId; }
  const char* Name() const override { return kClassName(); }

  rocksdb::Status PrepareOptions(const rocksdb::ConfigOptions& opts) override {
    RangeFilterSpec spec;
    Status s = ParseRangeFilterSpec(spec_text_, &spec);
    if (!s.ok()) return rocksdb::Status::InvalidArgument(s.message());
    return TablePropertiesCollectorFactory::PrepareOptions(opts);
  }

  // A spec that does not parse (only if PrepareOptions was skipped) gives
  // collectors that write no filter: tables are then never skipped.
  rocksdb::TablePropertiesCollector* CreateTablePropertiesCollector(
      rocksdb::TablePropertiesCollectorFactory::Context /*context*/) override {
    RangeFilterSpec spec;
    const bool valid = ParseRangeFilterSpec(spec_text_, &spec).ok();
    return new RangeCollector(spec, valid);  // RocksDB takes ownership
  }

  std::string ToString() const override {
    return std::string(Name()) + " (" + spec_text_ + ")";
  }

 private:
  std::string spec_text_;
};

}  // namespace

rocksdb::Status NewRocksDBRangeCollectorFactory(
    const std::string& spec,
    std::shared_ptr<rocksdb::TablePropertiesCollectorFactory>* out) {
  RangeFilterSpec parsed;
  Status s = ParseRangeFilterSpec(spec, &parsed);
  if (!s.ok()) return rocksdb::Status::InvalidArgument(s.message());
  *out = std::make_shared<RangeCollectorFactory>(parsed.ToString());
  return rocksdb::Status::OK();
}

namespace internal {

void RegisterRocksDBRangeCollector(rocksdb::ObjectLibrary& library) {
  library.AddFactory<rocksdb::TablePropertiesCollectorFactory>(
      kRocksDBRangeCollectorId,
      [](const std::string& /*uri*/,
         std::unique_ptr<rocksdb::TablePropertiesCollectorFactory>* guard,
         std::string* /*errmsg*/) {
        guard->reset(new RangeCollectorFactory(RangeFilterSpec().ToString()));
        return guard->get();
      });
}

}  // namespace internal

RocksDBRangeScan::RocksDBRangeScan(std::string lower,
                                   std::optional<std::string> upper)
    : lower_(std::move(lower)),
      upper_(std::move(upper)),
      lower_slice_(lower_),
      upper_slice_(upper_.has_value() ? rocksdb::Slice(*upper_)
                                      : rocksdb::Slice()),
      filter_([this](const rocksdb::TableProperties& props) {
        return MayContain(props);
      }) {}

bool RocksDBRangeScan::MayContain(const rocksdb::TableProperties& props) const {
  tables_checked_.fetch_add(1, std::memory_order_relaxed);
  if (props.num_range_deletions > 0) return true;
  const auto it = props.user_collected_properties.find(kRocksDBRangeProperty);
  if (it == props.user_collected_properties.end()) return true;
  std::optional<std::string_view> upper;
  if (upper_.has_value()) upper = *upper_;
  const bool may =
      RangeFilterReader::MayContainKeysOnce(it->second, lower_, upper);
  if (!may) tables_skipped_.fetch_add(1, std::memory_order_relaxed);
  return may;
}

void RocksDBRangeScan::Apply(rocksdb::ReadOptions* options) const {
  options->iterate_lower_bound = &lower_slice_;
  options->iterate_upper_bound = upper_.has_value() ? &upper_slice_ : nullptr;
  SetTableFilter(&options->table_filter, &filter_);
}

}  // namespace sstfilter
