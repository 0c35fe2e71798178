// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// ParseFilterSpec over arbitrary strings. Properties: an accepted spec is
// valid, its canonical string parses back to an equal spec, a builder can
// be made from it, and its size queries stay sane for any entry count
// (absurd ones included); a rejected one leaves the output untouched and
// says why.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "sstfilter/filter.h"
#include "sstfilter/spec.h"

using sstfilter::FilterSpec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  FilterSpec spec;
  spec.kind = sstfilter::FilterKind::kEmpty;  // a marker Parse never writes
  spec.bits_per_key = -1;
  const sstfilter::Status s = sstfilter::ParseFilterSpec(text, &spec);
  if (!s.ok()) {
    SSTFILTER_FUZZ_CHECK(!s.message().empty());
    SSTFILTER_FUZZ_CHECK(spec.kind == sstfilter::FilterKind::kEmpty &&
                         spec.bits_per_key == -1);
    return 0;
  }
  SSTFILTER_FUZZ_CHECK(spec.Validate().ok());
  FilterSpec again;
  SSTFILTER_FUZZ_CHECK(
      sstfilter::ParseFilterSpec(spec.ToString(), &again).ok());
  SSTFILTER_FUZZ_CHECK(again == spec);

  std::unique_ptr<sstfilter::FilterBuilder> builder;
  // A keyed spec needs a secret, and builds with one.
  SSTFILTER_FUZZ_CHECK(sstfilter::NewFilterBuilder(spec, &builder).ok() !=
                       spec.keyed);
  SSTFILTER_FUZZ_CHECK(
      sstfilter::NewFilterBuilder(spec, &builder, sstfilter::fuzz::FuzzSecret())
          .ok());
  // Sizes grow with the entry count; the largest counts must not overflow
  // into small sizes (UBSan checks the float-to-int conversions).
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  size_t last = 0;
  for (size_t n : {size_t{0}, size_t{1}, size_t{36}, size_t{1000},
                   size_t{1} << 40, size_t{1} << 60, kMax}) {
    const size_t bytes = builder->FilterSize(n);
    SSTFILTER_FUZZ_CHECK(bytes >= last);
    last = bytes;
  }
  for (size_t bytes : {size_t{0}, size_t{64}, size_t{1} << 20, kMax}) {
    const size_t n = builder->MaxEntriesForSize(bytes);
    if (n > 0) SSTFILTER_FUZZ_CHECK(builder->FilterSize(n) <= bytes);
  }
  return 0;
}
