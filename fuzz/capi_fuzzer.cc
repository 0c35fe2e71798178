// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The C API's functions that read outside bytes: sstfilter_reader_open and
// its queries, the handle-free sstfilter_may_match, sstfilter_mutable_
// deserialize for both kinds, and sstfilter_spec_parse. Properties: nothing
// crashes or leaks (LeakSanitizer), every code is one the header lists,
// the answers agree with each other, and failures say why.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "sstfilter/c.h"

using sstfilter::fuzz::kNumProbeKeys;
using sstfilter::fuzz::kProbeKeys;

namespace {

void CheckError(sstfilter_code code, char* errmsg) {
  if (code == SSTFILTER_OK) {
    SSTFILTER_FUZZ_CHECK(errmsg == nullptr);
  } else {
    SSTFILTER_FUZZ_CHECK(errmsg != nullptr && std::strlen(errmsg) > 0);
  }
  sstfilter_free(errmsg);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<char> copy(data, data + size);
  const char* bytes = size == 0 ? nullptr : copy.data();

  const char* keys[kNumProbeKeys];
  size_t lens[kNumProbeKeys];
  for (size_t i = 0; i < kNumProbeKeys; i++) {
    keys[i] = kProbeKeys[i].data();
    lens[i] = kProbeKeys[i].size();
  }

  // Readers.
  sstfilter_reader* r = nullptr;
  char* err = nullptr;
  sstfilter_code code = sstfilter_reader_open(bytes, size, &r, &err);
  CheckError(code, err);
  SSTFILTER_FUZZ_CHECK(code == SSTFILTER_OK && r != nullptr);
  const int valid = sstfilter_reader_valid(r);
  unsigned char batch[kNumProbeKeys];
  sstfilter_reader_may_match_batch(r, kNumProbeKeys, keys, lens, batch);
  uint64_t hashes[kNumProbeKeys];
  for (size_t i = 0; i < kNumProbeKeys; i++) {
    const int m = sstfilter_reader_may_match(r, keys[i], lens[i]);
    SSTFILTER_FUZZ_CHECK(m == 0 || m == 1);
    if (!valid) SSTFILTER_FUZZ_CHECK(m == 1);
    SSTFILTER_FUZZ_CHECK(batch[i] == m);
    SSTFILTER_FUZZ_CHECK(sstfilter_may_match(bytes, size, keys[i], lens[i]) ==
                         m);
    hashes[i] = sstfilter_hash64(keys[i], lens[i], sstfilter_reader_seed(r));
    SSTFILTER_FUZZ_CHECK(sstfilter_reader_may_match_hash(r, hashes[i]) == m);
  }
  unsigned char hbatch[kNumProbeKeys];
  sstfilter_reader_may_match_hashes(r, kNumProbeKeys, hashes, hbatch);
  SSTFILTER_FUZZ_CHECK(std::memcmp(hbatch, batch, kNumProbeKeys) == 0);
  sstfilter_reader_destroy(r);

  // Mutable filters, both kinds, and two kinds the call must refuse.
  for (int kind :
       {int{SSTFILTER_KIND_COUNTING_BLOOM}, int{SSTFILTER_KIND_DYNAMIC_CUCKOO},
        int{SSTFILTER_KIND_BLOOM}, 77}) {
    sstfilter_mutable* m = nullptr;
    code = sstfilter_mutable_deserialize(kind, bytes, size, &m, &err);
    CheckError(code, err);
    if (code != SSTFILTER_OK) {
      SSTFILTER_FUZZ_CHECK(m == nullptr);
      SSTFILTER_FUZZ_CHECK(code == SSTFILTER_CORRUPTION ||
                           code == SSTFILTER_INVALID_ARGUMENT);
      continue;
    }
    SSTFILTER_FUZZ_CHECK(sstfilter_mutable_kind(m) == kind);
    char* out = nullptr;
    size_t out_size = 0;
    code = sstfilter_mutable_serialize(m, &out, &out_size, &err);
    CheckError(code, err);
    SSTFILTER_FUZZ_CHECK(code == SSTFILTER_OK);
    for (size_t i = 0; i < kNumProbeKeys; i++) {
      const int c = sstfilter_mutable_contains(m, keys[i], lens[i]);
      SSTFILTER_FUZZ_CHECK(
          sstfilter_may_match(out, out_size, keys[i], lens[i]) == c);
    }
    sstfilter_free(out);
    sstfilter_mutable_destroy(m);
  }

  // Specs: the input as a NUL-terminated string.
  const std::string spec(reinterpret_cast<const char*>(data), size);
  char* canonical = nullptr;
  code = sstfilter_spec_parse(spec.c_str(), &canonical, &err);
  CheckError(code, err);
  if (code == SSTFILTER_OK) {
    SSTFILTER_FUZZ_CHECK(canonical != nullptr);
    sstfilter_builder* b = nullptr;
    code = sstfilter_builder_create(canonical, &b, &err);
    CheckError(code, err);
    SSTFILTER_FUZZ_CHECK(code == SSTFILTER_OK);
    sstfilter_builder_destroy(b);
  } else {
    SSTFILTER_FUZZ_CHECK(canonical == nullptr &&
                         code == SSTFILTER_INVALID_ARGUMENT);
  }
  sstfilter_free(canonical);
  return 0;
}
