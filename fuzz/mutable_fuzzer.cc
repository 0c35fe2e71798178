// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// CountingBloomFilter::Deserialize and DynamicCuckooFilter::Deserialize over
// arbitrary bytes, with the fuzz secret (fuzz_util.h) for keyed bytes.
// Properties: bytes either load or give a Corruption error, or, for keyed
// bytes of another secret, an InvalidArgument error and a reader that
// matches every key; a loaded filter answers exactly as FilterReader::Open
// does over the same bytes; it survives inserts and erases of the keys it was given;
// and its serialized form loads back to a filter that answers the same.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "sstfilter/filter.h"
#include "sstfilter/mutable.h"

using sstfilter::FilterReader;
using sstfilter::Status;
using sstfilter::fuzz::FuzzSecret;
using sstfilter::fuzz::kNumProbeKeys;
using sstfilter::fuzz::kProbeKeys;

namespace {

template <typename Filter>
void Exercise(std::string_view bytes) {
  Filter f;
  const Status s = Filter::Deserialize(bytes, &f, FuzzSecret());
  const FilterReader r = FilterReader::Open(bytes, FuzzSecret());
  if (s.code() == Status::Code::kInvalidArgument) {
    SSTFILTER_FUZZ_CHECK(!r.valid() && r.MayMatch("absent"));
    return;
  }
  if (!s.ok()) {
    SSTFILTER_FUZZ_CHECK(s.code() == Status::Code::kCorruption);
    return;
  }
  SSTFILTER_FUZZ_CHECK(r.valid());
  for (std::string_view key : kProbeKeys) {
    SSTFILTER_FUZZ_CHECK(f.Contains(key) == r.MayMatch(key));
  }
  // Round trip: what it writes loads back and answers the same.
  std::string out;
  f.Serialize(&out);
  Filter g;
  SSTFILTER_FUZZ_CHECK(Filter::Deserialize(out, &g, FuzzSecret()).ok());
  for (std::string_view key : kProbeKeys) {
    SSTFILTER_FUZZ_CHECK(g.Contains(key) == f.Contains(key));
  }
  // Writes on a loaded table: an inserted key is found until erased.
  for (size_t i = 0; i < kNumProbeKeys; i++) {
    if (f.Insert(kProbeKeys[i])) {
      SSTFILTER_FUZZ_CHECK(f.Contains(kProbeKeys[i]));
      SSTFILTER_FUZZ_CHECK(f.Erase(kProbeKeys[i]));
    }
  }
}

// CountingBloomFilter::Insert returns nothing; give it the same shape.
struct CountingBloom : sstfilter::CountingBloomFilter {
  static Status Deserialize(std::string_view b, CountingBloom* out,
                            const sstfilter::FilterSecret* secret) {
    return sstfilter::CountingBloomFilter::Deserialize(b, out, secret);
  }
  bool Insert(std::string_view key) {
    if (num_counters() == 0) return false;
    sstfilter::CountingBloomFilter::Insert(key);
    return true;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<char> copy(data, data + size);
  const std::string_view bytes(copy.data(), copy.size());
  Exercise<sstfilter::DynamicCuckooFilter>(bytes);
  Exercise<CountingBloom>(bytes);
  return 0;
}
