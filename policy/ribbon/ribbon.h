// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: the ribbon kind's plan (policy/ribbon/ribbon_plan.cc),
// construction and builder factory (ribbon.cc). The hot code is in
// ribbon_impl.h.

#ifndef SSTFILTER_POLICY_RIBBON_H_
#define SSTFILTER_POLICY_RIBBON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policy/plan.h"
#include "policy/ribbon/ribbon_impl.h"
#include "sstfilter/filter.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// Kind params of a ribbon filter (full trailer): u8 form (0 dense, 1 banded,
// 2 segmented), then dense: u8 salt, u8 slots, u8 columns, 2 zero bytes;
// banded: u8 salt, u32le num_blocks; segmented: u8 r, u32le segments. A compact dense filter (seed 0, payload 16..127 bytes) has
// one param, the low 4 bits of r - 1, and a header byte at the payload's
// start: salt (bits 0..5), bit 4 of r - 1 (bit 6), 0 (docs/FORMAT.md).
inline constexpr size_t kRibbonParamsSize = 6;

// Spare slots, as a fraction of n, that a banded system of n rows needs to
// be solvable on the first or second salt (measured; docs/FORMAT.md).
double RibbonOverhead(uint64_t n);
// Blocks of 64 slots of a banded system for n rows: n (1 + overhead) slots
// where rows start, plus the last block, which rows only reach into.
uint64_t RibbonBandedBlocks(uint64_t n);

// The segmented form: most keys per segment a builder aims at (segments =
// ceil(n / kRibbonSegmentKeys)), and the slots per key it gives a segment,
// before rounding up to whole blocks. Measured (docs/FORMAT.md,
// "Segmented form"): at 1.02, 88% to 97% of the first salts solve a
// segment of 2^8 to 2^15 keys (65% to 80% at 1.015).
inline constexpr uint64_t kRibbonSegmentKeys = uint64_t{1} << 15;
inline constexpr double kRibbonSlotsPerKey = 1.02;
// Blocks of 128 slots of a segment of n keys: ceil(1.02 n / 128), >= 2.
uint64_t RibbonSegmentBlocks(uint64_t n);

// What a ribbon builder writes for n distinct keys: the plan, and for the
// ribbon form its geometry. A budget too small for one column per key, too
// many blocks, or a small banded filter less accurate than a standard
// Bloom filter of its bytes give a Bloom plan (plan.params.kind says
// which) of the bytes, trailer included, the banded filter would take.
struct RibbonPlan {
  KindPlan plan;
  FilterSpec bloom;  // a Bloom plan: the spec it was planned from
  bool dense = false;
  bool compact = false;  // dense, written with a compact trailer
  uint64_t slots = 0;    // dense: m; banded: 64 num_blocks
  uint32_t r = 0;        // columns (banded: of the blocks >= k)
  uint64_t k = 0;        // banded: blocks with r + 1 columns
  // Segmented: segments and columns W (slots: the expected 128 T).
  bool segmented = false;
  bool raised = false;  // more columns than the budget's, for the ceiling
  uint64_t segments = 0;
  uint64_t columns = 0;
};
// Every plan's expected FPR is at most `ceiling`, by default (0)
// RibbonFprCeiling(spec) (plan.h, kSmallFilterFprSlack): a filter whose
// n b bits miss it takes the fewest bytes that reach it (a dense one of
// 16 keys or more a spare slot too; 1: no ceiling, the plan of n b bits).
// `segmented`: false plans the banded form where the segmented one would
// be written (tests, and the builder's fallback), of n b bits for n > 64.
double RibbonFprCeiling(const FilterSpec& spec);
RibbonPlan PlanRibbon(const FilterSpec& spec, uint64_t n, bool segmented = true,
                      double ceiling = 0);

// How a ribbon construction went, for tests and benchmarks.
struct RibbonBuildStats {
  int attempts = 0;
  uint64_t slots = 0;  // of the system written (0 if not ribbon)
  uint32_t columns = 0;
  FilterKind kind = FilterKind::kEmpty;  // what was written
};
// Knobs of the construction; tests shrink them to force the fallbacks (0
// salts: straight to the Bloom filter).
struct RibbonBuildOptions {
  int salts_per_size = 4;  // banded: salts tried at one size before growing
  int growths = 4;         // banded: times the blocks grow by ~3%
  int dense_salts = 64;    // dense: salts tried (~0.58 each, square ~0.29)
  int segment_salts = 64;  // segmented: salts tried per segment
  bool segmented = true;   // false: the banded form (form 1) instead
};

// Memory of a construction, kept by a builder across filters so that a
// builder reused for small filters (LevelDB) allocates nothing per filter
// (and released after a large one). Per slot the pivot row's coefficients
// (relative to the slot, bit 0 set; 0: free slot) and its fingerprint
// bits, in two arrays: 12 bytes a slot where a struct would pad to 16 (20
// with the segmented form's 128-bit rows, for one segment at a time, and 8 a
// key of the segment for its salted hashes).
struct RibbonScratch {
  std::vector<uint64_t> coeff;
  std::vector<RibbonRow> row;  // segmented: 128-bit pivot rows
  std::vector<uint32_t> rhs;
  // Sorting the hashes by start block: per key of a sort, the place of
  // its next hash and the end of its hashes; the bounds of the groups.
  std::vector<uint64_t> next, end, bounds;
  // Segmented: one segment's salted hashes, sorted by start block.
  std::vector<uint64_t> keys;
  // RibbonFprCeiling(ceiling_spec) if ceiling > 0: a builder of small
  // filters (LevelDB's, ~33 keys) plans each of them, and the ceiling,
  // from the plan of 2^20 keys, is a tenth of a dense filter's planning.
  FilterSpec ceiling_spec;
  double ceiling = 0;
};

// Appends the filter PlanRibbon plans for `hashes` (repeats allowed). If no
// system is solvable within `options`, appends a Bloom filter of no more
// payload bytes instead. Reorders `hashes` (by start block: the bytes do
// not depend on the order of the hashes).
void AppendRibbonFilter(const FilterSpec& spec, HashList* hashes,
                        std::string* dst,
                        const RibbonBuildOptions& options = {},
                        RibbonBuildStats* stats = nullptr,
                        RibbonScratch* scratch = nullptr);
// The same on a copy of `hashes` (tests, one-shot callers).
inline void AppendRibbonFilter(const FilterSpec& spec, const HashList& hashes,
                               std::string* dst,
                               const RibbonBuildOptions& options = {},
                               RibbonBuildStats* stats = nullptr,
                               RibbonScratch* scratch = nullptr) {
  HashList copy = hashes.Copy();
  AppendRibbonFilter(spec, &copy, dst, options, stats, scratch);
}

std::unique_ptr<FilterBuilder> NewRibbonBuilder(const FilterSpec& spec);

struct DecodedFilter;  // policy/decode.h
struct Trailer;        // policy/format.h

// The decoder of the kinds table's ribbon row (ribbon_reader.cc).
bool DecodeRibbon(const Trailer& t, const uint8_t* filter, DecodedFilter* out);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_RIBBON_H_
