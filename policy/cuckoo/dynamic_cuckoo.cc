// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// DynamicCuckooFilter (include/sstfilter/mutable.h). Its in-memory table is
// its serialized payload, so Serialize is a copy and FilterReader reads the
// bytes with the same code as here.

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

struct DynamicCuckooFilter::Rep {
  std::vector<uint8_t> table;  // payload, then kCuckooSlack zero bytes
  uint64_t num_buckets = 0;    // 0: no room (a loaded empty filter)
  int f = 0;
  uint64_t seed = 0;
  const FilterSecret* secret = nullptr;
  uint64_t size = 0;
  uint64_t rng = 0;                         // state of the kick choices
  std::vector<internal::CuckooMove> moves;  // scratch of Insert
};

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
  auto rep = std::make_unique<Rep>();
  rep->num_buckets = buckets;
  rep->f = f;
  rep->seed = options.seed;
  rep->secret = options.secret;
  rep->rng = internal::Mix64(options.seed ^ options.capacity);
  rep->table.assign(internal::CuckooPayloadBytes(buckets, f) + kCuckooSlack, 0);
  out->rep_ = std::move(rep);
  return Status::OK();
}

uint64_t DynamicCuckooFilter::HashKey(std::string_view key) const {
  return rep_ ? internal::FilterHash(key, rep_->seed, rep_->secret)
              : internal::FilterHash(key, 0, nullptr);
}

bool DynamicCuckooFilter::InsertHash(uint64_t hash) {
  if (!rep_ || rep_->num_buckets == 0) return false;
  Rep& r = *rep_;
  const bool ok = WithTagBits(r.f, [&](auto F) {
    CuckooTable<F()> table(r.table.data(), r.num_buckets, &r.moves);
    return table.Insert(table.Locate(hash, 0), /*skip_present=*/false,
                        internal::kCuckooMaxKicks, &r.rng);
  });
  if (!ok) return false;
  r.size++;
  return true;
}

bool DynamicCuckooFilter::EraseHash(uint64_t hash) {
  if (!rep_ || rep_->num_buckets == 0) return false;
  Rep& r = *rep_;
  const bool ok = WithTagBits(r.f, [&](auto F) {
    CuckooTable<F()> table(r.table.data(), r.num_buckets, &r.moves);
    return table.Erase(table.Locate(hash, 0));
  });
  if (!ok) return false;
  r.size--;
  return true;
}

bool DynamicCuckooFilter::ContainsHash(uint64_t hash) const {
  if (!rep_ || rep_->num_buckets == 0) return false;
  // The table includes the slack: every bucket is one word load.
  return internal::CuckooMayMatch(hash, rep_->table.data(), rep_->table.size(),
                                  rep_->num_buckets, rep_->f, 0);
}

uint64_t DynamicCuckooFilter::size() const { return rep_ ? rep_->size : 0; }
uint64_t DynamicCuckooFilter::num_slots() const {
  return rep_ ? uint64_t{internal::kCuckooSlots} * rep_->num_buckets : 0;
}
int DynamicCuckooFilter::fingerprint_bits() const { return rep_ ? rep_->f : 0; }
uint64_t DynamicCuckooFilter::seed() const { return rep_ ? rep_->seed : 0; }
const FilterSecret* DynamicCuckooFilter::secret() const {
  return rep_ ? rep_->secret : nullptr;
}

void DynamicCuckooFilter::Serialize(std::string* dst) const {
  const Rep empty;
  const Rep& r = rep_ ? *rep_ : empty;
  const uint8_t params[2] = {static_cast<uint8_t>(r.f), 0};  // f, salt
  const uint64_t payload =
      r.num_buckets == 0 ? 0 : internal::CuckooPayloadBytes(r.num_buckets, r.f);
  internal::AppendMutable(FilterKind::kDynamicCuckoo, r.table.data(), payload,
                          r.seed, r.secret, params, 2, dst);
}

Status DynamicCuckooFilter::Deserialize(std::string_view bytes,
                                        DynamicCuckooFilter* out,
                                        const FilterSecret* secret) {
  internal::Trailer t;
  Status s = internal::ParseMutable(bytes, FilterKind::kDynamicCuckoo,
                                    "dynamic cuckoo filter", secret, &t);
  if (!s.ok()) return s;
  auto rep = std::make_unique<Rep>();
  rep->seed = t.seed;
  rep->secret = t.keyed ? secret : nullptr;
  if (t.kind == FilterKind::kDynamicCuckoo) {
    if (t.params[1] != 0) {
      return Status::Corruption("dynamic cuckoo filter: salt " +
                                std::to_string(t.params[1]) + " is not 0");
    }
    rep->f = t.params[0];
    rep->num_buckets =
        internal::CuckooBucketsForPayload(t.payload_size, rep->f);
    rep->table.assign(bytes.begin(), bytes.begin() + t.payload_size);
    rep->table.resize(t.payload_size + kCuckooSlack, 0);
    rep->size = WithTagBits(rep->f, [&](auto F) {
      return CuckooTable<F()>(rep->table.data(), rep->num_buckets, &rep->moves)
          .CountTags();
    });
    rep->rng = internal::Mix64(t.seed ^ rep->size);
  }
  out->rep_ = std::move(rep);
  return Status::OK();
}

}  // namespace sstfilter
