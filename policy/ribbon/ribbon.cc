// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon kind (kind 6): construction and its builder. Sizing is in
// ribbon_plan.cc, each form's construction in ribbon_dense.cc,
// ribbon_banded.cc and ribbon_segmented.cc; the hot code and the hashing
// are in ribbon_impl.h; the format and the measurements behind the choices
// in docs/FORMAT.md.
//
// Construction solves the linear system by Gaussian elimination, row by
// row in order of start block (each row is reduced against the rows
// already placed until it finds a free pivot slot; "on-the-fly" elimination
// of the Ribbon paper), then back-substitutes column by column into the
// payload.
// Construction never fails: a system without a solution (rows that reduce to
// zero with a non-zero fingerprint) is retried with the next salt (the
// segmented form: that segment only), then (banded form) with more slots
// (fewer columns: the payload never grows), and as a last resort the hashes
// are written as a Bloom filter of no more bytes.

#include "policy/ribbon/ribbon.h"

#include <algorithm>
#include <utility>

#include "policy/bloom_fallback.h"
#include "policy/format.h"
#include "policy/ribbon/ribbon_build.h"
#include "policy/ribbon/ribbon_impl.h"
#include "sstfilter/params.h"

namespace sstfilter {
namespace internal {

Trailer RibbonTrailer(const FilterSpec& spec, uint64_t payload, bool dense,
                      uint32_t salt, uint64_t a, uint64_t b) {
  Trailer t;
  t.kind = FilterKind::kRibbon;
  t.payload_size = payload;
  SetTrailerHashing(spec, &t);
  t.params[0] = dense ? 0 : 1;
  t.params[1] = static_cast<uint8_t>(salt);
  if (dense) {
    t.params[2] = static_cast<uint8_t>(a);  // m
    t.params[3] = static_cast<uint8_t>(b);  // r
    t.params[4] = t.params[5] = 0;
  } else {
    EncodeFixed32(&t.params[2], static_cast<uint32_t>(a));  // num_blocks
  }
  t.params_size = kRibbonParamsSize;
  return t;
}

void AppendRibbonFilter(const FilterSpec& spec, HashList* hash_list,
                        std::string* dst, const RibbonBuildOptions& options,
                        RibbonBuildStats* stats, RibbonScratch* scratch) {
  const HashList& hashes = *hash_list;
  RibbonBuildStats local;
  if (stats == nullptr) stats = &local;
  *stats = RibbonBuildStats();
  const uint64_t n = hashes.size();
  RibbonScratch local_scratch;
  if (scratch == nullptr) scratch = &local_scratch;
  if (scratch->ceiling <= 0 || !(scratch->ceiling_spec == spec)) {
    scratch->ceiling_spec = spec;
    scratch->ceiling = RibbonFprCeiling(spec);
  }
  const RibbonPlan rp =
      PlanRibbon(spec, n, options.segmented, scratch->ceiling);
  const KindPlan& plan = rp.plan;
  if (plan.params.kind == FilterKind::kEmpty) {
    stats->kind = FilterKind::kEmpty;
    AppendEmptyFilter(spec, dst);
    return;
  }
  if (plan.params.kind != FilterKind::kRibbon) {
    // The plan writes Bloom: more accurate for a few hundred keys, or no
    // column fits.
    AppendBloomFamilyFilter(rp.bloom, hashes, dst);
    stats->kind = plan.params.kind;
    return;
  }
  // Segmented: a segment not solvable within its salts (about 1/4 of them
  // fail each) leaves the Bloom filter below, of the planned bytes.
  if (rp.segmented) {
    if (AppendSegmented(spec, rp, std::clamp(options.segment_salts, 0, 256),
                        hash_list, dst, stats, scratch)) {
      return;
    }
  } else {
    // Dense: more slots would cost bits; only salts are tried.
    const int dense_salts = std::clamp(options.dense_salts, 0,
                                       rp.compact ? kRibbonCompactSalts : 256);
    if (rp.dense
            ? AppendDense(spec, rp, hashes, dense_salts, stats, dst)
            : AppendBanded(spec, rp, hash_list, options, scratch, stats, dst)) {
      return;
    }
  }
  // No system was solvable: a Bloom filter of no more payload bytes.
  const FilterSpec bloom = BloomSpecWithin(plan.payload_bytes, n, spec);
  stats->kind = PlanBloomFamily(bloom, n, false).params.kind;
  AppendBloomFamilyFilter(bloom, hashes, dst);
}

namespace {

class RibbonBuilder final : public HashListBuilder {
 public:
  explicit RibbonBuilder(const FilterSpec& spec) : HashListBuilder(spec) {}

  void Finish(std::string* dst) override {
    const size_t start = dst->size();
    AppendRibbonFilter(FilterSpecNow(), &hashes_, dst, {}, nullptr, &scratch_);
    EndFilter(start, dst);
    hashes_.clear();
    // Keep the scratch of small filters only (LevelDB builds many).
    if (scratch_.coeff.capacity() > HashList::kChunkHashes ||
        scratch_.row.capacity() > HashList::kChunkHashes ||
        scratch_.keys.capacity() > HashList::kChunkHashes) {
      scratch_ = RibbonScratch();
    }
  }

 private:
  RibbonScratch scratch_;
};

}  // namespace

std::unique_ptr<FilterBuilder> NewRibbonBuilder(const FilterSpec& spec) {
  return std::make_unique<RibbonBuilder>(spec);
}

}  // namespace internal
}  // namespace sstfilter
