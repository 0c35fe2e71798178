// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// What the mutable filters share (policy/mutable_common.h).

#include "policy/mutable_common.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "policy/spec_parse.h"
#include "sstfilter/filter.h"

namespace sstfilter {
namespace internal {
namespace {

// Whether `secret` may load a filter of trailer `t`: an unkeyed one, or a
// keyed one written with the same secret.
Status CheckSecret(const Trailer& t, const FilterSecret* secret,
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

}  // namespace

Status CheckMutableOptions(const MutableFilterOptions& o, const char* what) {
  if (o.capacity == 0) {
    return Status::InvalidArgument(std::string(what) +
                                   ": capacity must be at least 1");
  }
  if (!(o.bits_per_key >= 0) || !std::isfinite(o.bits_per_key)) {
    return Status::InvalidArgument(std::string(what) +
                                   ": bits_per_key must be >= 0, got " +
                                   FormatNumber(o.bits_per_key));
  }
  if (o.bits_per_key == 0 && !(o.target_fpr > 0 && o.target_fpr < 1)) {
    return Status::InvalidArgument(std::string(what) +
                                   ": target_fpr must be within (0, 1), got " +
                                   FormatNumber(o.target_fpr));
  }
  return Status::OK();
}

Status MutableTooLarge(const char* what, uint64_t capacity, double bytes) {
  return Status::InvalidArgument(
      std::string(what) + ": capacity " + std::to_string(capacity) + " needs " +
      std::to_string(bytes) + " bytes, more than the limit of " +
      std::to_string(kMaxMutableTableBytes));
}

Status ParseMutable(std::string_view bytes, FilterKind kind, const char* what,
                    const FilterSecret* secret, Trailer* t) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto corrupt = [&] {
    return Status::Corruption(std::string(what) +
                              ": not a well-formed sstfilter filter (" +
                              std::to_string(bytes.size()) + " bytes)");
  };
  if (!ParseTrailer(data, bytes.size(), t)) return corrupt();
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
  Trailer t;
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
  AppendTrailer(t, dst);
}

}  // namespace internal
}  // namespace sstfilter
