// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: planning and building the Bloom kinds (policy/bloom/bloom.cc),
// beyond what other families use of them (policy/bloom_fallback.h). The
// hot code is in bloom_impl.h; the flow in plan.h.

#ifndef SSTFILTER_POLICY_BLOOM_H_
#define SSTFILTER_POLICY_BLOOM_H_

#include <cstdint>
#include <memory>

#include "policy/bloom_fallback.h"
#include "policy/plan.h"
#include "sstfilter/filter.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// The expected FPR no blocked_bloom spec's filter exceeds.
double BlockedBloomFprCeiling(const FilterSpec& spec);

std::unique_ptr<FilterBuilder> NewBloomFamilyBuilder(const FilterSpec& spec);

struct DecodedFilter;  // policy/decode.h
struct Trailer;        // policy/format.h

// The decoders of the kinds table's bloom, blocked_bloom and counting_bloom
// rows (bloom_reader.cc).
bool DecodeBloom(const Trailer& t, const uint8_t* filter, DecodedFilter* out);
bool DecodeBlockedBloom(const Trailer& t, const uint8_t* filter,
                        DecodedFilter* out);
bool DecodeCountingBloom(const Trailer& t, const uint8_t* filter,
                         DecodedFilter* out);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_BLOOM_H_
