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
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "sstfilter/c.h"

using sstfilter::fuzz::kNumProbeKeys;
using sstfilter::fuzz::kProbeKeys;

namespace {

// The corpus secret (fuzz/fuzz_util.h) as a C handle, for the keyed paths.
const sstfilter_secret* FuzzSecret() {
  static const sstfilter_secret* const secret = [] {
    sstfilter_secret* s = nullptr;
    const std::string_view bytes = sstfilter::fuzz::kFuzzSecret;
    if (sstfilter_secret_create(bytes.data(), bytes.size(), &s, nullptr) !=
        SSTFILTER_OK) {
      std::abort();
    }
    return s;  // lives as long as the process
  }();
  return secret;
}

void CheckError(sstfilter_code code, char* errmsg) {
  if (code == SSTFILTER_OK) {
    SSTFILTER_FUZZ_CHECK(errmsg == nullptr);
  } else {
    SSTFILTER_FUZZ_CHECK(errmsg != nullptr && std::strlen(errmsg) > 0);
  }
  sstfilter_free(errmsg);
}

// Opens a reader over the bytes (keyed with `secret` unless NULL) and checks
// that its single, batched, hashed and handle-free answers agree, and that
// unreadable bytes match every key.
void CheckReader(const char* bytes, size_t size, const sstfilter_secret* secret,
                 const char* const* keys, const size_t* lens) {
  sstfilter_reader* r = nullptr;
  char* err = nullptr;
  sstfilter_code code =
      sstfilter_reader_open_keyed(bytes, size, secret, &r, &err);
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
    // Without the secret, keyed bytes match every key (and unkeyed bytes
    // read the same with or without one).
    const int plain = sstfilter_may_match(bytes, size, keys[i], lens[i]);
    SSTFILTER_FUZZ_CHECK(secret == nullptr ? plain == m : plain >= m);
    hashes[i] = sstfilter_reader_hash(r, keys[i], lens[i]);
    if (secret == nullptr) {
      SSTFILTER_FUZZ_CHECK(
          hashes[i] ==
          sstfilter_hash64(keys[i], lens[i], sstfilter_reader_seed(r)));
    }
    SSTFILTER_FUZZ_CHECK(sstfilter_reader_may_match_hash(r, hashes[i]) == m);
  }
  unsigned char hbatch[kNumProbeKeys];
  sstfilter_reader_may_match_hashes(r, kNumProbeKeys, hashes, hbatch);
  SSTFILTER_FUZZ_CHECK(std::memcmp(hbatch, batch, kNumProbeKeys) == 0);
  sstfilter_reader_destroy(r);
}

// Deserializes the bytes as a mutable filter of `kind` (keyed with `secret`
// unless NULL); what reads serializes again to bytes that answer as it does.
void CheckMutable(int kind, const char* bytes, size_t size,
                  const sstfilter_secret* secret, const char* const* keys,
                  const size_t* lens) {
  sstfilter_mutable* m = nullptr;
  char* err = nullptr;
  sstfilter_code code =
      sstfilter_mutable_deserialize_keyed(kind, bytes, size, secret, &m, &err);
  CheckError(code, err);
  if (code != SSTFILTER_OK) {
    SSTFILTER_FUZZ_CHECK(m == nullptr);
    SSTFILTER_FUZZ_CHECK(code == SSTFILTER_CORRUPTION ||
                         code == SSTFILTER_INVALID_ARGUMENT);
    return;
  }
  SSTFILTER_FUZZ_CHECK(sstfilter_mutable_kind(m) == kind);
  char* out = nullptr;
  size_t out_size = 0;
  code = sstfilter_mutable_serialize(m, &out, &out_size, &err);
  CheckError(code, err);
  SSTFILTER_FUZZ_CHECK(code == SSTFILTER_OK);
  sstfilter_reader* r = nullptr;
  code = sstfilter_reader_open_keyed(out, out_size, secret, &r, &err);
  CheckError(code, err);
  SSTFILTER_FUZZ_CHECK(code == SSTFILTER_OK);
  for (size_t i = 0; i < kNumProbeKeys; i++) {
    const int c = sstfilter_mutable_contains(m, keys[i], lens[i]);
    SSTFILTER_FUZZ_CHECK(sstfilter_reader_may_match(r, keys[i], lens[i]) == c);
  }
  sstfilter_reader_destroy(r);
  sstfilter_free(out);
  sstfilter_mutable_destroy(m);
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

  // Readers, without and with the corpus secret.
  CheckReader(bytes, size, nullptr, keys, lens);
  CheckReader(bytes, size, FuzzSecret(), keys, lens);

  // Mutable filters, both kinds, and two kinds the call must refuse,
  // without and with the corpus secret.
  for (int kind :
       {int{SSTFILTER_KIND_COUNTING_BLOOM}, int{SSTFILTER_KIND_DYNAMIC_CUCKOO},
        int{SSTFILTER_KIND_BLOOM}, 77}) {
    CheckMutable(kind, bytes, size, nullptr, keys, lens);
    CheckMutable(kind, bytes, size, FuzzSecret(), keys, lens);
  }

  // Specs: the input as a NUL-terminated string.
  char* err = nullptr;
  const std::string spec(reinterpret_cast<const char*>(data), size);
  char* canonical = nullptr;
  sstfilter_code code = sstfilter_spec_parse(spec.c_str(), &canonical, &err);
  CheckError(code, err);
  if (code == SSTFILTER_OK) {
    SSTFILTER_FUZZ_CHECK(canonical != nullptr);
    // A keyed spec needs a secret and builds with one; every spec builds
    // with one (an unkeyed spec ignores it).
    sstfilter_builder* b = nullptr;
    code = sstfilter_builder_create(canonical, &b, &err);
    CheckError(code, err);
    const bool keyed = std::strstr(canonical, ":keyed") != nullptr;
    SSTFILTER_FUZZ_CHECK((code == SSTFILTER_OK) == !keyed);
    SSTFILTER_FUZZ_CHECK(
        keyed ? (b == nullptr && code == SSTFILTER_INVALID_ARGUMENT)
              : b != nullptr);
    sstfilter_builder_destroy(b);
    b = nullptr;
    code = sstfilter_builder_create_keyed(canonical, FuzzSecret(), &b, &err);
    CheckError(code, err);
    SSTFILTER_FUZZ_CHECK(code == SSTFILTER_OK && b != nullptr);
    sstfilter_builder_destroy(b);
  } else {
    SSTFILTER_FUZZ_CHECK(canonical == nullptr &&
                         code == SSTFILTER_INVALID_ARGUMENT);
  }
  sstfilter_free(canonical);
  return 0;
}
