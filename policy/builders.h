// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: what each kind's builder will write (its plan), and the
// factories NewFilterBuilder dispatches to.

#ifndef SSTFILTER_POLICY_BUILDERS_H_
#define SSTFILTER_POLICY_BUILDERS_H_

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policy/cuckoo_impl.h"
#include "sstfilter/filter.h"
#include "sstfilter/params.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// Filters whose standard-Bloom payload would be smaller than this are
// written as standard Bloom even for blocked_bloom specs: at that size every
// probe is in a few cache lines anyway, and the standard form is both more
// accurate and free of the blocked form's rounding to whole 64-byte blocks
// (LevelDB writes filters of ~36 keys, ~45 bytes).
inline constexpr uint64_t kMinBlockedPayload = 1024;

// The most bytes, trailer included, a builder writes for n >= 1 keys at
// `bits_per_key`, for every kind and every n: n * bits_per_key / 8 plus a
// fixed allowance for the trailer and rounding.
inline constexpr uint64_t kFilterSlackBytes = 40;
inline uint64_t MaxFilterBytes(uint64_t n, double bits_per_key) {
  return static_cast<uint64_t>(static_cast<double>(n) * bits_per_key / 8) +
         kFilterSlackBytes;
}

// The parameters of the filter a builder for `spec` writes for `n` distinct
// keys: the kind actually written, payload and total sizes, and, if
// `with_fpr`, the expected FPR (costly: builders and size queries skip it).
// REQUIRES: spec.Validate().ok().
FilterParams PlanFilter(const FilterSpec& spec, uint64_t n,
                        bool with_fpr = true);

// A kind's part of PlanFilter: everything but params.filter_bytes, which
// PlanFilter adds up from the payload and the trailer.
struct KindPlan {
  FilterParams params;
  uint64_t payload_bytes = 0;
  size_t kind_params_size = 0;  // bytes of kind params in the trailer
};
KindPlan PlanBloomFamily(const FilterSpec& spec, uint64_t n, bool with_fpr);

// ln(1/fpr) / ln(2)^2: the bits per key at which a standard Bloom filter
// with the best real-valued k reaches `fpr`. No filter of fewer bits per
// key reaches it, so searches for the smallest size start just below.
inline double StandardBloomOptimumBits(double fpr) {
  const double ln2 = std::log(2.0);
  return -std::log(fpr) / (ln2 * ln2);
}

// Appends a zero-key filter ("never matches") carrying `seed`.
void AppendEmptyFilter(uint64_t seed, std::string* dst);

// Appends a Bloom-family filter (kind per PlanBloomFamily) for `hashes`.
void AppendBloomFamilyFilter(const FilterSpec& spec,
                             const std::vector<uint64_t>& hashes,
                             std::string* dst);

// A builder that keeps the added hashes, dropping a hash equal to the one
// added just before it (RocksDB and LevelDB repeat keys back to back).
class HashListBuilder : public FilterBuilder {
 public:
  void AddHash(uint64_t hash) override {
    if (!hashes_.empty() && hashes_.back() == hash) return;
    hashes_.push_back(hash);
  }
  size_t NumEntries() const override { return hashes_.size(); }
  size_t FilterSize(size_t num_entries) const override;

 protected:
  explicit HashListBuilder(const FilterSpec& spec) : FilterBuilder(spec) {}
  std::vector<uint64_t> hashes_;
};

std::unique_ptr<FilterBuilder> NewBloomFamilyBuilder(const FilterSpec& spec);

// --- cuckoo (policy/cuckoo.cc) ----------------------------------------------

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
void AppendCuckooFilter(const FilterSpec& spec,
                        const std::vector<uint64_t>& hashes, std::string* dst,
                        const CuckooBuildOptions& options = {},
                        CuckooBuildStats* stats = nullptr);

std::unique_ptr<FilterBuilder> NewCuckooBuilder(const FilterSpec& spec);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_BUILDERS_H_
