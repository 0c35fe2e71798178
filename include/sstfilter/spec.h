// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// FilterSpec: which filter to build and how large, parsed from a short string.
//
//   <spec>   ::= ["sstfilter."] <kind> ":" <bits_per_key> (":" <option>)*
//              | ["sstfilter."] "auto" ":" <bits_per_key>
//                (":" (<option> | <cost>))*
//   <kind>   ::= a kind of SpecKinds(): "bloom" | "blocked_bloom" | "cuckoo"
//              | "ribbon"
//   <option> ::= "seed=" <u64> | "keyed" | "salt" | "by_level"
//              | "size_ratio=" <decimal> | "l0_files=" <int>
//   <cost>   ::= "read_us=" <decimal> | "build_x=" <decimal>
//              | <cand> "_query_ns=" <decimal> | <cand> "_build_ns=" <decimal>
//   <cand>   ::= "bloom" | "blocked_bloom" | "ribbon"
//
// bits_per_key is a decimal number (fractions allowed, "9.5"); the valid
// range depends on the kind (see MinBitsPerKey/MaxBitsPerKey; [1, 64] for
// auto). It names an FPR, that of the spec's filter of 2^20 keys
// (ParamsForSpec): every filter a builder writes for the spec, of any
// number of keys, has an expected FPR at most 1.1 times that. Large filters
// spend bits_per_key bits per key; a small one whose rounding would miss
// that spends the fewest more bytes that keep it, and a dense ribbon
// filter of 16 to 63 keys one spare slot (half the systems to solve as
// it builds; docs/FORMAT.md, "What a spec's bits promise"). Each option
// appears at most once, in any order; size_ratio and l0_files describe the tree of a by_level or auto spec;
// salt excludes seed=; the costs belong to auto, which plans over the tree
// already and so takes no by_level. Examples:
//   "bloom:10"  "blocked_bloom:9.5"  "sstfilter.cuckoo:12"  "bloom:10:seed=7"
//   "blocked_bloom:10:by_level"  "cuckoo:12:by_level:size_ratio=8"
//   "blocked_bloom:10:keyed:salt"  "auto:10"  "auto:10:read_us=100"
//   "auto:10:ribbon_build_ns=80"
//
// Parsing never throws; a bad string yields an InvalidArgument Status whose
// message quotes the string and names the problem.

#ifndef SSTFILTER_SPEC_H_
#define SSTFILTER_SPEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sstfilter/status.h"

namespace sstfilter {

// The kind byte of the binary format (docs/FORMAT.md). Values never change
// meaning once released; new kinds take new values.
enum class FilterKind : uint8_t {
  kEmpty = 0,          // zero keys: never matches
  kBloom = 1,          // standard Bloom, k probes over m bits
  kBlockedBloom = 2,   // all k probes of a key in one 64-byte block
  kCuckoo = 3,         // static cuckoo filter, 4-slot buckets
  kCountingBloom = 4,  // serialized counting Bloom (mutable form)
  kDynamicCuckoo = 5,  // serialized dynamic cuckoo (mutable form)
  kRibbon = 6,         // solution of a GF(2) linear system, near log2(1/FPR)
  kRange = 7,          // range filter (sstfilter/range.h); no point builder
};

// The prefix of the name of every sstfilter policy an engine sees
// ("sstfilter.bloom:10"); optional in a spec.
inline constexpr const char kPolicyPrefix[] = "sstfilter.";

// "empty", "bloom", "blocked_bloom", "cuckoo", "counting_bloom",
// "dynamic_cuckoo", "ribbon", "range", or "unknown".
const char* FilterKindName(FilterKind kind);

// Every kind this version reads, in kind-byte order, kEmpty excluded (the
// range kind with RangeFilterReader, sstfilter/range.h, not FilterReader).
const std::vector<FilterKind>& FilterKinds();
// The kinds a spec may name (those with a builder), in kind-byte order:
// what "every kind" means to tools, benchmarks and tests.
const std::vector<FilterKind>& SpecKinds();
// The kind named `name` (as FilterKindName spells it; not "empty"); false
// for any other name, leaving *kind unchanged.
bool ParseFilterKind(std::string_view name, FilterKind* kind);
// A typical spec of `kind`, the one examples and benchmarks use
// ("ribbon:10"); "" for a kind no spec names.
const char* ExampleSpec(FilterKind kind);

// The defaults of an auto spec's costs (docs/LEVEL_SIZING.md says how they
// were measured): one data-block read from storage, and the build-time
// budget against blocked Bloom.
inline constexpr double kAutoReadMicros = 100;
inline constexpr double kAutoBuildRatio = 8;

struct FilterSpec {
  FilterKind kind = FilterKind::kBlockedBloom;
  double bits_per_key = 10.0;
  // Seed of Hash64 for every key of filters built from this spec; stored in
  // the filter, so readers need not know it.
  uint64_t seed = 0;
  // keyed: hash every key with the application's FilterSecret
  // (sstfilter/secret.h), which the builder then requires. The secret is
  // not part of the spec, nor written anywhere; only its key id is stored.
  bool keyed = false;
  // salt: every filter built draws a fresh random non-zero seed (stored in
  // the filter like seed=), so false positives found against one file do
  // not carry over to its rewrite. Excludes a non-zero seed.
  bool salt = false;

  // by_level (docs/LEVEL_SIZING.md): bits_per_key is the average over an
  // LSM tree, and an engine that tells the builder a table's level
  // (RocksDB) gives each table the bits its level deserves for the fewest
  // false positives per absent lookup (PlanLevelBits, sstfilter/params.h).
  // A builder made from the spec directly, or by an engine that names no
  // level (LevelDB), uses the average. The tree the plan assumes under
  // level compaction (under universal compaction the model's runs each
  // hold twice the keys of the next newer, and L0 (l0_files + 1) / 2
  // files of half the top level):
  bool by_level = false;
  double size_ratio = 10;  // keys of level i+1 / keys of level i, in [2, 1000]
  int l0_files = 4;        // L0 files, together 1/size_ratio of the top level,
                           // in [1, 1000]; RocksDB's compaction trigger

  // auto (docs/LEVEL_SIZING.md, "Cost per Get: auto"): `kind` stays at
  // its default and is not used; each filter is written as the kind among
  // blocked_bloom, bloom and ribbon, and at the bits per key, that give the
  // least expected cost per absent-key Get at bits_per_key on average over
  // the tree (PlanFilterCosts, sstfilter/params.h). The bytes are those of
  // the kind chosen: any reader of this library reads them. Planned over
  // the tree as by_level is, with the same tree options; a builder made
  // from the spec directly, or by an engine that names no level, picks at
  // Finish the kind whose Get costs least at bits_per_key for its keys.
  bool auto_kind = false;
  // The cost of one data-block read that a false positive wastes, in
  // microseconds, in [0, 10^6].
  double read_us = kAutoReadMicros;
  // The filter build time the tree may spend, as a multiple of what
  // blocked Bloom filters of the same memory would take, in [1, 1000].
  double build_x = kAutoBuildRatio;
  // auto's cost of one absent-key probe and of one key built, per
  // candidate kind, in nanoseconds, where the measured defaults
  // (DefaultKindCosts, sstfilter/params.h) do not fit the machine: 0 keeps
  // the default, else within (0, 10^6].
  double bloom_query_ns = 0;
  double bloom_build_ns = 0;
  double blocked_bloom_query_ns = 0;
  double blocked_bloom_build_ns = 0;
  double ribbon_query_ns = 0;
  double ribbon_build_ns = 0;

  // The canonical string, which ParseFilterSpec maps back to an equal spec:
  // "bloom:10", "blocked_bloom:9.5", "cuckoo:12:seed=7",
  // "bloom:10:by_level:size_ratio=8" (tree options only if not default),
  // "ribbon:10:keyed:salt", "auto:10:read_us=20:ribbon_build_ns=80" (costs
  // only if not default). No prefix; numbers are the shortest decimals that
  // read back, never with an exponent ("read_us=0.00001").
  std::string ToString() const;
  // OK if a builder can be made from this spec: a buildable kind,
  // bits_per_key within [MinBitsPerKey(kind), MaxBitsPerKey(kind)], and the
  // tree options within their ranges (and at their defaults unless
  // by_level or auto), the costs within theirs (and at their defaults
  // unless auto), not both salt and a seed, not both auto and by_level.
  Status Validate() const;

  bool operator==(const FilterSpec& o) const {
    return kind == o.kind && bits_per_key == o.bits_per_key && seed == o.seed &&
           keyed == o.keyed && salt == o.salt && by_level == o.by_level &&
           size_ratio == o.size_ratio && l0_files == o.l0_files &&
           auto_kind == o.auto_kind && read_us == o.read_us &&
           build_x == o.build_x && bloom_query_ns == o.bloom_query_ns &&
           bloom_build_ns == o.bloom_build_ns &&
           blocked_bloom_query_ns == o.blocked_bloom_query_ns &&
           blocked_bloom_build_ns == o.blocked_bloom_build_ns &&
           ribbon_query_ns == o.ribbon_query_ns &&
           ribbon_build_ns == o.ribbon_build_ns;
  }
  bool operator!=(const FilterSpec& o) const { return !(*this == o); }
};

// Range of bits_per_key a builder of `kind` accepts. Both are 0 for kinds
// that no builder makes (kEmpty and the mutable forms). An auto spec takes
// [1, 64]: each of its filters gets a kind whose range holds its bits.
double MinBitsPerKey(FilterKind kind);
double MaxBitsPerKey(FilterKind kind);

// Parses `text` (grammar above) into *spec, which then passes Validate(),
// so NewFilterBuilder makes its builder (given a secret if it is keyed).
// On error *spec is unchanged.
Status ParseFilterSpec(std::string_view text, FilterSpec* spec);

}  // namespace sstfilter

#endif  // SSTFILTER_SPEC_H_
