// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// DynamicCuckooFilter (include/sstfilter/mutable.h). Its in-memory table is
// its serialized payload, so Serialize is a copy and FilterReader reads the
// bytes with the same code as here.

#include <cmath>
#include <string>
#include <utility>

#include "policy/cuckoo/cuckoo_impl.h"
#include "policy/format.h"
#include "policy/mutable_common.h"
#include "policy/spec_parse.h"
#include "sstfilter/filter.h"
#include "sstfilter/mutable.h"
#include "sstfilter/params.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"

namespace sstfilter {

using internal::CuckooTable;
using internal::kCuckooSlack;
using internal::WithTagBits;

DynamicCuckooFilter::DynamicCuckooFilter() = default;
DynamicCuckooFilter::~DynamicCuckooFilter() = default;
DynamicCuckooFilter::DynamicCuckooFilter(DynamicCuckooFilter&&) noexcept =
    default;
DynamicCuckooFilter& DynamicCuckooFilter::operator=(
    DynamicCuckooFilter&&) noexcept = default;

Status DynamicCuckooFilter::Create(const MutableFilterOptions& options,
                                   DynamicCuckooFilter* out) {
  const char* what = "dynamic cuckoo filter";
  Status s = internal::CheckMutableOptions(options, what);
  if (!s.ok()) return s;
  int f;
  if (options.bits_per_key > 0) {
    if (options.bits_per_key < internal::kCuckooMinTagBits ||
        options.bits_per_key > internal::kCuckooMaxTagBits) {
      return Status::InvalidArgument(
          std::string(what) +
          ": bits_per_key (fingerprint bits) must be "
          "within [4, 32], got " +
          internal::FormatNumber(options.bits_per_key));
    }
    f = CuckooFingerprintBits(options.bits_per_key);
  } else {
    f = internal::kCuckooMinTagBits;
    while (f < internal::kCuckooMaxTagBits &&
           CuckooFpr(f, internal::kCuckooLoad) > options.target_fpr) {
      f++;
    }
    if (CuckooFpr(f, internal::kCuckooLoad) > options.target_fpr) {
      return Status::InvalidArgument(
          std::string(what) + ": target_fpr " +
          internal::FormatNumber(options.target_fpr) +
          " needs more than 32 fingerprint bits");
    }
  }
  const uint64_t buckets = internal::CuckooBucketsFor(options.capacity);
  const double bytes = static_cast<double>(buckets) * f / 2;
  if (bytes > static_cast<double>(internal::kMaxMutableTableBytes)) {
    return internal::MutableTooLarge(what, options.capacity, bytes);
  }
  DynamicCuckooFilter filter;
  filter.num_buckets_ = buckets;
  filter.f_ = f;
  filter.seed_ = options.seed;
  filter.secret_ = options.secret;
  filter.rng_ = internal::Mix64(options.seed ^ options.capacity);
  filter.table_.assign(
      internal::CuckooPayloadBytes(filter.num_buckets_, f) + kCuckooSlack, 0);
  *out = std::move(filter);
  return Status::OK();
}

uint64_t DynamicCuckooFilter::HashKey(std::string_view key) const {
  return internal::FilterHash(key, seed_, secret_);
}

bool DynamicCuckooFilter::InsertHash(uint64_t hash) {
  if (num_buckets_ == 0) return false;
  const bool ok = WithTagBits(f_, [&](auto F) {
    CuckooTable<F()> table(table_.data(), num_buckets_, &moves_);
    return table.Insert(table.Locate(hash, 0), /*skip_present=*/false,
                        internal::kCuckooMaxKicks, &rng_);
  });
  if (!ok) return false;
  size_++;
  return true;
}

bool DynamicCuckooFilter::EraseHash(uint64_t hash) {
  if (num_buckets_ == 0) return false;
  const bool ok = WithTagBits(f_, [&](auto F) {
    CuckooTable<F()> table(table_.data(), num_buckets_, &moves_);
    return table.Erase(table.Locate(hash, 0));
  });
  if (!ok) return false;
  size_--;
  return true;
}

bool DynamicCuckooFilter::ContainsHash(uint64_t hash) const {
  if (num_buckets_ == 0) return false;
  // table_.size() includes the slack: every bucket is one word load.
  return internal::CuckooMayMatch(hash, table_.data(), table_.size(),
                                  num_buckets_, f_, 0);
}

void DynamicCuckooFilter::Serialize(std::string* dst) const {
  const uint8_t params[2] = {static_cast<uint8_t>(f_), 0};  // f, salt
  const uint64_t payload =
      num_buckets_ == 0 ? 0 : internal::CuckooPayloadBytes(num_buckets_, f_);
  internal::AppendMutable(FilterKind::kDynamicCuckoo, table_.data(), payload,
                          seed_, secret_, params, 2, dst);
}

Status DynamicCuckooFilter::Deserialize(std::string_view bytes,
                                        DynamicCuckooFilter* out,
                                        const FilterSecret* secret) {
  internal::Trailer t;
  Status s = internal::ParseMutable(bytes, FilterKind::kDynamicCuckoo,
                                    "dynamic cuckoo filter", secret, &t);
  if (!s.ok()) return s;
  DynamicCuckooFilter filter;
  filter.seed_ = t.seed;
  filter.secret_ = t.keyed ? secret : nullptr;
  if (t.kind == FilterKind::kDynamicCuckoo) {
    if (t.params[1] != 0) {
      return Status::Corruption("dynamic cuckoo filter: salt " +
                                std::to_string(t.params[1]) + " is not 0");
    }
    filter.f_ = t.params[0];
    filter.num_buckets_ =
        internal::CuckooBucketsForPayload(t.payload_size, filter.f_);
    filter.table_.assign(bytes.begin(), bytes.begin() + t.payload_size);
    filter.table_.resize(t.payload_size + kCuckooSlack, 0);
    filter.size_ = WithTagBits(filter.f_, [&](auto F) {
      return CuckooTable<F()>(filter.table_.data(), filter.num_buckets_,
                              &filter.moves_)
          .CountTags();
    });
    filter.rng_ = internal::Mix64(t.seed ^ filter.size_);
  }
  *out = std::move(filter);
  return Status::OK();
}

}  // namespace sstfilter
