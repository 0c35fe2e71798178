// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// FilterReader::Open over arbitrary bytes, with and without a secret, then
// MayMatch, MayMatchHash and both batched forms. Properties: no crash or out-of-bounds read (ASan), no
// undefined behaviour (UBSan), unreadable bytes match every key, the
// batched answers equal the single ones, and a valid reader's sizes are
// consistent with the input.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"

using sstfilter::FilterReader;
using sstfilter::fuzz::kNumProbeKeys;
using sstfilter::fuzz::kProbeKeys;

namespace {

void Check(const FilterReader& r, const uint8_t* data, size_t size) {
  if (r.valid()) {
    SSTFILTER_FUZZ_CHECK(r.payload_size() < size);
  } else {
    SSTFILTER_FUZZ_CHECK(r.kind() == sstfilter::FilterKind::kEmpty);
  }

  bool single[kNumProbeKeys + 4];
  uint64_t hashes[kNumProbeKeys + 4];
  for (size_t i = 0; i < kNumProbeKeys; i++) {
    single[i] = r.MayMatch(kProbeKeys[i]);
    hashes[i] = r.Hash(kProbeKeys[i]);
    SSTFILTER_FUZZ_CHECK(r.MayMatchHash(hashes[i]) == single[i]);
    if (!r.valid()) SSTFILTER_FUZZ_CHECK(single[i]);
  }
  // Hashes from the input's first bytes reach buckets and bits that the
  // fixed keys do not.
  for (size_t i = 0; i < 4; i++) {
    uint64_t h = 0;
    for (size_t j = 0; j < 8 && 8 * i + j < size; j++) {
      h |= uint64_t{data[8 * i + j]} << (8 * j);
    }
    hashes[kNumProbeKeys + i] = h * 0x9E3779B97F4A7C15ull ^ i;
    single[kNumProbeKeys + i] = r.MayMatchHash(hashes[kNumProbeKeys + i]);
  }

  bool batch[kNumProbeKeys + 4];
  r.MayMatch(kNumProbeKeys, kProbeKeys, batch);
  for (size_t i = 0; i < kNumProbeKeys; i++) {
    SSTFILTER_FUZZ_CHECK(batch[i] == single[i]);
  }
  bool hbatch[kNumProbeKeys + 4];
  r.MayMatchHashes(kNumProbeKeys + 4, hashes, hbatch);
  for (size_t i = 0; i < kNumProbeKeys + 4; i++) {
    SSTFILTER_FUZZ_CHECK(hbatch[i] == single[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes on the heap, so that ASan sees any read
  // past the end of the filter.
  const std::vector<char> copy(data, data + size);
  const std::string_view bytes(copy.data(), copy.size());
  // Without a secret (a keyed filter then matches every key), and with the
  // corpus's secret (keyed filters read).
  const FilterReader plain = FilterReader::Open(bytes);
  const FilterReader keyed =
      FilterReader::Open(bytes, sstfilter::fuzz::FuzzSecret());
  SSTFILTER_FUZZ_CHECK(!plain.valid() || keyed.valid());
  Check(plain, data, size);
  Check(keyed, data, size);
  return 0;
}
