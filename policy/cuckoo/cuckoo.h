// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: planning and building the static cuckoo kind (policy/cuckoo/cuckoo.cc).
// The hot code and the constants shared with the dynamic cuckoo filter are
// in cuckoo_impl.h; the flow in plan.h.

#ifndef SSTFILTER_POLICY_CUCKOO_H_
#define SSTFILTER_POLICY_CUCKOO_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policy/cuckoo/cuckoo_impl.h"
#include "policy/plan.h"
#include "sstfilter/filter.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// The static cuckoo filter for n distinct keys, or, when its payload is
// under kMinBlockedPayload and a standard Bloom filter of no more bytes
// reaches the same expected FPR, that Bloom filter.
KindPlan PlanCuckoo(const FilterSpec& spec, uint64_t n);

// How a cuckoo construction went, for tests and benchmarks.
struct CuckooBuildStats {
  int attempts = 0;          // tables tried: 1 unless a walk ran out of kicks
  uint64_t num_buckets = 0;  // of the table written (0 if not cuckoo)
  FilterKind kind = FilterKind::kEmpty;  // what was written
};
// Knobs of the construction; tests shrink them to force the fallbacks.
struct CuckooBuildOptions {
  int max_kicks = kCuckooMaxKicks;
  int salts_per_size = 4;  // tries at one table size before growing it
  int growths = 2;         // times the table grows by ~3% before giving up
};

// Appends the filter PlanCuckoo plans for `hashes` (repeats allowed). If no
// table can be built (every salt and size ran out of kicks), appends a
// blocked Bloom filter of the same payload size instead.
void AppendCuckooFilter(const FilterSpec& spec, const HashList& hashes,
                        std::string* dst,
                        const CuckooBuildOptions& options = {},
                        CuckooBuildStats* stats = nullptr);

std::unique_ptr<FilterBuilder> NewCuckooBuilder(const FilterSpec& spec);

struct DecodedFilter;  // policy/decode.h
struct Trailer;        // policy/format.h

// The decoder of the kinds table's cuckoo and dynamic_cuckoo rows
// (cuckoo_reader.cc).
bool DecodeCuckoo(const Trailer& t, const uint8_t* filter, DecodedFilter* out);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_CUCKOO_H_
