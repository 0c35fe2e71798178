// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// FilterReader: one reader for every kind. Open parses the trailer, then
// the kind's decoder (its row of the kinds table, policy/kinds.h)
// validates the sizes the trailer implies and picks the kind's query.
// Anything that fails leaves the reader matching every key: a damaged
// filter costs reads, never a false negative.

#include <algorithm>

#include "policy/format.h"
#include "policy/kinds.h"
#include "policy/primitives.h"
#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/secret.h"

namespace sstfilter {

FilterReader FilterReader::Open(std::string_view filter,
                                const FilterSecret* secret) {
  internal::Trailer t;
  FilterReader r = OpenUnverified(filter, secret, &t);
  if (r.valid() &&
      !internal::VerifyPayload(reinterpret_cast<const uint8_t*>(filter.data()),
                               filter.size(), t)) {
    return FilterReader();
  }
  return r;
}

namespace {

// How a filter's bytes open, before any payload check.
enum class Opened {
  kMatchAll,  // unreadable bytes or a kind this version can't read
  kKeyed,     // keyed, without the writer's secret: probe positions unknown
  kDecoded,   // *d holds the kind's query, payload and state
};

// Parses `filter`'s trailer into *t and has its kind's decoder fill *d
// (d->state: FilterReader::kStateBytes of storage).
Opened Decode(std::string_view filter, const FilterSecret* secret,
              internal::Trailer* t, internal::DecodedFilter* d) {
  const auto* data = reinterpret_cast<const uint8_t*>(filter.data());
  if (!internal::ParseTrailer(data, filter.size(), t)) return Opened::kMatchAll;
  if (t->keyed && (secret == nullptr || secret->key_id() != t->key_id)) {
    return Opened::kKeyed;
  }
  const internal::KindRow* row = internal::FindKindRow(t->kind);
  if (row == nullptr || !row->decode(*t, data, d)) return Opened::kMatchAll;
  return Opened::kDecoded;
}

}  // namespace

bool FilterReader::MayMatchOnce(std::string_view filter, std::string_view key,
                                const FilterSecret* secret) {
  // No FilterReader is made: LevelDB calls this once per table per Get.
  internal::Trailer t;
  alignas(8) unsigned char state[kStateBytes];
  internal::DecodedFilter d;
  d.state = state;
  if (Decode(filter, secret, &t, &d) != Opened::kDecoded ||
      d.query == nullptr) {
    return true;
  }
  const uint64_t h =
      internal::FilterHash(key, t.seed, t.keyed ? secret : nullptr);
  // "May match" needs no check: damage can only cost a read. A "no" is
  // given only if the bytes are as written.
  return d.query->may_match(d.data, state, h) ||
         !internal::VerifyPayload(
             reinterpret_cast<const uint8_t*>(filter.data()), filter.size(), t);
}

FilterReader FilterReader::OpenUnverified(std::string_view filter,
                                          const FilterSecret* secret,
                                          internal::Trailer* out) {
  internal::Trailer& t = *out;
  FilterReader r;
  internal::DecodedFilter decoded;
  decoded.state = r.state_;
  switch (Decode(filter, secret, &t, &decoded)) {
    case Opened::kMatchAll:
      return FilterReader();
    case Opened::kKeyed:
      r.keyed_ = true;
      return r;
    case Opened::kDecoded:
      break;
  }
  r.query_ = decoded.query;
  r.data_ = decoded.data;
  r.kind_ = t.kind;
  r.payload_size_ = t.payload_size;
  r.seed_ = t.seed;
  r.secret_ = t.keyed ? secret : nullptr;
  r.keyed_ = t.keyed;
  return r;
}

bool FilterReader::MayMatch(std::string_view key) const {
  if (query_ == nullptr) return true;
  return query_->may_match(data_, state_, Hash(key));
}

uint64_t FilterReader::Hash(std::string_view key) const {
  return internal::FilterHash(key, seed_, secret_);
}

bool FilterReader::MayMatchHash(uint64_t hash) const {
  if (query_ == nullptr) return true;
  return query_->may_match(data_, state_, hash);
}

void FilterReader::MayMatchHashes(size_t n, const uint64_t* hashes,
                                  bool* results) const {
  internal::BatchHashes in;
  in.hashes = hashes;
  MayMatchBatch(n, &in, results);
}

void FilterReader::MayMatch(size_t n, const std::string_view* keys,
                            bool* results) const {
  MayMatch(
      n,
      [](const void* k, size_t i) {
        return static_cast<const std::string_view*>(k)[i];
      },
      keys, results);
}

void FilterReader::MayMatch(size_t n, KeyAt key_at, const void* keys,
                            bool* results) const {
  // The kind hashes each key as it prefetches it (BatchHashes).
  internal::BatchHashes in;
  in.key_at = key_at;
  in.keys = keys;
  in.seed = seed_;
  in.secret = secret_;
  MayMatchBatch(n, &in, results);
}

// Runs the kind's batched query on rounds of up to kPrefetchBatch items.
void FilterReader::MayMatchBatch(size_t n, internal::BatchHashes* in,
                                 bool* results) const {
  if (query_ == nullptr) {
    std::fill(results, results + n, true);
    return;
  }
  for (size_t i = 0; i < n; i += internal::kPrefetchBatch) {
    const size_t m = std::min(internal::kPrefetchBatch, n - i);
    in->first = i;
    query_->may_match_batch(data_, state_, m, *in, results + i);
  }
}

}  // namespace sstfilter
