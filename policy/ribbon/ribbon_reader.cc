// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon decoder and queries (row ribbon of the kinds table): the
// dense form, written with a full or a compact trailer, the banded form
// and the segmented form. Layouts in docs/FORMAT.md and policy/ribbon/ribbon_impl.h.

#include "policy/decode.h"
#include "policy/primitives.h"
#include "policy/ribbon/ribbon.h"
#include "policy/ribbon/ribbon_impl.h"

namespace sstfilter {
namespace internal {
namespace {

// The reader's state is the form's query object, payload pointer included.
template <typename Form>
bool FormQuery(const uint8_t*, const void* state, uint64_t hash) {
  return StateOf<Form>(state).MayMatch(hash);
}

// The banded form: hashes every key of a round and prefetches what it
// reads, key by key, then tests them.
template <typename Form>
void FormQueryBatch(const uint8_t*, const void* state, size_t n,
                    const BatchHashes& in, bool* results) {
  const Form& g = StateOf<Form>(state);
  InBatches(
      n,
      [&](size_t i) {
        const uint64_t hash = in.Hash(i);
        g.Prefetch(hash);
        return hash;
      },
      [&](size_t i, uint64_t hash) {
        results[i] = g.MayMatch(hash);
        return true;
      });
}

// The segmented form locates a round of keys (hashes, directory, row
// masks) and prefetches their blocks, then checks each from its probe:
// nothing is computed twice.
void SegmentedQueryBatch(const uint8_t*, const void* state, size_t n,
                         const BatchHashes& in, bool* results) {
  const RibbonSegmented& g = StateOf<RibbonSegmented>(state);
  InBatches(
      n,
      [&](size_t i) {
        const RibbonSegmented::Probe probe = g.Locate(in.Hash(i));
        RibbonSegmented::Prefetch(probe);
        return probe;
      },
      [&](size_t i, const RibbonSegmented::Probe& probe) {
        results[i] = RibbonSegmented::Check(probe);
        return true;
      });
}

// Dense filters are at most 64 slots: nothing to prefetch.
void DenseQueryBatch(const uint8_t*, const void* state, size_t n,
                     const BatchHashes& in, bool* results) {
  const RibbonDense& g = StateOf<RibbonDense>(state);
  for (size_t i = 0; i < n; i++) results[i] = g.MayMatch(in.Hash(i));
}

constexpr KindQuery kBandedQuery = {FormQuery<RibbonBanded>,
                                    FormQueryBatch<RibbonBanded>};
constexpr KindQuery kSegmentedQuery = {FormQuery<RibbonSegmented>,
                                       SegmentedQueryBatch};
constexpr KindQuery kDenseQuery = {FormQuery<RibbonDense>, DenseQueryBatch};

// x86-64's baseline has no POPCNT instruction, and a ribbon query is
// mostly parities: where the CPU has it, the single-key queries (LevelDB's
// and RocksDB's, once per table per Get) are compiled a second time to use
// it. The same answers. Before static initialisation has run, the
// portable ones.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__POPCNT__)
template <typename Form>
__attribute__((target("popcnt"))) bool FormQueryPopcnt(const uint8_t*,
                                                       const void* state,
                                                       uint64_t hash) {
  return StateOf<Form>(state).MayMatch(hash);
}
constexpr KindQuery kDensePopcntQuery = {FormQueryPopcnt<RibbonDense>,
                                         DenseQueryBatch};
constexpr KindQuery kSegmentedPopcntQuery = {FormQueryPopcnt<RibbonSegmented>,
                                             SegmentedQueryBatch};
const bool kHasPopcnt =
    (__builtin_cpu_init(), __builtin_cpu_supports("popcnt") != 0);
#else
constexpr const KindQuery& kDensePopcntQuery = kDenseQuery;
constexpr const KindQuery& kSegmentedPopcntQuery = kSegmentedQuery;
constexpr bool kHasPopcnt = false;
#endif

const KindQuery* Fastest(const KindQuery& portable, const KindQuery& popcnt) {
  return kHasPopcnt ? &popcnt : &portable;
}

void SetDense(const uint8_t* data, uint32_t m, uint32_t cols, uint32_t salt,
              DecodedFilter* out) {
  RibbonDense g;
  g.data = data;
  g.m = m;
  g.r = cols;
  g.salt = salt;
  out->data = data;
  out->Set(Fastest(kDenseQuery, kDensePopcntQuery), g);
}

// Compact dense: header byte (salt bits 0..5, bit 4 of r - 1 in bit 6,
// bit 7 clear), then exactly ceil(m r / 8) column bytes.
bool DecodeCompactDense(const Trailer& t, const uint8_t* filter,
                        DecodedFilter* out) {
  const uint8_t h = filter[0];
  if (t.params_size != 1 || (h & 0x80) != 0) return false;
  const uint32_t cols = ((((h >> 6) & 1u) << 4) | t.params[0]) + 1u;
  const uint64_t m = RibbonCompactSlots(t.payload_size, cols);
  if (m == 0 || t.payload_size - 1 != (m * cols + 7) / 8) return false;
  SetDense(filter + 1, static_cast<uint32_t>(m), cols, h & 63, out);
  return true;
}

// Dense: 1 <= m <= 64 slots, 1 <= r <= 32 columns, ceil(m r / 8) bytes.
bool DecodeDense(const Trailer& t, const uint8_t* filter, DecodedFilter* out) {
  const uint8_t* p = t.params;
  const uint32_t m = p[2], cols = p[3];
  if (m == 0 || m > kRibbonMaxDenseSlots || cols == 0 ||
      cols > kRibbonMaxColumns || p[4] != 0 || p[5] != 0 ||
      t.payload_size != (uint64_t{m} * cols + 7) / 8) {
    return false;
  }
  SetDense(filter, m, cols, p[1], out);
  return true;
}

// Banded: num_blocks >= 2, whole words W = num_blocks r + k with
// 1 <= r <= 32 and k < num_blocks (k = 0 if r = 32).
bool DecodeBanded(const Trailer& t, const uint8_t* filter, DecodedFilter* out) {
  const uint8_t* p = t.params;
  const uint64_t blocks = DecodeFixed32(p + 2);
  if (blocks < 2 || t.payload_size % 8 != 0) return false;
  const uint64_t words = t.payload_size / 8;
  const uint64_t cols = words / blocks, wide = words % blocks;
  if (cols == 0 || cols > kRibbonMaxColumns ||
      (cols == kRibbonMaxColumns && wide != 0)) {
    return false;
  }
  RibbonBanded g;
  g.data = filter;
  g.num_blocks = blocks;
  g.r = static_cast<uint32_t>(cols);
  g.k = wide;
  g.salt = p[1];
  out->data = filter;
  out->Set(&kBandedQuery, g);
  return true;
}

// Segmented: 1 <= r <= 32, S >= 1 segments, a directory of S + 1 entries
// of 8 bytes, then W columns of 16 bytes; entry 0 starts at column 0,
// block 0, and entry S ends at column W with salt byte 0. A segment's two
// entries are checked when a query reads them (RibbonSegmented::Segment):
// Open stays O(1).
bool DecodeSegmented(const Trailer& t, const uint8_t* filter,
                     DecodedFilter* out) {
  const uint32_t cols = t.params[1];
  const uint64_t segments = DecodeFixed32(t.params + 2);
  const uint64_t dir = kRibbonEntryBytes * (segments + 1);
  if (cols == 0 || cols > kRibbonMaxColumns || segments == 0 ||
      t.payload_size < dir || (t.payload_size - dir) % kRibbonColumnBytes) {
    return false;
  }
  const uint64_t columns = (t.payload_size - dir) / kRibbonColumnBytes;
  const uint8_t* last = filter + dir - kRibbonEntryBytes;
  if (DecodeFixed32(filter) != 0 || (DecodeFixed32(filter + 4) >> 8) != 0 ||
      DecodeFixed32(last) != columns || (DecodeFixed32(last + 4) & 255) != 0) {
    return false;
  }
  RibbonSegmented g;
  g.data = filter;
  g.segments = segments;
  g.columns = columns;
  g.r = cols;
  out->data = filter;
  out->Set(Fastest(kSegmentedQuery, kSegmentedPopcntQuery), g);
  return true;
}

}  // namespace

// Params: u8 form, then dense (form 0): u8 salt, u8 m, u8 r, 0, 0; banded
// (form 1): u8 salt, u32le num_blocks; segmented (form 2): u8 r, u32le
// segments. A compact trailer: dense, one param.
bool DecodeRibbon(const Trailer& t, const uint8_t* filter, DecodedFilter* out) {
  if (t.compact) return DecodeCompactDense(t, filter, out);
  if (t.params_size != kRibbonParamsSize) return false;
  switch (t.params[0]) {
    case 0:
      return DecodeDense(t, filter, out);
    case 1:
      return DecodeBanded(t, filter, out);
    case 2:
      return DecodeSegmented(t, filter, out);
    default:
      return false;  // a form this version cannot read
  }
}

}  // namespace internal
}  // namespace sstfilter
