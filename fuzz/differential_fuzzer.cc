// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Builds filters from fuzzer-chosen keys and specs and checks what must
// hold for every filter:
//   - every added key matches (no false negatives), by key and by hash;
//   - the single and batched answers agree for added and other keys;
//   - Finish appends, leaving the caller's earlier bytes alone, and a
//     reused builder writes the same bytes for the same keys;
//   - the bytes round-trip: they open as a valid filter with the spec's
//     seed, a kind the spec may write, and (Bloom kinds) FilterSize bytes;
//   - mutable filters: every inserted key is found, and Serialize /
//     Deserialize round-trips to the same bytes.
//
// Input: byte 0 picks the kind, byte 1 the bits per key within the kind's
// range, byte 2 flags: bit 0 a seed follows (8 bytes), bit 1 add hashes,
// bits 2 and 3 (static kinds) keyed and salt (if no seed); the rest is a
// list of keys, each a length byte (mod 64) then that many bytes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "policy/primitives.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/mutable.h"
#include "sstfilter/spec.h"

using sstfilter::FilterKind;
using sstfilter::FilterReader;
using sstfilter::FilterSpec;
using sstfilter::fuzz::Input;
using sstfilter::fuzz::kNumProbeKeys;
using sstfilter::fuzz::kProbeKeys;

namespace {

// Every added key matches; single and batched answers agree on `keys` and
// on the probe keys.
void CheckReader(const FilterReader& r, const std::vector<std::string>& keys,
                 bool all_added) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  views.insert(views.end(), std::begin(kProbeKeys), std::end(kProbeKeys));
  std::unique_ptr<bool[]> batch(new bool[views.size()]);
  r.MayMatch(views.size(), views.data(), batch.get());
  std::vector<uint64_t> hashes;
  for (std::string_view v : views) hashes.push_back(r.Hash(v));
  std::unique_ptr<bool[]> hbatch(new bool[views.size()]);
  r.MayMatchHashes(hashes.size(), hashes.data(), hbatch.get());
  for (size_t i = 0; i < views.size(); i++) {
    const bool m = r.MayMatch(views[i]);
    if (all_added && i < keys.size()) SSTFILTER_FUZZ_CHECK(m);
    SSTFILTER_FUZZ_CHECK(r.MayMatchHash(hashes[i]) == m);
    SSTFILTER_FUZZ_CHECK(batch[i] == m);
    SSTFILTER_FUZZ_CHECK(hbatch[i] == m);
  }
}

// The payload check (format version 4): the filter with one bit flipped
// (chosen from `pick`) reads as matching every key, but for a compact
// trailer's w bit 14 (docs/FORMAT.md), which keeps its answers; and a
// one-key query of the damaged bytes never says "no" to an added key.
void CheckOneFlip(const std::string& filter,
                  const std::vector<std::string>& keys, uint64_t pick) {
  if (filter.empty()) return;
  std::string bad = filter;
  const uint64_t bit = sstfilter::internal::Mix64(pick) % (8 * bad.size());
  bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
  const FilterReader r = FilterReader::Open(bad, sstfilter::fuzz::FuzzSecret());
  SSTFILTER_FUZZ_CHECK(!r.valid() || bit == 8 * bad.size() - 2);
  for (const std::string& k : keys) {
    SSTFILTER_FUZZ_CHECK(r.MayMatch(k));
    SSTFILTER_FUZZ_CHECK(
        FilterReader::MayMatchOnce(bad, k, sstfilter::fuzz::FuzzSecret()));
  }
}

void Static(const FilterSpec& spec, const std::vector<std::string>& keys,
            bool by_hash) {
  std::unique_ptr<sstfilter::FilterBuilder> b;
  SSTFILTER_FUZZ_CHECK(
      sstfilter::NewFilterBuilder(spec, &b, sstfilter::fuzz::FuzzSecret())
          .ok());
  for (int round = 0; round < 2; round++) {
    for (const std::string& k : keys) {
      if (by_hash) {
        b->AddHash(b->HashKey(k));
      } else {
        b->AddKey(k);
      }
    }
    const size_t entries = b->NumEntries();
    SSTFILTER_FUZZ_CHECK(entries <= keys.size());
    std::string first;
    // Earlier bytes in dst stay as they were.
    std::string dst = "prefix";
    const uint64_t seed = b->seed();
    SSTFILTER_FUZZ_CHECK(spec.salt ? seed != 0 : seed == spec.seed);
    b->Finish(&dst);
    SSTFILTER_FUZZ_CHECK(dst.compare(0, 6, "prefix") == 0);
    const std::string_view bytes = std::string_view(dst).substr(6);
    SSTFILTER_FUZZ_CHECK(b->NumEntries() == 0);
    const std::string copy(bytes);  // exactly sized, for ASan
    const FilterReader r =
        FilterReader::Open(copy, sstfilter::fuzz::FuzzSecret());
    SSTFILTER_FUZZ_CHECK(r.valid());
    SSTFILTER_FUZZ_CHECK(r.seed() == seed);
    // Without the secret a keyed filter matches every key.
    SSTFILTER_FUZZ_CHECK(FilterReader::Open(copy).valid() != spec.keyed);
    if (keys.empty()) {
      SSTFILTER_FUZZ_CHECK(r.kind() == FilterKind::kEmpty);
    } else {
      // A builder may write a smaller or fallback kind, never a mutable one.
      const std::vector<FilterKind>& kinds = sstfilter::SpecKinds();
      SSTFILTER_FUZZ_CHECK(std::find(kinds.begin(), kinds.end(), r.kind()) !=
                           kinds.end());
    }
    if (spec.kind == FilterKind::kBloom ||
        spec.kind == FilterKind::kBlockedBloom) {
      SSTFILTER_FUZZ_CHECK(copy.size() == b->FilterSize(entries));
      SSTFILTER_FUZZ_CHECK(b->MaxEntriesForSize(copy.size()) >= entries);
    } else if (spec.kind == FilterKind::kRibbon) {
      // A fallback Bloom filter takes no more bytes than the plan.
      SSTFILTER_FUZZ_CHECK(copy.size() <= b->FilterSize(entries));
    }
    CheckReader(r, keys, /*all_added=*/true);
    CheckOneFlip(copy, keys, seed + round);
    // The builder is reusable: the same keys give the same bytes (a
    // salted builder: another seed, so other bytes).
    static thread_local std::string previous;
    if (round == 0) {
      previous = copy;
    } else if (!spec.salt) {
      SSTFILTER_FUZZ_CHECK(copy == previous);
    }
  }
}

template <typename Filter>
void Mutable(const sstfilter::MutableFilterOptions& options,
             const std::vector<std::string>& keys) {
  Filter f;
  if (!Filter::Create(options, &f).ok()) return;
  std::vector<std::string> added;
  for (const std::string& k : keys) {
    if (f.Insert(k)) added.push_back(k);
  }
  for (const std::string& k : added) SSTFILTER_FUZZ_CHECK(f.Contains(k));
  std::string bytes;
  f.Serialize(&bytes);
  Filter g;
  SSTFILTER_FUZZ_CHECK(Filter::Deserialize(bytes, &g).ok());
  std::string again;
  g.Serialize(&again);
  SSTFILTER_FUZZ_CHECK(again == bytes);
  const FilterReader r = FilterReader::Open(bytes);
  SSTFILTER_FUZZ_CHECK(r.valid());
  CheckReader(r, added, /*all_added=*/true);
  // Erasing every added key leaves the others found.
  for (size_t i = 0; i < added.size(); i += 2) {
    SSTFILTER_FUZZ_CHECK(f.Erase(added[i]));
  }
  for (size_t i = 1; i < added.size(); i += 2) {
    SSTFILTER_FUZZ_CHECK(f.Contains(added[i]));
  }
}

struct CountingBloom : sstfilter::CountingBloomFilter {
  static sstfilter::Status Create(const sstfilter::MutableFilterOptions& o,
                                  CountingBloom* out) {
    return sstfilter::CountingBloomFilter::Create(o, out);
  }
  static sstfilter::Status Deserialize(std::string_view b, CountingBloom* out) {
    return sstfilter::CountingBloomFilter::Deserialize(b, out);
  }
  bool Insert(std::string_view key) {
    sstfilter::CountingBloomFilter::Insert(key);
    return true;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const uint8_t kind_byte = in.Byte();
  const uint8_t bits_byte = in.Byte();
  const uint8_t flags = in.Byte();
  const uint64_t seed = (flags & 1) ? in.U64() : 0;
  std::vector<std::string> keys;
  while (!in.empty() && keys.size() < 4096) {
    keys.emplace_back(in.Bytes(in.Byte() % 64));
  }

  // Every kind a spec names (the kinds table), then the two mutable kinds.
  const std::vector<FilterKind>& kinds = sstfilter::SpecKinds();
  const size_t which = kind_byte % (kinds.size() + 2);
  if (which < kinds.size()) {
    FilterSpec spec;
    spec.kind = kinds[which];
    const double lo = sstfilter::MinBitsPerKey(spec.kind);
    const double hi = sstfilter::MaxBitsPerKey(spec.kind);
    spec.bits_per_key = lo + (hi - lo) * bits_byte / 255.0;
    spec.seed = seed;
    spec.keyed = (flags & 4) != 0;
    spec.salt = (flags & 8) != 0 && seed == 0;
    SSTFILTER_FUZZ_CHECK(spec.Validate().ok());
    Static(spec, keys, (flags & 2) != 0);
    return 0;
  }
  sstfilter::MutableFilterOptions options;
  // Capacity from 1 to 256, so that small filters overflow.
  options.capacity = 1 + (flags >> 2) * 4;
  options.seed = seed;
  options.target_fpr = 0.5 / (1 + bits_byte);
  if (which == kinds.size()) {
    Mutable<CountingBloom>(options, keys);
  } else {
    Mutable<sstfilter::DynamicCuckooFilter>(options, keys);
  }
  return 0;
}
