// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: the table of kinds. Everything the library knows about a kind
// of the format is one row of kKindTable (kinds.cc): its name and kind
// byte, the bits per key a spec may name, an example spec, its planner
// (sizes, parameters and expected FPR for n keys), its builder factory and
// its decoder. Spec parsing, the error messages that list kinds, FilterSize,
// ParamsForSpec, the reader, `sstfilter params` and `inspect`, the C API's
// kind names, the benchmarks, the fuzz corpus and the tests' every-kind
// lists all read this table (directly, or through SpecKinds() and
// ExampleSpec() in sstfilter/spec.h).
//
// Adding a kind: its own folder policy/<family>/ with the planner, the
// builder, the decoder and query functions below, and one row in
// kinds.cc (docs/ARCHITECTURE.md, "Adding a kind").

#ifndef SSTFILTER_POLICY_KINDS_H_
#define SSTFILTER_POLICY_KINDS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "policy/decode.h"
#include "policy/format.h"
#include "policy/plan.h"
#include "sstfilter/filter.h"
#include "sstfilter/spec.h"

namespace sstfilter {
namespace internal {

// Answers every hash with `answer`: the query of the empty kind (false).
template <bool answer>
inline constexpr KindQuery kConstantQuery = {
    [](const uint8_t*, const void*, uint64_t) { return answer; },
    [](const uint8_t*, const void*, size_t n, const BatchHashes&,
       bool* results) {
      for (size_t i = 0; i < n; i++) results[i] = answer;
    }};

// Rows in kKindTable: one per FilterKind value, kEmpty to kRange (kinds.cc
// checks it). SpecTest.EveryKindHasANameAndACName (tests/spec_test.cc)
// checks the C API's last kind name against it.
inline constexpr size_t kNumFilterKinds = 8;

struct KindRow {
  FilterKind kind;
  const char* name;  // as specs and FilterKindName spell it
  // bits_per_key a spec may name, inclusive; both 0 for a kind no spec
  // names (empty, the mutable kinds: serialized, never built from a spec).
  double min_bits;
  double max_bits;
  const char* example_spec;  // "" for a kind no spec names
  // The plan of a spec of this kind for n keys (KindPlan, plan.h); the FPR
  // formula is the plan's, computed if with_fpr. nullptr if no spec names
  // the kind.
  KindPlan (*plan)(const FilterSpec& spec, uint64_t n, bool with_fpr);
  std::unique_ptr<FilterBuilder> (*new_builder)(const FilterSpec& spec);
  // Validates a parsed trailer against the kind's layout (docs/FORMAT.md)
  // and fills *out; false for anything its writers never write.
  // `filter` is the whole filter; t.payload_size bytes of payload start it.
  bool (*decode)(const Trailer& t, const uint8_t* filter, DecodedFilter* out);
  const char* summary;  // one line, for `sstfilter params` and --help
};

// The row of `kind`, or nullptr for a kind byte this version does not know.
const KindRow* FindKindRow(FilterKind kind);
// The row named `name` ("ribbon"), or nullptr.
const KindRow* FindKindRow(std::string_view name);
// Every row, in kind-byte order.
const KindRow* KindRowsBegin();
const KindRow* KindRowsEnd();

// "bloom, blocked_bloom, cuckoo or ribbon": the kinds a spec may name, for
// error messages.
std::string SpecKindList();

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_KINDS_H_
