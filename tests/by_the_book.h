// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The primitives docs/FORMAT.md defines, written from its text alone for
// the tests' second implementations (tests/format_decoder_test.cc,
// tests/cuckoo_format_test.cc): no code shared with the library, so that a
// mistake in the library's primitives cannot hide in both.

#ifndef SSTFILTER_TESTS_BY_THE_BOOK_H_
#define SSTFILTER_TESTS_BY_THE_BOOK_H_

#include <cstdint>
#include <string_view>

namespace sstfilter {
namespace by_the_book {

// Section "Hash": floor(h * n / 2^64).
inline uint64_t FastRange(uint64_t h, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

// Kind 3: the MurmurHash3 finalizer (Mix64).
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// Bit j of `payload`, LSB-first ("Bits are numbered LSB-first").
inline unsigned Bit(std::string_view payload, uint64_t j) {
  return (static_cast<uint8_t>(payload.at(j / 8)) >> (j % 8)) & 1;
}

}  // namespace by_the_book
}  // namespace sstfilter

#endif  // SSTFILTER_TESTS_BY_THE_BOOK_H_
