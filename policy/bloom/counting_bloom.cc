// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// CountingBloomFilter (include/sstfilter/mutable.h). Its in-memory table is
// its serialized payload, so Serialize is a copy and FilterReader reads the
// bytes with the same code as here.

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "policy/bloom/bloom.h"
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

struct CountingBloomFilter::Rep {
  std::vector<uint8_t> counters;  // two 4-bit counters per byte
  int k = 0;
  uint64_t seed = 0;
  const FilterSecret* secret = nullptr;
};

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
  auto rep = std::make_unique<Rep>();
  rep->k = StandardBloomProbes(per_key);
  rep->seed = options.seed;
  rep->secret = options.secret;
  rep->counters.assign(static_cast<size_t>(bytes), 0);
  out->rep_ = std::move(rep);
  return Status::OK();
}

uint64_t CountingBloomFilter::HashKey(std::string_view key) const {
  return rep_ ? internal::FilterHash(key, rep_->seed, rep_->secret)
              : internal::FilterHash(key, 0, nullptr);
}

void CountingBloomFilter::InsertHash(uint64_t hash) {
  if (!rep_ || rep_->counters.empty()) return;
  CountingBloomImpl::Insert(hash, rep_->counters.data(), num_counters(),
                            rep_->k);
}

bool CountingBloomFilter::EraseHash(uint64_t hash) {
  if (!rep_ || rep_->counters.empty()) return false;
  return CountingBloomImpl::Erase(hash, rep_->counters.data(), num_counters(),
                                  rep_->k);
}

bool CountingBloomFilter::ContainsHash(uint64_t hash) const {
  if (!rep_ || rep_->counters.empty()) return false;
  return CountingBloomImpl::MayMatch(hash, rep_->counters.data(),
                                     num_counters(), rep_->k);
}

uint64_t CountingBloomFilter::num_counters() const {
  return rep_ ? 2 * rep_->counters.size() : 0;
}
int CountingBloomFilter::num_probes() const { return rep_ ? rep_->k : 0; }
uint64_t CountingBloomFilter::seed() const { return rep_ ? rep_->seed : 0; }
const FilterSecret* CountingBloomFilter::secret() const {
  return rep_ ? rep_->secret : nullptr;
}

uint64_t CountingBloomFilter::CountSaturated() const {
  if (!rep_) return 0;
  uint64_t n = 0;
  for (uint8_t b : rep_->counters) {
    n += (b & 15) == CountingBloomImpl::kSaturated;
    n += (b >> 4) == CountingBloomImpl::kSaturated;
  }
  return n;
}

void CountingBloomFilter::Serialize(std::string* dst) const {
  const Rep empty;
  const Rep& r = rep_ ? *rep_ : empty;
  const uint8_t params[1] = {static_cast<uint8_t>(r.k)};
  internal::AppendMutable(FilterKind::kCountingBloom, r.counters.data(),
                          r.counters.size(), r.seed, r.secret, params, 1, dst);
}

Status CountingBloomFilter::Deserialize(std::string_view bytes,
                                        CountingBloomFilter* out,
                                        const FilterSecret* secret) {
  internal::Trailer t;
  Status s = internal::ParseMutable(bytes, FilterKind::kCountingBloom,
                                    "counting Bloom filter", secret, &t);
  if (!s.ok()) return s;
  auto rep = std::make_unique<Rep>();
  rep->seed = t.seed;
  rep->secret = t.keyed ? secret : nullptr;
  if (t.kind == FilterKind::kCountingBloom) {
    rep->k = t.params[0];
    rep->counters.assign(bytes.begin(), bytes.begin() + t.payload_size);
  }
  out->rep_ = std::move(rep);
  return Status::OK();
}

}  // namespace sstfilter
