// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The RocksDB adapter's GetFilterBitsReader over arbitrary filter blocks,
// then both MayMatch forms (Get's and MultiGet's). Properties: no crash or
// out-of-bounds read, and the batched answers equal the single ones.

#include <rocksdb/filter_policy.h>
#include <rocksdb/slice.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "adapters/rocksdb/rocksdb_abi.h"
#include "fuzz/fuzz_util.h"
#include "sstfilter/filter.h"
#include "sstfilter/rocksdb.h"

using sstfilter::fuzz::kNumProbeKeys;
using sstfilter::fuzz::kProbeKeys;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::shared_ptr<const rocksdb::FilterPolicy> policy = [] {
    std::shared_ptr<const rocksdb::FilterPolicy> p;
    SSTFILTER_FUZZ_CHECK(
        sstfilter::NewRocksDBFilterPolicy("bloom:10", &p).ok());
    return p;
  }();
  const std::vector<char> copy(data, data + size);
  const rocksdb::Slice contents(copy.data(), copy.size());
  std::unique_ptr<rocksdb::FilterBitsReader> reader(
      policy->GetFilterBitsReader(contents));
  SSTFILTER_FUZZ_CHECK(reader != nullptr);

  // The same answers as the core's reader, key by key and in a batch.
  const sstfilter::FilterReader core =
      sstfilter::FilterReader::Open(std::string_view(copy.data(), copy.size()));
  rocksdb::Slice slices[kNumProbeKeys];
  rocksdb::Slice* ptrs[kNumProbeKeys];
  bool single[kNumProbeKeys];
  for (size_t i = 0; i < kNumProbeKeys; i++) {
    slices[i] = rocksdb::Slice(kProbeKeys[i].data(), kProbeKeys[i].size());
    ptrs[i] = &slices[i];
    single[i] = reader->MayMatch(slices[i]);
    SSTFILTER_FUZZ_CHECK(single[i] == core.MayMatch(kProbeKeys[i]));
  }
  bool batch[kNumProbeKeys];
  reader->MayMatch(static_cast<int>(kNumProbeKeys), ptrs, batch);
  for (size_t i = 0; i < kNumProbeKeys; i++) {
    SSTFILTER_FUZZ_CHECK(batch[i] == single[i]);
  }
  return 0;
}
