// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The trailer that ends every sstfilter filter (docs/FORMAT.md, section
// "Trailer"). Reading backwards from the last byte:
//
//   filter  := payload trailer
//   trailer := body check len tag
//   body    := varint64 payload_size, u8 flags, [u64le seed if flags & 1],
//              kind params (fixed size per kind and version)
//   check   := u8  low byte of XXH3_64bits_withSeed(body, len << 8 | tag)
//   len     := u8  bytes of the trailer: |body| + 3, in [5, 255]
//   tag     := u8  kind (low 4 bits) | format version << 4 (version 1)
//
// Decoding checks every size before reading and rejects anything not
// exactly as written here: unknown version or flags, a check mismatch,
// payload_size + len != filter size, a body not consumed to its last byte.

#ifndef SSTFILTER_POLICY_FORMAT_H_
#define SSTFILTER_POLICY_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

inline constexpr uint8_t kFormatVersion = 1;
inline constexpr uint8_t kFlagHasSeed = 1;
inline constexpr size_t kMaxKindParams = 32;

struct Trailer {
  FilterKind kind = FilterKind::kEmpty;
  uint64_t payload_size = 0;
  uint64_t seed = 0;
  uint8_t params[kMaxKindParams] = {};
  size_t params_size = 0;
};

// Bytes AppendTrailer writes for `t`.
size_t TrailerSize(const Trailer& t);

// Appends the trailer for `t` to *dst. REQUIRES: t.params_size <=
// kMaxKindParams and the payload (t.payload_size bytes) was appended just
// before.
void AppendTrailer(const Trailer& t, std::string* dst);

// Parses the trailer at the end of data[0, size). Returns false, leaving
// *t unspecified, for anything that is not a well-formed version-1 trailer
// whose payload_size matches `size`. Never reads outside data[0, size).
bool ParseTrailer(const uint8_t* data, size_t size, Trailer* t);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_FORMAT_H_
