// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// DynamicCuckooFilter and CountingBloomFilter (include/sstfilter/mutable.h).
// Their in-memory tables are their serialized payloads, so Serialize is a
// copy and FilterReader reads the bytes with the same code as here.

#include "sstfilter/mutable.h"

#include <cmath>
#include <string>
#include <utility>

#include "policy/bloom/bloom_builder.h"
#include "policy/bloom/counting_bloom_impl.h"
#include "policy/cuckoo/cuckoo_impl.h"
#include "policy/format.h"
#include "policy/spec_parse.h"
#include "sstfilter/filter.h"
#include "sstfilter/params.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"

namespace sstfilter {

using internal::CountingBloomImpl;
using internal::CuckooTable;
using internal::kCuckooSlack;
using internal::WithTagBits;

namespace {

// Largest table either filter allocates: 64 GiB.
constexpr uint64_t kMaxTableBytes = uint64_t{1} << 36;

Status CheckCommon(const MutableFilterOptions& o, const char* what) {
  if (o.capacity == 0) {
    return Status::InvalidArgument(std::string(what) +
                                   ": capacity must be at least 1");
  }
  if (!(o.bits_per_key >= 0) || !std::isfinite(o.bits_per_key)) {
    return Status::InvalidArgument(std::string(what) +
                                   ": bits_per_key must be >= 0, got " +
                                   internal::FormatNumber(o.bits_per_key));
  }
  if (o.bits_per_key == 0 && !(o.target_fpr > 0 && o.target_fpr < 1)) {
    return Status::InvalidArgument(std::string(what) +
                                   ": target_fpr must be within (0, 1), got " +
                                   internal::FormatNumber(o.target_fpr));
  }
  return Status::OK();
}

Status TooLarge(const char* what, uint64_t capacity, double bytes) {
  return Status::InvalidArgument(
      std::string(what) + ": capacity " + std::to_string(capacity) + " needs " +
      std::to_string(bytes) + " bytes, more than the limit of " +
      std::to_string(kMaxTableBytes));
}

// Whether `secret` may load a filter of trailer `t`: an unkeyed one, or a
// keyed one written with the same secret.
Status CheckSecret(const internal::Trailer& t, const FilterSecret* secret,
                   const char* what) {
  if (!t.keyed) return Status::OK();
  if (secret == nullptr) {
    return Status::InvalidArgument(
        std::string(what) +
        ": the bytes are keyed: loading them needs the application's "
        "FilterSecret");
  }
  if (secret->key_id() != t.key_id) {
    return Status::InvalidArgument(
        std::string(what) + ": the bytes are keyed with key id " +
        std::to_string(t.key_id) + ", the secret given has key id " +
        std::to_string(secret->key_id()));
  }
  return Status::OK();
}

// Parses bytes that FilterReader accepts as `kind` (or as an empty filter)
// and `secret` may load.
Status ParseMutable(std::string_view bytes, FilterKind kind, const char* what,
                    const FilterSecret* secret, internal::Trailer* t) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto corrupt = [&] {
    return Status::Corruption(std::string(what) +
                              ": not a well-formed sstfilter filter (" +
                              std::to_string(bytes.size()) + " bytes)");
  };
  if (!internal::ParseTrailer(data, bytes.size(), t)) return corrupt();
  Status s = CheckSecret(*t, secret, what);
  if (!s.ok()) return s;
  const FilterReader r = FilterReader::Open(bytes, secret);
  if (!r.valid()) return corrupt();
  if (r.kind() != kind && r.kind() != FilterKind::kEmpty) {
    return Status::Corruption(std::string(what) + ": the bytes hold a " +
                              FilterKindName(r.kind()) + " filter, not " +
                              FilterKindName(kind));
  }
  return Status::OK();
}

void AppendMutable(FilterKind kind, const uint8_t* payload, uint64_t size,
                   uint64_t seed, const FilterSecret* secret,
                   const uint8_t* params, size_t params_size,
                   std::string* dst) {
  internal::Trailer t;
  if (size == 0) {
    t.kind = FilterKind::kEmpty;
  } else {
    dst->append(reinterpret_cast<const char*>(payload), size);
    t.kind = kind;
    t.payload_size = size;
    std::copy(params, params + params_size, t.params);
    t.params_size = params_size;
  }
  t.seed = seed;
  t.keyed = secret != nullptr;
  t.key_id = secret != nullptr ? secret->key_id() : 0;
  internal::AppendTrailer(t, dst);
}

}  // namespace

// --- DynamicCuckooFilter -----------------------------------------------------

DynamicCuckooFilter::DynamicCuckooFilter() = default;
DynamicCuckooFilter::~DynamicCuckooFilter() = default;
DynamicCuckooFilter::DynamicCuckooFilter(DynamicCuckooFilter&&) noexcept =
    default;
DynamicCuckooFilter& DynamicCuckooFilter::operator=(
    DynamicCuckooFilter&&) noexcept = default;

Status DynamicCuckooFilter::Create(const MutableFilterOptions& options,
                                   DynamicCuckooFilter* out) {
  const char* what = "dynamic cuckoo filter";
  Status s = CheckCommon(options, what);
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
  if (bytes > static_cast<double>(kMaxTableBytes)) {
    return TooLarge(what, options.capacity, bytes);
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
  AppendMutable(FilterKind::kDynamicCuckoo, table_.data(), payload, seed_,
                secret_, params, 2, dst);
}

Status DynamicCuckooFilter::Deserialize(std::string_view bytes,
                                        DynamicCuckooFilter* out,
                                        const FilterSecret* secret) {
  internal::Trailer t;
  Status s = ParseMutable(bytes, FilterKind::kDynamicCuckoo,
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

// --- CountingBloomFilter -----------------------------------------------------

CountingBloomFilter::CountingBloomFilter() = default;
CountingBloomFilter::~CountingBloomFilter() = default;
CountingBloomFilter::CountingBloomFilter(CountingBloomFilter&&) noexcept =
    default;
CountingBloomFilter& CountingBloomFilter::operator=(
    CountingBloomFilter&&) noexcept = default;

Status CountingBloomFilter::Create(const MutableFilterOptions& options,
                                   CountingBloomFilter* out) {
  const char* what = "counting Bloom filter";
  Status s = CheckCommon(options, what);
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
  if (bytes > static_cast<double>(kMaxTableBytes)) {
    return TooLarge(what, options.capacity, bytes);
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
  AppendMutable(FilterKind::kCountingBloom, counters_.data(), counters_.size(),
                seed_, secret_, params, 1, dst);
}

Status CountingBloomFilter::Deserialize(std::string_view bytes,
                                        CountingBloomFilter* out,
                                        const FilterSecret* secret) {
  internal::Trailer t;
  Status s = ParseMutable(bytes, FilterKind::kCountingBloom,
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
