// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The cuckoo decoder and queries (rows cuckoo and dynamic_cuckoo of the
// kinds table: static and dynamic cuckoo share one payload layout,
// docs/FORMAT.md).

#include "policy/cuckoo/cuckoo.h"
#include "policy/cuckoo/cuckoo_impl.h"
#include "policy/decode.h"

namespace sstfilter {
namespace internal {
namespace {

struct CuckooState {
  uint64_t payload_size;
  uint64_t num_buckets;
  int fingerprint_bits;
  uint32_t salt;
};

bool CuckooQuery(const uint8_t* data, const void* state, uint64_t hash) {
  const CuckooState& s = StateOf<CuckooState>(state);
  return CuckooMayMatch(hash, data, s.payload_size, s.num_buckets,
                        s.fingerprint_bits, s.salt);
}

void CuckooQueryBatch(const uint8_t* data, const void* state, size_t n,
                      const BatchHashes& in, bool* results) {
  const CuckooState& s = StateOf<CuckooState>(state);
  CuckooMayMatchBatch(
      n, [&](size_t i) { return in.Hash(i); }, data, s.payload_size,
      s.num_buckets, s.fingerprint_bits, s.salt, results);
}

constexpr KindQuery kCuckooQuery = {CuckooQuery, CuckooQueryBatch};

}  // namespace

// Params: u8 f (fingerprint bits, 4..32), u8 salt. Payload: exactly
// ceil(f N / 2) bytes for N >= 1 buckets of 4 f bits.
bool DecodeCuckoo(const Trailer& t, const uint8_t* filter, DecodedFilter* out) {
  if (t.params_size != 2 || t.params[0] < kCuckooMinTagBits ||
      t.params[0] > kCuckooMaxTagBits || t.payload_size == 0 ||
      t.payload_size > (uint64_t{1} << 56)) {
    return false;
  }
  const int f = t.params[0];
  const uint64_t buckets = CuckooBucketsForPayload(t.payload_size, f);
  if (buckets == 0 || CuckooPayloadBytes(buckets, f) != t.payload_size) {
    return false;
  }
  out->data = filter;
  out->Set(&kCuckooQuery, CuckooState{t.payload_size, buckets, f, t.params[1]});
  return true;
}

}  // namespace internal
}  // namespace sstfilter
