// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// CountingBloomFilter (include/sstfilter/mutable.h). Its in-memory table is
// its serialized payload, so Serialize is a copy and FilterReader reads the
// bytes with the same code as here.

#include <cmath>
#include <string>
#include <utility>

#include "policy/bloom/bloom_builder.h"
#include "policy/bloom/counting_bloom_impl.h"
#include "policy/format.h"
#include "policy/mutable_common.h"
#include "policy/spec_parse.h"
#include "sstfilter/filter.h"
#include "sstfilter/mutable.h"
#include "sstfilter/params.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"

namespace sstfilter {

using internal::CountingBloomImpl;

CountingBloomFilter::CountingBloomFilter() = default;
CountingBloomFilter::~CountingBloomFilter() = default;
CountingBloomFilter::CountingBloomFilter(CountingBloomFilter&&) noexcept =
    default;
CountingBloomFilter& CountingBloomFilter::operator=(
    CountingBloomFilter&&) noexcept = default;

Status CountingBloomFilter::Create(const MutableFilterOptions& options,
                                   CountingBloomFilter* out) {
  const char* what = "counting Bloom filter";
  Status s = internal::CheckMutableOptions(options, what);
  if (!s.ok()) return s;
  double per_key = options.bits_per_key;
  if (per_key > 0) {
    if (per_key < 1 || per_key > 64) {
      return Status::InvalidArgument(
          std::string(what) +
          ": bits_per_key (counters per key) must be "
          "within [1, 64], got " +
          internal::FormatNumber(per_key));
    }
  } else {
    // The smallest counters-per-key, in steps of 1/64, whose standard Bloom
    // FPR reaches the target, starting just below the optimum.
    per_key = std::max(
        1.0,
        std::floor(internal::StandardBloomOptimumBits(options.target_fpr) * 64 -
                   64) /
            64);
    while (per_key <= 64 &&
           StandardBloomFpr(per_key, StandardBloomProbes(per_key)) >
               options.target_fpr) {
      per_key += 1.0 / 64;
    }
    if (per_key > 64) {
      return Status::InvalidArgument(
          std::string(what) + ": target_fpr " +
          internal::FormatNumber(options.target_fpr) +
          " needs more than 64 counters per key");
    }
  }
  const double counters =
      std::ceil(static_cast<double>(options.capacity) * per_key);
  const double bytes = std::ceil(counters / 2);
  if (bytes > static_cast<double>(internal::kMaxMutableTableBytes)) {
    return internal::MutableTooLarge(what, options.capacity, bytes);
  }
  CountingBloomFilter filter;
  filter.k_ = StandardBloomProbes(per_key);
  filter.seed_ = options.seed;
  filter.secret_ = options.secret;
  filter.counters_.assign(static_cast<size_t>(bytes), 0);
  *out = std::move(filter);
  return Status::OK();
}

uint64_t CountingBloomFilter::HashKey(std::string_view key) const {
  return internal::FilterHash(key, seed_, secret_);
}

void CountingBloomFilter::InsertHash(uint64_t hash) {
  if (counters_.empty()) return;
  CountingBloomImpl::Insert(hash, counters_.data(), num_counters(), k_);
}

bool CountingBloomFilter::EraseHash(uint64_t hash) {
  if (counters_.empty()) return false;
  return CountingBloomImpl::Erase(hash, counters_.data(), num_counters(), k_);
}

bool CountingBloomFilter::ContainsHash(uint64_t hash) const {
  if (counters_.empty()) return false;
  return CountingBloomImpl::MayMatch(hash, counters_.data(), num_counters(),
                                     k_);
}

uint64_t CountingBloomFilter::CountSaturated() const {
  uint64_t n = 0;
  for (uint8_t b : counters_) {
    n += (b & 15) == CountingBloomImpl::kSaturated;
    n += (b >> 4) == CountingBloomImpl::kSaturated;
  }
  return n;
}

void CountingBloomFilter::Serialize(std::string* dst) const {
  const uint8_t params[1] = {static_cast<uint8_t>(k_)};
  internal::AppendMutable(FilterKind::kCountingBloom, counters_.data(),
                          counters_.size(), seed_, secret_, params, 1, dst);
}

Status CountingBloomFilter::Deserialize(std::string_view bytes,
                                        CountingBloomFilter* out,
                                        const FilterSecret* secret) {
  internal::Trailer t;
  Status s = internal::ParseMutable(bytes, FilterKind::kCountingBloom,
                                    "counting Bloom filter", secret, &t);
  if (!s.ok()) return s;
  CountingBloomFilter filter;
  filter.seed_ = t.seed;
  filter.secret_ = t.keyed ? secret : nullptr;
  if (t.kind == FilterKind::kCountingBloom) {
    filter.k_ = t.params[0];
    filter.counters_.assign(bytes.begin(), bytes.begin() + t.payload_size);
  }
  *out = std::move(filter);
  return Status::OK();
}

}  // namespace sstfilter
