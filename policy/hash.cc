// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/hash.h"

#include <fstream>

#include "policy/primitives.h"
#include "sstfilter/secret.h"

// Inline xxHash into this file: the installed library then needs no xxHash
// at run time, and the compiler can specialise XXH3 for our calls.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sstfilter {

static_assert(FilterSecret::kDerivedBytes == XXH3_SECRET_DEFAULT_SIZE,
              "the derived secret has XXH3's default secret size");
static_assert(FilterSecret::kDerivedBytes >= XXH3_SECRET_SIZE_MIN,
              "XXH3_64bits_withSecret needs at least XXH3_SECRET_SIZE_MIN");

namespace {

// The string whose keyed hash gives a secret's key id (docs/FORMAT.md).
constexpr char kKeyIdInput[] = "sstfilter.key_id";
// A secret file larger than this is refused before it is read whole.
constexpr size_t kMaxSecretFileBytes = 4096;

}  // namespace

uint64_t Hash64(std::string_view key, uint64_t seed) {
  return XXH3_64bits_withSeed(key.data(), key.size(), seed);
}

uint64_t FilterSecret::Hash(std::string_view key, uint64_t seed) const {
  const uint64_t h =
      XXH3_64bits_withSecret(key.data(), key.size(), derived_, kDerivedBytes);
  return seed == 0 ? h : internal::Mix64(h ^ seed);
}

Status NewFilterSecret(std::string_view secret,
                       std::unique_ptr<const FilterSecret>* out) {
  if (secret.size() < FilterSecret::kMinBytes) {
    return Status::InvalidArgument("a filter secret needs at least " +
                                   std::to_string(FilterSecret::kMinBytes) +
                                   " bytes, got " +
                                   std::to_string(secret.size()));
  }
  std::unique_ptr<FilterSecret> s(new FilterSecret());
  // xxHash 0.8.1 and later: (buffer, size, custom seed, its size).
  if (XXH3_generateSecret(s->derived_, FilterSecret::kDerivedBytes,
                          secret.data(), secret.size()) != XXH_OK) {
    return Status::InvalidArgument("xxHash could not derive a filter secret");
  }
  s->key_id_ = static_cast<uint32_t>(
      s->Hash(std::string_view(kKeyIdInput, sizeof(kKeyIdInput) - 1), 0));
  *out = std::move(s);
  return Status::OK();
}

Status ReadFilterSecretFile(const std::string& path,
                            std::unique_ptr<const FilterSecret>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument("cannot open filter secret file \"" + path +
                                   "\"");
  }
  std::string bytes(kMaxSecretFileBytes + 1, '\0');
  in.read(&bytes[0], static_cast<std::streamsize>(bytes.size()));
  if (in.bad()) {
    return Status::InvalidArgument("cannot read filter secret file \"" + path +
                                   "\"");
  }
  bytes.resize(static_cast<size_t>(in.gcount()));
  if (bytes.size() > kMaxSecretFileBytes) {
    return Status::InvalidArgument(
        "filter secret file \"" + path + "\" is larger than " +
        std::to_string(kMaxSecretFileBytes) + " bytes");
  }
  Status s = NewFilterSecret(bytes, out);
  if (!s.ok()) {
    return Status::InvalidArgument("filter secret file \"" + path +
                                   "\": " + s.message());
  }
  return Status::OK();
}

}  // namespace sstfilter
