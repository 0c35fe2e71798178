// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// `sstfilter dedup`: prints each line of stdin the first time it is
// (probably) seen, as a crawler's URL filter does, in memory proportional
// to the number of distinct lines rather than their length.
//
// A line the filters say they may have seen is dropped: a new line is
// dropped by mistake (a false positive) with probability at most the
// target FPR, however many lines come. A line is never printed twice:
// every printed line is inserted first.
//
// The filters form a chain, as scalable Bloom filters do: the first is
// sized for --expect lines at FPR fpr/2; when the newest one holds the
// lines it was sized for, a new one twice as large at half its FPR is
// added, so the FPRs sum to less than fpr (a new line passes the chain
// only if it passes some filter). Lines are inserted into the newest
// filter, and looked up in all.

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

// The lines seen so far: a chain of filters of one mutable kind. Filter i
// holds up to expect * 2^i lines at FPR fpr / 2^(i+1).
class Seen {
 public:
  Seen(bool cuckoo, uint64_t expect, double fpr)
      : cuckoo_(cuckoo), expect_(expect), fpr_(fpr) {}

  // Adds the next filter of the chain; an error says why it cannot be made
  // (its memory or FPR is beyond what a filter takes).
  Status Grow() {
    const size_t i = stages();
    if (i >= 40 || (expect_ << i) >> i != expect_) {
      return Status::InvalidArgument("more than 2^" + std::to_string(i) +
                                     " times --expect lines");
    }
    MutableFilterOptions o;
    o.capacity = expect_ << i;
    o.target_fpr = fpr_ / static_cast<double>(uint64_t{1} << (i + 1));
    Status s;
    if (cuckoo_) {
      DynamicCuckooFilter f;
      s = DynamicCuckooFilter::Create(o, &f);
      if (s.ok()) cuckoos_.push_back(std::move(f));
    } else {
      CountingBloomFilter f;
      s = CountingBloomFilter::Create(o, &f);
      if (s.ok()) blooms_.push_back(std::move(f));
    }
    if (s.ok()) {
      capacity_ = o.capacity;
      newest_size_ = 0;
    }
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

  // Inserts into the newest filter, first adding a new one when it holds
  // the lines it was sized for (a counting Bloom filter) or has no room
  // left (a cuckoo filter, which fills at about that many).
  Status Insert(uint64_t h) {
    Status s;
    if (!cuckoo_) {
      if (newest_size_ == capacity_) s = Grow();
      if (!s.ok()) return s;
      blooms_.back().InsertHash(h);
    } else if (!cuckoos_.back().InsertHash(h)) {
      s = Grow();
      if (s.ok() && !cuckoos_.back().InsertHash(h)) {
        s = Status::NotSupported("a new, empty cuckoo filter refused a key");
      }
      if (!s.ok()) return s;
    }
    newest_size_++;
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
  uint64_t capacity_ = 0;     // lines the newest filter is sized for
  uint64_t newest_size_ = 0;  // lines inserted into it
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
      std::fflush(stdout);
      std::fprintf(stderr,
                   "sstfilter: dedup: stopped at line %llu (%llu lines "
                   "printed, in %zu filters): no filter can be added for "
                   "more lines: %s; the rest of the input is not read\n",
                   static_cast<unsigned long long>(read),
                   static_cast<unsigned long long>(printed), seen.stages(),
                   s.message().c_str());
      return 1;
    }
    line.push_back('\n');
    std::fwrite(line.data(), 1, line.size(), stdout);
    printed++;
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "dedup: %llu lines read, %llu printed, %llu dropped as seen "
               "(%s, %zu filter%s, %llu bytes; target FPR %g: at most about "
               "that share of new lines is dropped by mistake)\n",
               static_cast<unsigned long long>(read),
               static_cast<unsigned long long>(printed),
               static_cast<unsigned long long>(read - printed),
               cuckoo ? "dynamic_cuckoo" : "counting_bloom", seen.stages(),
               seen.stages() == 1 ? "" : "s",
               static_cast<unsigned long long>(seen.bytes()), fpr);
  if (seen.stages() > 1) {
    std::fprintf(stderr,
                 "dedup: the input outgrew --expect=%llu: %llu lines printed, "
                 "held in %zu chained filters, each sized for twice the "
                 "lines of the last at half its FPR: the target FPR %g holds\n",
                 static_cast<unsigned long long>(expect),
                 static_cast<unsigned long long>(printed), seen.stages(), fpr);
  }
  return std::ferror(stdout) ? 1 : 0;
}

}  // namespace tool
}  // namespace sstfilter
