// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The trailer that ends every sstfilter filter (docs/FORMAT.md, section
// "Layout"). Two forms, told apart by bit 7 of the last byte.
//
// Full trailer (bit 7 clear), reading backwards from the last byte:
//
//   filter  := payload trailer
//   trailer := body check len tag
//   body    := varint64 payload_size, u8 flags, [u64le seed if flags & 1],
//              [u32le key_id if flags & 2 (format version 3)],
//              kind params (fixed size per kind)
//   check   := u8  low byte of XXH3_64bits_withSeed(body, len << 8 | tag)
//   len     := u8  bytes of the trailer: |body| + 3, in [5, 255]
//   tag     := u8  kind (low 4 bits) | kTagUnchecked << 4
//
// Checked full trailer (format version 4; tag kind | kTagChecked << 4):
// the same body, then a u32le check of payload and body instead of the
// check byte, then len and tag.
//
// Compact trailer (format version 2; bit 7 set): two bytes, read as the
// little-endian u16 w = data[size - 2] | data[size - 1] << 8:
//
//   w bit  15      1
//   w bits 11..14  kind, one that has a compact form (KindHasCompactForm:
//                  bloom, ribbon's dense form)
//   w bits  7..10  the kind's one param byte, 0..15
//   w bits  0..6   check: payload_size mod 128, XOR the constant of each
//                  set bit of w bits 7..14 (format.cc)
//
// with payload_size = size - 2 in [kMinCompactPayload, kMaxCompactPayload],
// seed 0 and no flags (never keyed).
//
// Decoding checks every size before reading and rejects anything not
// exactly as written here: an unknown tag or flags, a check mismatch,
// payload_size + len != filter size, a body not consumed to its last byte,
// a compact trailer of a kind without a compact form or outside its sizes.

#ifndef SSTFILTER_POLICY_FORMAT_H_
#define SSTFILTER_POLICY_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sstfilter/hash.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// The high nibble of a full trailer's tag, which tells its form (version
// numbers are format versions, docs/FORMAT.md "Versions"). The unchecked
// full trailer (tag 0x10 | kind), which format versions 1 to 3 write: a
// check byte over the body. Format version 2 added the compact trailer and
// left this one as it was.
inline constexpr uint8_t kTagUnchecked = 1;
// Format version 4: the checked full trailer (tag 0x20 | kind), whose
// u32le check covers the payload and the body instead of the check byte:
// check, len and tag take kCheckedFullOverhead bytes. Writers use it for
// every full trailer. Tags 0x30..0x7f are free for later forms.
inline constexpr uint8_t kTagChecked = 2;
inline constexpr size_t kCheckedFullOverhead = 6;
// Format version 4: a compact trailer whose kind field has this bit set is
// the checked form of kind (field & 7): its check XORs in the CRC-7 of the
// payload's 64-bit XOR fold (docs/FORMAT.md). Writers use it for every
// compact trailer.
inline constexpr uint8_t kCompactCheckedKind = 8;
inline constexpr uint8_t kFlagHasSeed = 1;
// Format version 3: a keyed filter (FilterSecret); a u32le key id follows
// the seed. Earlier readers refuse the flag, so they answer "may match".
inline constexpr uint8_t kFlagKeyed = 2;
inline constexpr size_t kMaxKindParams = 32;

// The compact trailer: its bytes, its marker bit in the last byte, and the
// payload sizes it is written (and accepted) for. Tiny filters (~10 keys:
// rare, the last keys of a file) keep the full trailer and with it the
// bytes earlier versions wrote. Above 127 bytes (~100 keys at 10 bits per
// key) the full trailer costs under 0.5 bits per key, and its check byte
// is worth more: a truncated filter reads as a valid compact one with
// probability ~2^-12 per truncation (docs/FORMAT.md), so the fewer sizes
// the compact form admits, the fewer truncations can land on one; and 112
// sizes fit the check's 7 bits, which then catch every change of size.
inline constexpr size_t kCompactTrailerSize = 2;
inline constexpr uint8_t kCompactMarker = 0x80;
inline constexpr uint64_t kMinCompactPayload = 16;
inline constexpr uint64_t kMaxCompactPayload = 127;
inline constexpr uint8_t kMaxCompactParam = 15;

struct Trailer {
  FilterKind kind = FilterKind::kEmpty;
  uint64_t payload_size = 0;
  uint64_t seed = 0;
  bool keyed = false;   // hashed with a FilterSecret (FilterSecret::Hash)
  uint32_t key_id = 0;  // that secret's key_id(), if keyed
  uint8_t params[kMaxKindParams] = {};
  size_t params_size = 0;
  // Set by ParseTrailer: the filter ended in a compact trailer.
  // AppendTrailer ignores it and picks the form itself (UsesCompactTrailer).
  bool compact = false;
  // Set by ParseTrailer: the trailer checks the payload (format version 4),
  // and the stored check VerifyPayload compares (compact: the payload
  // check the check bits imply). AppendTrailer ignores both.
  bool checked = false;
  uint32_t check = 0;
};

// The hash of `key` in a filter of `seed`: Hash64(key, seed), or, for a
// keyed filter (secret != nullptr), secret->Hash(key, seed). The one rule
// of builders, readers and mutable filters.
inline uint64_t FilterHash(std::string_view key, uint64_t seed,
                           const FilterSecret* secret) {
  return secret != nullptr ? secret->Hash(key, seed) : Hash64(key, seed);
}

// Sets t's hashing fields for a filter built from `spec`: seed, keyed, and
// key_id 0 (the builder writes the real one: SetTrailerKeyId). A salted
// spec's seed is drawn per filter and is never 0; a spec whose seed is not
// drawn yet (planning) stands in 1, a seed of the same size.
void SetTrailerHashing(const FilterSpec& spec, Trailer* t);

// Whether a filter built from `spec` may end in a compact trailer: no
// seed, salt or key.
bool MayUseCompactTrailer(const FilterSpec& spec);

// Rewrites the key id of the full trailer that ends *dst, whose filter
// starts at dst[start] and is keyed. The trailer keeps its size.
void SetTrailerKeyId(uint32_t key_id, size_t start, std::string* dst);

// Kinds whose filters may end in a compact trailer: those whose params are
// one byte in [0, kMaxCompactParam] for every filter small enough, the
// standard Bloom kind (k) and the ribbon kind (the dense form's low bits of
// r - 1; the rest in a header byte at its payload's start). A fact of the
// format (docs/FORMAT.md, the kinds table), not of a kind's code. Never
// kEmpty: a misread compact "empty" filter would answer "no" to every key.
constexpr bool KindHasCompactForm(FilterKind kind) {
  return kind == FilterKind::kBloom || kind == FilterKind::kRibbon;
}

// Whether AppendTrailer writes `t` in the compact form: a kind with a
// compact form, seed 0, not keyed, one param byte <= kMaxCompactParam, and
// kMinCompactPayload <= payload_size <= kMaxCompactPayload. Writers choose
// it by nothing else, so every small filter of such a kind gets it.
bool UsesCompactTrailer(const Trailer& t);

// The payload size a writer of `t` (t.payload_size bytes) should use so
// that filter sizes never drop as payloads grow: a payload just under
// kMinCompactPayload, whose full trailer would make the filter at least as
// large as the smallest compact one, grows to kMinCompactPayload (a free
// gain in accuracy for a Bloom filter). Otherwise t.payload_size.
// FilterBuilder::MaxEntriesForSize needs FilterSize non-decreasing.
uint64_t PaddedPayloadSize(const Trailer& t);

// Bytes AppendTrailer writes for `t`.
size_t TrailerSize(const Trailer& t);

// Appends the trailer for `t` to *dst: the checked forms of format version
// 4, or with checked = false the unchecked forms earlier versions wrote
// (for readers older than version 4, and to test that their bytes still
// read). REQUIRES: t.params_size <= kMaxKindParams and the payload
// (t.payload_size bytes) was appended just before.
void AppendTrailer(const Trailer& t, std::string* dst, bool checked = true);

// Parses the trailer, either form, at the end of data[0, size). Returns
// false, leaving *t unspecified, for anything that is not a well-formed
// trailer whose payload_size matches `size`. Never reads outside
// data[0, size).
bool ParseTrailer(const uint8_t* data, size_t size, Trailer* t);

// Whether the payload and body of data[0, size), whose trailer ParseTrailer
// read into `t`, match the trailer's check (true for the unchecked forms
// of earlier versions). Reads all of data[0, size).
bool VerifyPayload(const uint8_t* data, size_t size, const Trailer& t);

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_FORMAT_H_
