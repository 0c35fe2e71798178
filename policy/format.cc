// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "policy/format.h"

#include <cstring>

#include "policy/primitives.h"
#include "sstfilter/hash.h"

namespace sstfilter {
namespace internal {
namespace {

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

uint8_t Check(const uint8_t* body, size_t body_size, uint8_t len, uint8_t tag) {
  std::string_view b(reinterpret_cast<const char*>(body), body_size);
  return static_cast<uint8_t>(Hash64(b, (uint64_t{len} << 8) | tag));
}

}  // namespace

size_t TrailerSize(const Trailer& t) {
  return VarintSize(t.payload_size) + 1 + (t.seed != 0 ? 8 : 0) +
         t.params_size + 3;
}

void AppendTrailer(const Trailer& t, std::string* dst) {
  uint8_t buf[10 + 1 + 8 + kMaxKindParams + 3];
  size_t n = 0;
  uint64_t v = t.payload_size;
  while (v >= 0x80) {
    buf[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<uint8_t>(v);
  buf[n++] = t.seed != 0 ? kFlagHasSeed : 0;
  if (t.seed != 0) {
    EncodeFixed64(buf + n, t.seed);
    n += 8;
  }
  std::memcpy(buf + n, t.params, t.params_size);
  n += t.params_size;
  const uint8_t len = static_cast<uint8_t>(n + 3);
  const uint8_t tag = static_cast<uint8_t>(static_cast<uint8_t>(t.kind) |
                                           (kFormatVersion << 4));
  buf[n] = Check(buf, n, len, tag);
  buf[n + 1] = len;
  buf[n + 2] = tag;
  dst->append(reinterpret_cast<const char*>(buf), n + 3);
}

bool ParseTrailer(const uint8_t* data, size_t size, Trailer* t) {
  if (size < 5) return false;
  const uint8_t tag = data[size - 1];
  const uint8_t len = data[size - 2];
  if ((tag >> 4) != kFormatVersion) return false;
  if (len < 5 || len > size) return false;
  const uint8_t* body = data + size - len;
  const size_t body_size = len - 3u;
  if (Check(body, body_size, len, tag) != data[size - 3]) return false;

  // payload_size: at most 10 varint bytes, all inside the body.
  size_t pos = 0;
  uint64_t payload_size = 0;
  for (int shift = 0;; shift += 7) {
    if (pos >= body_size || shift > 63) return false;
    const uint8_t b = body[pos++];
    payload_size |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
  }
  if (payload_size != size - len) return false;
  if (pos >= body_size) return false;
  const uint8_t flags = body[pos++];
  if ((flags & ~kFlagHasSeed) != 0) return false;
  uint64_t seed = 0;
  if (flags & kFlagHasSeed) {
    if (body_size - pos < 8) return false;
    seed = DecodeFixed64(body + pos);
    pos += 8;
    if (seed == 0) return false;  // a writer never sets the flag for seed 0
  }
  const size_t params_size = body_size - pos;
  if (params_size > kMaxKindParams) return false;
  t->kind = static_cast<FilterKind>(tag & 0x0f);
  t->payload_size = payload_size;
  t->seed = seed;
  std::memcpy(t->params, body + pos, params_size);
  t->params_size = params_size;
  return true;
}

}  // namespace internal
}  // namespace sstfilter
