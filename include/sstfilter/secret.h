// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// FilterSecret: the application's key for keyed filters (spec option
// "keyed", sstfilter/spec.h).
//
// With a public hash and seed, anyone who knows some present keys can
// compute, offline, absent keys that an unkeyed filter passes, and make
// every one of them cost a disk read. A keyed filter hashes every key with
// XXH3 under a secret derived from the application's secret bytes, so its
// probe positions cannot be computed without the secret. The secret is
// never written into filter bytes, specs or OPTIONS files: a keyed filter
// stores only a 32-bit key id, and a reader holding a different secret, or
// none, answers "may match" for every key (never a false negative).
//
//   std::unique_ptr<const sstfilter::FilterSecret> secret;
//   sstfilter::Status s = sstfilter::NewFilterSecret(app_secret, &secret);
//   if (s.ok()) s = sstfilter::NewFilterBuilder(spec, &builder, secret.get());
//   ...
//   auto reader = sstfilter::FilterReader::Open(bytes, secret.get());
//
// Not a MAC: XXH3 with a secret is a fast keyed hash, not a cryptographic
// function. It hides probe positions from offline computation; an attacker
// who can observe many query timings or outcomes of one filter still learns
// its false positives one by one (spec option "salt" makes them worthless
// after the file is rewritten). docs/RELIABILITY.md, "Keyed filters".

#ifndef SSTFILTER_SECRET_H_
#define SSTFILTER_SECRET_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sstfilter/status.h"

namespace sstfilter {

class FilterSecret {
 public:
  // Fewest bytes of application secret accepted.
  static constexpr size_t kMinBytes = 16;
  // Bytes of the derived XXH3 secret (XXH3_SECRET_DEFAULT_SIZE).
  static constexpr size_t kDerivedBytes = 192;

  // The keyed hash of `key` (docs/FORMAT.md, "Hash"):
  // XXH3_64bits_withSecret(key, derived secret), then, if seed != 0,
  // Mix64(h XOR seed).
  uint64_t Hash(std::string_view key, uint64_t seed) const;

  // Low 32 bits of Hash("sstfilter.key_id", 0): stored in keyed filters so
  // that a reader can tell whether it holds the writer's secret.
  uint32_t key_id() const { return key_id_; }

 private:
  friend Status NewFilterSecret(std::string_view,
                                std::unique_ptr<const FilterSecret>*);
  FilterSecret() = default;

  alignas(64) unsigned char derived_[kDerivedBytes] = {};
  uint32_t key_id_ = 0;
};

// Derives the secret from `secret` (any bytes, at least kMinBytes; use
// random ones) with xxHash's XXH3_generateSecret. On error *out is
// unchanged and the Status names the problem.
Status NewFilterSecret(std::string_view secret,
                       std::unique_ptr<const FilterSecret>* out);

// NewFilterSecret of the whole content of the file at `path` (every byte,
// a trailing newline included; at most 4096 bytes). Errors name the file.
Status ReadFilterSecretFile(const std::string& path,
                            std::unique_ptr<const FilterSecret>* out);

}  // namespace sstfilter

#endif  // SSTFILTER_SECRET_H_
