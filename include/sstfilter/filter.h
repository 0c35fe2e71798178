// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Building and reading filters. Every filter goes through three steps:
//
//   FilterSpec --NewFilterBuilder--> FilterBuilder: (AddKey | AddHash)* Finish
//   bytes      --FilterReader::Open--> FilterReader: MayMatch*
//
//   sstfilter::FilterSpec spec;
//   sstfilter::Status s =
//       sstfilter::ParseFilterSpec("blocked_bloom:10", &spec);
//   std::unique_ptr<sstfilter::FilterBuilder> builder;
//   if (s.ok()) s = sstfilter::NewFilterBuilder(spec, &builder);
//   builder->AddKey("apple");
//   builder->AddKey("banana");
//   std::string bytes;
//   builder->Finish(&bytes);                 // appends; builder is empty again
//   sstfilter::FilterReader reader = sstfilter::FilterReader::Open(bytes);
//   reader.MayMatch("apple");                // true: no false negatives
//   reader.MayMatch("cherry");               // false, except with P ~ FPR
//
// The bytes are self-describing (docs/FORMAT.md): a reader learns the kind,
// the trailer's form and the parameters from the filter's trailer, so one
// reader reads every kind. Bytes that are empty, truncated, corrupt, of an
// unknown kind or trailer form read as a filter that matches every key
// ("may match").
//
// Keyed filters (spec option "keyed", sstfilter/secret.h): the builder and
// every reader take the application's FilterSecret; a reader without it,
// or with another one, matches every key.

#ifndef SSTFILTER_FILTER_H_
#define SSTFILTER_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sstfilter/spec.h"
#include "sstfilter/status.h"

namespace sstfilter {

class FilterSecret;  // sstfilter/secret.h

namespace internal {
struct KindQuery;    // policy/kinds.h
struct BatchHashes;  // policy/kinds.h
struct Trailer;      // policy/format.h
}  // namespace internal

// The name of the sstfilter format family, for engines that store a filter
// under its policy's name (RocksDB's CompatibilityName(), LevelDB's Name()).
// Every kind shares it: the format tells kinds apart. It changes only if a
// reader of this family could ever return a false negative on new bytes.
inline constexpr const char kFamilyName[] = "sstfilter.v1";

// Accumulates the hashes of a set of keys, then encodes a filter for them.
//
// Grammar of calls: ((AddKey | AddHash)* Finish)*  -- a builder is reusable.
// Keys may arrive in any order, repeated, and empty. A builder is not
// thread-safe; use one per thread.
class FilterBuilder {
 public:
  virtual ~FilterBuilder();

  FilterBuilder(const FilterBuilder&) = delete;
  FilterBuilder& operator=(const FilterBuilder&) = delete;

  // Adds HashKey(key).
  void AddKey(std::string_view key) { AddHash(HashKey(key)); }
  // Adds a hash computed by the caller. REQUIRES: hash == HashKey(key) for
  // the key it stands for, since the last Finish, or MayMatch(key) may
  // miss.
  virtual void AddHash(uint64_t hash) = 0;

  // The hash of `key` in the filter being built: Hash64(key, seed()), or
  // for a keyed spec secret->Hash(key, seed()).
  uint64_t HashKey(std::string_view key) const;
  // The seed of the filter being built: spec().seed, or for a salted spec
  // a fresh random non-zero seed, drawn again by every Finish.
  uint64_t seed() const { return seed_; }

  // Number of hashes added since the last Finish, not counting a hash that
  // repeats the one added just before it (a builder may drop other recent
  // repeats too: cuckoo). An upper bound on distinct keys.
  virtual size_t NumEntries() const = 0;

  // Appends the filter for every hash added since the last Finish to *dst,
  // never touching the bytes already in *dst, then empties the builder
  // (keeping its memory for reuse).
  virtual void Finish(std::string* dst) = 0;

  // Bytes Finish would append for `num_entries` distinct entries; SIZE_MAX
  // for a count no filter can hold (over 2^52).
  virtual size_t FilterSize(size_t num_entries) const = 0;
  // The largest number of entries whose filter fits in `bytes`
  // (0 if none does); the inverse of FilterSize.
  virtual size_t MaxEntriesForSize(size_t bytes) const;

  const FilterSpec& spec() const { return spec_; }

 protected:
  explicit FilterBuilder(const FilterSpec& spec)
      : spec_(spec), seed_(spec.seed) {}

  // The spec of the filter being built: spec() with seed() as its seed.
  FilterSpec FilterSpecNow() const;
  // Ends every Finish, after the filter starting at (*dst)[start] was
  // appended: writes the secret's key id into a keyed filter, and draws
  // the next seed of a salted spec.
  void EndFilter(size_t start, std::string* dst);

 private:
  friend Status NewFilterBuilder(const FilterSpec&,
                                 std::unique_ptr<FilterBuilder>*,
                                 const FilterSecret*);
  void NextSeed();

  const FilterSpec spec_;
  const FilterSecret* secret_ = nullptr;  // set iff spec_.keyed
  uint64_t seed_;
  uint64_t salt_state_ = 0;  // salted specs: seeds are Mix64 of its steps
};

// Makes a builder for `spec`. A keyed spec needs `secret`, which must
// outlive the builder; an unkeyed spec ignores it. On error
// (spec.Validate() fails, or a keyed spec without a secret) *out is
// unchanged and the Status names the problem.
Status NewFilterBuilder(const FilterSpec& spec,
                        std::unique_ptr<FilterBuilder>* out,
                        const FilterSecret* secret = nullptr);

// A read-only view over the bytes of one filter. Small, copyable, and it
// never allocates. The bytes must outlive the reader and stay unchanged.
// All methods are const and safe to call from many threads at once.
class FilterReader {
 public:
  // A reader that matches every key.
  FilterReader() = default;

  // Validates the trailer and sizes of `filter` and returns a reader over
  // it. Anything it does not understand gives a reader that matches every
  // key; Open never fails otherwise. A keyed filter reads only with the
  // writer's secret (same key_id()), which must then outlive the reader;
  // otherwise it matches every key.
  // Open also checks the payload against the trailer's check (filters
  // written since format version 4; docs/FORMAT.md): damaged bytes give a
  // reader that matches every key. That reads every byte once.
  static FilterReader Open(std::string_view filter,
                           const FilterSecret* secret = nullptr);

  // Open(filter, secret).MayMatch(key) for one key, reading the whole
  // filter only when the answer would be "no" (to check it): for callers
  // that keep no reader (LevelDB's KeyMayMatch).
  static bool MayMatchOnce(std::string_view filter, std::string_view key,
                           const FilterSecret* secret = nullptr);

  // False only if `key` was certainly not added.
  bool MayMatch(std::string_view key) const;
  // The same for a key whose Hash(key) the caller computed.
  bool MayMatchHash(uint64_t hash) const;
  // The hash MayMatchHash expects: Hash64(key, seed()), or for a keyed
  // filter secret->Hash(key, seed()).
  uint64_t Hash(std::string_view key) const;

  // Batched forms: results[i] = MayMatch(keys[i]). They prefetch the memory
  // of all probes before testing any; prefer them for many keys.
  void MayMatch(size_t n, const std::string_view* keys, bool* results) const;
  void MayMatchHashes(size_t n, const uint64_t* hashes, bool* results) const;
  // The same over keys the caller holds in its own type (an engine's
  // slices): key i is key_at(keys, i), read as it is hashed, with no copy.
  using KeyAt = std::string_view (*)(const void* keys, size_t i);
  void MayMatch(size_t n, KeyAt key_at, const void* keys, bool* results) const;

  // What Open found. kind() is the encoded kind (kEmpty for a filter of no
  // keys); for bytes it could not read, valid() is false and kind() kEmpty.
  bool valid() const { return query_ != nullptr; }
  FilterKind kind() const { return kind_; }
  uint64_t seed() const { return seed_; }
  // The filter is keyed (its trailer says so), whether or not this reader
  // has the secret: a keyed filter opened without it is !valid() && keyed().
  bool keyed() const { return keyed_; }
  // Bytes of the payload (the filter without its trailer).
  size_t payload_size() const { return payload_size_; }

  // Bytes of the opaque storage where Open keeps the decoded parameters
  // of the filter's kind. Fixed: adding a kind changes neither this header
  // nor sizeof(FilterReader).
  static constexpr size_t kStateBytes = 48;

 private:
  void MayMatchBatch(size_t n, internal::BatchHashes* in, bool* results) const;
  // Open without the payload check; *t is the trailer it read.
  static FilterReader OpenUnverified(std::string_view filter,
                                     const FilterSecret* secret,
                                     internal::Trailer* t);

  // The query of the kind Open found (policy/kinds.h); nullptr for bytes
  // it could not read, which match every key.
  const internal::KindQuery* query_ = nullptr;
  const uint8_t* data_ = nullptr;  // what the query reads
  size_t payload_size_ = 0;
  uint64_t seed_ = 0;
  const FilterSecret* secret_ = nullptr;  // a keyed filter's
  FilterKind kind_ = FilterKind::kEmpty;
  bool keyed_ = false;
  // The kind's parameters, as its decoder stored them; private to policy/.
  alignas(8) unsigned char state_[kStateBytes] = {};
};

}  // namespace sstfilter

#endif  // SSTFILTER_FILTER_H_
