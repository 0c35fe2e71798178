// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: what the two mutable filters of sstfilter/mutable.h share
// (policy/cuckoo/dynamic_cuckoo.cc, policy/bloom/counting_bloom.cc): option
// checks, the size limit, and reading and writing their bytes, which are
// their in-memory tables plus a trailer.

#ifndef SSTFILTER_POLICY_MUTABLE_COMMON_H_
#define SSTFILTER_POLICY_MUTABLE_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "policy/format.h"
#include "sstfilter/mutable.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"
#include "sstfilter/status.h"

namespace sstfilter {
namespace internal {

// Largest table either filter allocates: 64 GiB.
inline constexpr uint64_t kMaxMutableTableBytes = uint64_t{1} << 36;

// OK if `o` is usable: a capacity, and bits_per_key or a target FPR.
// Errors are InvalidArgument, prefixed with `what` (the filter's name).
Status CheckMutableOptions(const MutableFilterOptions& o, const char* what);
// The InvalidArgument of a table of `bytes` over kMaxMutableTableBytes.
Status MutableTooLarge(const char* what, uint64_t capacity, double bytes);
// Parses bytes that FilterReader accepts as `kind` (or as an empty filter)
// and `secret` may load (an unkeyed filter, or one keyed with it) into *t.
Status ParseMutable(std::string_view bytes, FilterKind kind, const char* what,
                    const FilterSecret* secret, Trailer* t);
// Appends `payload` (size bytes; none: an empty filter) and its trailer.
void AppendMutable(FilterKind kind, const uint8_t* payload, uint64_t size,
                   uint64_t seed, const FilterSecret* secret,
                   const uint8_t* params, size_t params_size, std::string* dst);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_MUTABLE_COMMON_H_
