// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The LevelDB policy's KeyMayMatch over arbitrary filters. Properties: no
// crash or out-of-bounds read, the same answer as the core's reader, and
// "may match" for bytes the reader cannot read.

#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "sstfilter/filter.h"
#include "sstfilter/leveldb.h"

using sstfilter::fuzz::kProbeKeys;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const leveldb::FilterPolicy* const policy = [] {
    std::unique_ptr<const leveldb::FilterPolicy> p;
    SSTFILTER_FUZZ_CHECK(
        sstfilter::NewLevelDBFilterPolicy("bloom:10", &p).ok());
    return p.release();  // lives as long as the process
  }();
  const std::vector<char> copy(data, data + size);
  const leveldb::Slice filter(copy.data(), copy.size());
  const sstfilter::FilterReader core =
      sstfilter::FilterReader::Open(std::string_view(copy.data(), copy.size()));
  for (std::string_view key : kProbeKeys) {
    const bool m =
        policy->KeyMayMatch(leveldb::Slice(key.data(), key.size()), filter);
    SSTFILTER_FUZZ_CHECK(m == core.MayMatch(key));
    if (!core.valid()) SSTFILTER_FUZZ_CHECK(m);
  }
  return 0;
}
