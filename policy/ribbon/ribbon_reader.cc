// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The ribbon decoder and queries (row ribbon of the kinds table): the
// dense form, written with a full or a compact trailer, and the banded
// form. Layouts in docs/FORMAT.md and policy/ribbon/ribbon_impl.h.

#include "policy/kinds.h"
#include "policy/primitives.h"
#include "policy/ribbon/ribbon.h"
#include "policy/ribbon/ribbon_impl.h"

namespace sstfilter {
namespace internal {
namespace {

// The reader's state is the form's query object, payload pointer included.
bool BandedQuery(const uint8_t*, const void* state, uint64_t hash) {
  return StateOf<RibbonBanded>(state).MayMatch(hash);
}

// Prefetches the words of every key of a round.
void BandedQueryBatch(const uint8_t*, const void* state, size_t n,
                      const uint64_t* hashes, bool* results) {
  const RibbonBanded& g = StateOf<RibbonBanded>(state);
  InBatches(
      n,
      [&](size_t i) {
        g.Prefetch(hashes[i]);
        return hashes[i];
      },
      [&](size_t i, uint64_t hash) {
        results[i] = g.MayMatch(hash);
        return true;
      });
}

bool DenseQuery(const uint8_t*, const void* state, uint64_t hash) {
  return StateOf<RibbonDense>(state).MayMatch(hash);
}

// Dense filters are at most 64 slots: nothing to prefetch.
void DenseQueryBatch(const uint8_t*, const void* state, size_t n,
                     const uint64_t* hashes, bool* results) {
  const RibbonDense& g = StateOf<RibbonDense>(state);
  for (size_t i = 0; i < n; i++) results[i] = g.MayMatch(hashes[i]);
}

constexpr KindQuery kBandedQuery = {BandedQuery, BandedQueryBatch};
constexpr KindQuery kDenseQuery = {DenseQuery, DenseQueryBatch};

void SetDense(const uint8_t* data, uint32_t m, uint32_t cols, uint32_t salt,
              DecodedFilter* out) {
  RibbonDense g;
  g.data = data;
  g.m = m;
  g.r = cols;
  g.salt = salt;
  out->data = data;
  out->Set(&kDenseQuery, g);
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

}  // namespace

// Params: u8 form, u8 salt, then dense (form 0): u8 m, u8 r, 0, 0; banded
// (form 1): u32le num_blocks. A compact trailer: dense, one param.
bool DecodeRibbon(const Trailer& t, const uint8_t* filter, DecodedFilter* out) {
  if (t.compact) return DecodeCompactDense(t, filter, out);
  if (t.params_size != kRibbonParamsSize) return false;
  switch (t.params[0]) {
    case 0:
      return DecodeDense(t, filter, out);
    case 1:
      return DecodeBanded(t, filter, out);
    default:
      return false;  // a form this version cannot read
  }
}

}  // namespace internal
}  // namespace sstfilter
