// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Filters as format versions before 4 wrote them: the golden bytes of the
// earlier trailers (unchecked: the full trailer with its check
// byte, a compact trailer without the payload check) stay pinned by
// rewriting a filter's trailer in the earlier form, which also proves that
// those bytes still read with the same answers.

#ifndef SSTFILTER_TESTS_FORMAT_VERSIONS_H_
#define SSTFILTER_TESTS_FORMAT_VERSIONS_H_

#include <gtest/gtest.h>

#include <string>

#include "policy/format.h"
#include "sstfilter/filter.h"
#include "tests/test_util.h"

namespace sstfilter {
namespace test {

// `filter` (written now, any kind) with its trailer rewritten in the form
// earlier versions wrote: the same payload and body.
inline std::string UncheckedBytes(const std::string& filter) {
  internal::Trailer t;
  const auto* d = reinterpret_cast<const uint8_t*>(filter.data());
  EXPECT_TRUE(internal::ParseTrailer(d, filter.size(), &t));
  EXPECT_TRUE(t.checked) << "writers write the checked forms";
  std::string old = filter.substr(0, t.payload_size);
  internal::AppendTrailer(t, &old, /*checked=*/false);
  return old;
}

// UncheckedBytes(filter) for a point filter: both read valid and answer
// alike for Key(0 .. 4999) and 2000 absent keys (keyed filters: with
// `secret`).
inline std::string Unchecked(const std::string& filter,
                             const FilterSecret* secret = nullptr) {
  const std::string old = UncheckedBytes(filter);
  const FilterReader now = FilterReader::Open(filter, secret);
  const FilterReader before = FilterReader::Open(old, secret);
  EXPECT_TRUE(now.valid());
  EXPECT_TRUE(before.valid());
  for (uint64_t i = 0; i < 7000; i++) {
    const std::string k = i < 5000 ? Key(i) : AbsentKey(i);
    EXPECT_EQ(now.MayMatch(k), before.MayMatch(k)) << k;
  }
  return old;
}

}  // namespace test
}  // namespace sstfilter

#endif  // SSTFILTER_TESTS_FORMAT_VERSIONS_H_
