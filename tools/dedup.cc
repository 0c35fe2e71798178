// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// `sstfilter dedup`: prints each line of stdin the first time it is
// (probably) seen, as a crawler's URL filter does, in memory proportional
// to the number of distinct lines rather than their length.
//
// A line the filter says it may have seen is dropped: with probability
// about the FPR that line was in fact new (a false positive). A line is
// never printed twice: every printed line is inserted first, and a dynamic
// cuckoo filter that fills up is chained to a new, larger one instead of
// refusing the insert.

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "sstfilter/hash.h"
#include "sstfilter/mutable.h"
#include "sstfilter/params.h"
#include "tools/commands.h"

namespace sstfilter {
namespace tool {
namespace {

// The lines seen so far. Dynamic cuckoo filters are chained as each fills:
// stage i holds 2^i * expect lines at FPR fpr / 2^i, so the chain's FPR
// stays below 2 * fpr however far the input outgrows --expect (the rule of
// scalable Bloom filters). A counting Bloom filter is one stage.
class Seen {
 public:
  Seen(bool cuckoo, uint64_t expect, double fpr)
      : cuckoo_(cuckoo), expect_(expect), fpr_(fpr) {}

  Status Grow() {
    MutableFilterOptions o;
    const size_t stage = cuckoo_ ? cuckoos_.size() : blooms_.size();
    o.capacity = expect_ << stage;
    o.target_fpr = fpr_ / static_cast<double>(uint64_t{1} << stage);
    if (cuckoo_) {
      cuckoos_.emplace_back();
      Status s = DynamicCuckooFilter::Create(o, &cuckoos_.back());
      if (!s.ok()) cuckoos_.pop_back();
      return s;
    }
    blooms_.emplace_back();
    Status s = CountingBloomFilter::Create(o, &blooms_.back());
    if (!s.ok()) blooms_.pop_back();
    return s;
  }

  bool Contains(uint64_t h) const {
    for (const DynamicCuckooFilter& f : cuckoos_) {
      if (f.ContainsHash(h)) return true;
    }
    for (const CountingBloomFilter& f : blooms_) {
      if (f.ContainsHash(h)) return true;
    }
    return false;
  }

  // Inserts into the newest filter, chaining a new one when it is full. A
  // counting Bloom filter never refuses: past --expect its FPR grows.
  Status Insert(uint64_t h) {
    if (!cuckoo_) {
      blooms_.back().InsertHash(h);
      return Status::OK();
    }
    if (cuckoos_.back().InsertHash(h)) return Status::OK();
    Status s = Grow();
    if (s.ok() && !cuckoos_.back().InsertHash(h)) {
      s = Status::NotSupported("a new, empty cuckoo filter refused a key");
    }
    return s;
  }

  size_t stages() const { return cuckoo_ ? cuckoos_.size() : blooms_.size(); }
  // Memory of the filters' tables.
  uint64_t bytes() const {
    uint64_t bits = 0;
    for (const DynamicCuckooFilter& f : cuckoos_) {
      bits += f.num_slots() * static_cast<uint64_t>(f.fingerprint_bits());
    }
    for (const CountingBloomFilter& f : blooms_) bits += 4 * f.num_counters();
    return (bits + 7) / 8;
  }

 private:
  const bool cuckoo_;
  const uint64_t expect_;
  const double fpr_;
  std::vector<DynamicCuckooFilter> cuckoos_;
  std::vector<CountingBloomFilter> blooms_;
};

}  // namespace

int Dedup(uint64_t expect, double fpr, const std::string& kind) {
  if (!kind.empty() && kind != "dynamic_cuckoo" && kind != "counting_bloom") {
    std::fprintf(stderr,
                 "sstfilter: dedup --kind must be dynamic_cuckoo (the "
                 "default) or counting_bloom, got \"%s\"\n",
                 kind.c_str());
    return kUsageError;
  }
  const bool cuckoo = kind != "counting_bloom";
  Seen seen(cuckoo, expect, fpr);
  Status s = seen.Grow();
  if (!s.ok()) {
    std::fprintf(stderr, "sstfilter: %s\n", s.ToString().c_str());
    return kUsageError;
  }

  std::ios::sync_with_stdio(false);
  std::string line;
  uint64_t read = 0, printed = 0;
  while (std::getline(std::cin, line)) {
    read++;
    const uint64_t h = Hash64(line);
    if (seen.Contains(h)) continue;  // seen before, or a false positive
    s = seen.Insert(h);
    if (!s.ok()) {
      std::fprintf(stderr, "sstfilter: dedup: %s\n", s.ToString().c_str());
      return 1;
    }
    line.push_back('\n');
    std::fwrite(line.data(), 1, line.size(), stdout);
    printed++;
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "dedup: %llu lines read, %llu printed, %llu dropped as seen "
               "(%s, %zu filter%s, %llu bytes; target FPR %g: about that "
               "share of new lines is dropped by mistake)\n",
               static_cast<unsigned long long>(read),
               static_cast<unsigned long long>(printed),
               static_cast<unsigned long long>(read - printed),
               cuckoo ? "dynamic_cuckoo" : "counting_bloom", seen.stages(),
               seen.stages() == 1 ? "" : "s",
               static_cast<unsigned long long>(seen.bytes()), fpr);
  if (seen.stages() > 1) {
    std::fprintf(stderr,
                 "dedup: the input outgrew --expect=%llu: %zu chained "
                 "filters, FPR below %g\n",
                 static_cast<unsigned long long>(expect), seen.stages(),
                 2 * fpr);
  }
  if (!cuckoo && printed > expect) {
    std::fprintf(stderr,
                 "dedup: warning: %llu distinct lines exceed --expect=%llu; "
                 "the counting Bloom filter's FPR is above target\n",
                 static_cast<unsigned long long>(printed),
                 static_cast<unsigned long long>(expect));
  }
  return std::ferror(stdout) ? 1 : 0;
}

}  // namespace tool
}  // namespace sstfilter
