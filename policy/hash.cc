// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/hash.h"

// Inline xxHash into this file: the installed library then needs no xxHash
// at run time, and the compiler can specialise XXH3 for our calls.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace sstfilter {

uint64_t Hash64(std::string_view key, uint64_t seed) {
  return XXH3_64bits_withSeed(key.data(), key.size(), seed);
}

}  // namespace sstfilter
