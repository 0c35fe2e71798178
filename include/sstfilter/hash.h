// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The one key hash of sstfilter: XXH3 64-bit (xxHash 0.8) with an explicit
// seed. Every filter kind derives all of its probe positions, block indexes,
// buckets and fingerprints from this single value, computed once per key.
//
// The value is part of the on-disk format: Hash64(key, seed) must never
// change for a given (key, seed). It is pinned by tests/hash_test.cc.
// Never substitute std::hash, which is neither stable nor portable.
//
// Keyed filters (spec option "keyed") hash with the application's secret
// instead: FilterSecret::Hash (sstfilter/secret.h).

#ifndef SSTFILTER_HASH_H_
#define SSTFILTER_HASH_H_

#include <cstdint>
#include <string_view>

namespace sstfilter {

// XXH3_64bits_withSeed(key.data(), key.size(), seed). Seed 0 is the default
// for every filter; a non-zero seed is recorded in the filter's trailer.
uint64_t Hash64(std::string_view key, uint64_t seed = 0);

}  // namespace sstfilter

#endif  // SSTFILTER_HASH_H_
