// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "policy/format.h"

#include <algorithm>
#include <cassert>
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

// The compact trailer's u16 (little-endian on disk; see format.h).
constexpr int kCompactKindShift = 11;
constexpr int kCompactParamShift = 7;
constexpr uint16_t kCompactCheckMask = 0x7f;

// The compact check: the payload size mod 128 (exactly the size: compact
// payloads are 16..127 bytes), XORed with one constant per set bit of w's
// bits 7..14 (param and kind). The constants are distinct and have two
// bits set each, so every change of one or two bits of w's bits 0..14
// changes the check (a distance-3 code), and so does every size change
// that leaves the trailer intact.
constexpr uint16_t kCompactCheckColumns[8] = {0x03, 0x05, 0x06, 0x09,
                                              0x0a, 0x0c, 0x11, 0x12};

// The XOR of the columns of each value of w's bits 7..14, by that value:
// one load per trailer read instead of a loop over its bits.
struct CompactCheckTable {
  uint8_t t[256];
  constexpr CompactCheckTable() : t() {
    for (int v = 0; v < 256; v++) {
      uint8_t c = 0;
      for (int i = 0; i < 8; i++) {
        if ((v >> i) & 1) c = static_cast<uint8_t>(c ^ kCompactCheckColumns[i]);
      }
      t[v] = c;
    }
  }
};
constexpr CompactCheckTable kCompactChecks;

uint16_t CompactCheck(uint16_t w, uint64_t payload_size) {
  return static_cast<uint16_t>(
      (payload_size & kCompactCheckMask) ^
      kCompactChecks.t[(w >> kCompactParamShift) & 0xff]);
}

// CRC-7 with generator x^7 + x^3 + 1 (the MMC/SD card CRC7), initial value
// 0, bytes fed most significant bit first, no final XOR; kept in the top 7
// bits of a byte so that a byte-wide table applies. Table s advances a
// byte by s further bytes of zeros, so the CRC of 8 bytes is 8 independent
// loads.
struct Crc7Tables {
  uint8_t t[8][256];
  constexpr Crc7Tables() : t() {
    for (int i = 0; i < 256; i++) {
      uint8_t c = static_cast<uint8_t>(i);
      for (int b = 0; b < 8; b++) {
        c = static_cast<uint8_t>((c & 0x80) ? (c << 1) ^ 0x12 : (c << 1));
      }
      t[0][i] = c;
    }
    for (int s = 1; s < 8; s++) {
      for (int i = 0; i < 256; i++) t[s][i] = t[0][t[s - 1][i]];
    }
  }
};
constexpr Crc7Tables kCrc7;

// The checked compact form's payload check (docs/FORMAT.md, "Checked
// compact form"): the payload XOR-folded into one u64 (its 8-byte
// little-endian words, the last zero-padded), then the CRC-7 of the fold's
// 8 bytes, least significant first. A flipped payload bit flips exactly one
// bit of the fold, and the CRC sees every one-bit change; as the generator
// is primitive (period 127 > 63), it sees every two-bit change of the fold
// too. Missed: changes that cancel in the fold (two flips 64 bits apart in
// the payload), and other changes with chance 2^-7.
uint8_t PayloadCheck7(const uint8_t* p, size_t n) {
  uint64_t fold = 0;
  const size_t words = n / 8, tail = n % 8;
  for (size_t i = 0; i < words; i++) fold ^= DecodeFixed64(p + 8 * i);
  if (tail != 0 && words != 0) {
    // The last 8 bytes, shifted so that only the tail's remain.
    fold ^= DecodeFixed64(p + n - 8) >> (8 * (8 - tail));
  } else {
    for (size_t i = 0; i < tail; i++) fold ^= uint64_t{p[i]} << (8 * i);
  }
  // The eight lookups written out: a loop here cost twice the instructions.
  const auto& t = kCrc7.t;
  const uint8_t c = t[7][fold & 0xff] ^ t[6][(fold >> 8) & 0xff] ^
                    t[5][(fold >> 16) & 0xff] ^ t[4][(fold >> 24) & 0xff] ^
                    t[3][(fold >> 32) & 0xff] ^ t[2][(fold >> 40) & 0xff] ^
                    t[1][(fold >> 48) & 0xff] ^ t[0][fold >> 56];
  return static_cast<uint8_t>(c >> 1);
}

// The payload check of the checked full trailer: the low 32 bits of
// XXH3 over the payload and the body, with len and tag as the seed.
uint32_t FullCheck32(const uint8_t* data, size_t n, uint8_t len, uint8_t tag) {
  std::string_view b(reinterpret_cast<const char*>(data), n);
  return static_cast<uint32_t>(Hash64(b, (uint64_t{len} << 8) | tag));
}

bool ParseCompactTrailer(const uint8_t* data, size_t size, Trailer* t) {
  if (size < kCompactTrailerSize) return false;
  const uint64_t payload_size = size - kCompactTrailerSize;
  if (payload_size < kMinCompactPayload || payload_size > kMaxCompactPayload) {
    return false;
  }
  const uint16_t w =
      static_cast<uint16_t>(data[size - 2] | (data[size - 1] << 8));
  const uint8_t code = (w >> kCompactKindShift) & 0x0f;
  const bool checked = (code & kCompactCheckedKind) != 0;
  const auto kind = static_cast<FilterKind>(code & ~kCompactCheckedKind);
  if (!KindHasCompactForm(kind)) return false;
  // A checked form's check also holds the payload's check, verified by
  // VerifyPayload; here only that the trailer is one.
  t->check = CompactCheck(w, payload_size) ^ (w & kCompactCheckMask);
  if (!checked && t->check != 0) return false;
  t->kind = kind;
  t->payload_size = payload_size;
  t->seed = 0;
  t->keyed = false;
  t->key_id = 0;
  t->params[0] =
      static_cast<uint8_t>((w >> kCompactParamShift) & kMaxCompactParam);
  t->params_size = 1;
  t->compact = true;
  t->checked = checked;
  return true;
}

}  // namespace

void SetTrailerHashing(const FilterSpec& spec, Trailer* t) {
  t->seed = spec.seed != 0 ? spec.seed : (spec.salt ? 1 : 0);
  t->keyed = spec.keyed;
  t->key_id = 0;
}

bool MayUseCompactTrailer(const FilterSpec& spec) {
  return spec.seed == 0 && !spec.salt && !spec.keyed;
}

void SetTrailerKeyId(uint32_t key_id, size_t start, std::string* dst) {
  Trailer t;
  const auto* data = reinterpret_cast<const uint8_t*>(dst->data()) + start;
  const bool ok = ParseTrailer(data, dst->size() - start, &t);
  assert(ok && t.keyed && !t.compact);
  if (!ok || !t.keyed) return;
  t.key_id = key_id;
  dst->resize(start + t.payload_size);
  AppendTrailer(t, dst);
}

bool UsesCompactTrailer(const Trailer& t) {
  return KindHasCompactForm(t.kind) && t.seed == 0 && !t.keyed &&
         t.params_size == 1 && t.params[0] <= kMaxCompactParam &&
         t.payload_size >= kMinCompactPayload &&
         t.payload_size <= kMaxCompactPayload;
}

uint64_t PaddedPayloadSize(const Trailer& t) {
  if (t.payload_size >= kMinCompactPayload) return t.payload_size;
  Trailer padded = t;
  padded.payload_size = kMinCompactPayload;
  if (!UsesCompactTrailer(padded)) return t.payload_size;
  return t.payload_size + TrailerSize(t) >=
                 kMinCompactPayload + kCompactTrailerSize
             ? kMinCompactPayload
             : t.payload_size;
}

size_t TrailerSize(const Trailer& t) {
  if (UsesCompactTrailer(t)) return kCompactTrailerSize;
  return VarintSize(t.payload_size) + 1 + (t.seed != 0 ? 8 : 0) +
         (t.keyed ? 4 : 0) + t.params_size + kCheckedFullOverhead;
}

void AppendTrailer(const Trailer& t, std::string* dst, bool checked) {
  if (UsesCompactTrailer(t)) {
    const uint16_t code = static_cast<uint16_t>(
        static_cast<uint16_t>(t.kind) | (checked ? kCompactCheckedKind : 0));
    uint16_t w = static_cast<uint16_t>(
        (uint16_t{kCompactMarker} << 8) | (code << kCompactKindShift) |
        (uint16_t{t.params[0]} << kCompactParamShift));
    const size_t payload = std::min<size_t>(t.payload_size, dst->size());
    w |= CompactCheck(w, t.payload_size);
    if (checked) {
      w ^= PayloadCheck7(
          reinterpret_cast<const uint8_t*>(dst->data()) + dst->size() - payload,
          payload);
    }
    dst->push_back(static_cast<char>(w & 0xff));
    dst->push_back(static_cast<char>(w >> 8));
    return;
  }
  uint8_t buf[10 + 1 + 8 + 4 + kMaxKindParams + 3];
  size_t n = 0;
  uint64_t v = t.payload_size;
  while (v >= 0x80) {
    buf[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<uint8_t>(v);
  buf[n++] = static_cast<uint8_t>((t.seed != 0 ? kFlagHasSeed : 0) |
                                  (t.keyed ? kFlagKeyed : 0));
  if (t.seed != 0) {
    EncodeFixed64(buf + n, t.seed);
    n += 8;
  }
  if (t.keyed) {
    EncodeFixed32(buf + n, t.key_id);
    n += 4;
  }
  std::memcpy(buf + n, t.params, t.params_size);
  n += t.params_size;
  if (!checked) {
    const uint8_t len = static_cast<uint8_t>(n + 3);
    const uint8_t tag = static_cast<uint8_t>(static_cast<uint8_t>(t.kind) |
                                             (kTagUnchecked << 4));
    buf[n] = Check(buf, n, len, tag);
    buf[n + 1] = len;
    buf[n + 2] = tag;
    dst->append(reinterpret_cast<const char*>(buf), n + 3);
    return;
  }
  const uint8_t len = static_cast<uint8_t>(n + kCheckedFullOverhead);
  const uint8_t tag =
      static_cast<uint8_t>(static_cast<uint8_t>(t.kind) | (kTagChecked << 4));
  // The check covers the payload (up to payload_size bytes before) and
  // the body.
  const size_t payload = std::min<size_t>(t.payload_size, dst->size());
  dst->append(reinterpret_cast<const char*>(buf), n);
  EncodeFixed32(buf, FullCheck32(reinterpret_cast<const uint8_t*>(dst->data()) +
                                     dst->size() - n - payload,
                                 payload + n, len, tag));
  buf[4] = len;
  buf[5] = tag;
  dst->append(reinterpret_cast<const char*>(buf), 6);
}

bool ParseTrailer(const uint8_t* data, size_t size, Trailer* t) {
  if (size >= 1 && (data[size - 1] & kCompactMarker) != 0) {
    return ParseCompactTrailer(data, size, t);
  }
  if (size < 5) return false;
  const uint8_t tag = data[size - 1];
  const uint8_t len = data[size - 2];
  const bool checked = (tag >> 4) == kTagChecked;
  if ((tag >> 4) != kTagUnchecked && !checked) return false;
  // Unchecked: body, u8 check of the body; checked (format version 4):
  // body, u32le check of payload and body (VerifyPayload).
  const size_t overhead = checked ? kCheckedFullOverhead : 3;
  if (len < overhead + 2 || len > size) return false;
  const uint8_t* body = data + size - len;
  const size_t body_size = len - overhead;
  if (checked) {
    t->check = DecodeFixed32(data + size - 6);
  } else if (Check(body, body_size, len, tag) != data[size - 3]) {
    return false;
  }

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
  if ((flags & ~(kFlagHasSeed | kFlagKeyed)) != 0) return false;
  uint64_t seed = 0;
  if (flags & kFlagHasSeed) {
    if (body_size - pos < 8) return false;
    seed = DecodeFixed64(body + pos);
    pos += 8;
    if (seed == 0) return false;  // a writer never sets the flag for seed 0
  }
  uint32_t key_id = 0;
  if (flags & kFlagKeyed) {
    if (body_size - pos < 4) return false;
    key_id = DecodeFixed32(body + pos);
    pos += 4;
  }
  const size_t params_size = body_size - pos;
  if (params_size > kMaxKindParams) return false;
  t->kind = static_cast<FilterKind>(tag & 0x0f);
  t->payload_size = payload_size;
  t->seed = seed;
  t->keyed = (flags & kFlagKeyed) != 0;
  t->key_id = key_id;
  std::memcpy(t->params, body + pos, params_size);
  t->params_size = params_size;
  t->compact = false;
  t->checked = checked;
  return true;
}

bool VerifyPayload(const uint8_t* data, size_t size, const Trailer& t) {
  if (!t.checked) return true;  // written before the check: nothing to see
  if (t.compact) return PayloadCheck7(data, t.payload_size) == t.check;
  const uint8_t len = data[size - 2];
  return FullCheck32(data, size - kCheckedFullOverhead, len, data[size - 1]) ==
         t.check;
}

}  // namespace internal
}  // namespace sstfilter
