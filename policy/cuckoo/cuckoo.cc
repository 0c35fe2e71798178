// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The static cuckoo filter (kind 3): sizing, construction and its builder.
// The hot code is in cuckoo_impl.h; the format in docs/FORMAT.md.
//
// Construction never fails and never loses a key. Hashes are inserted in
// batches whose buckets are prefetched first; a tag already present in one
// of its buckets is skipped (repeated keys are stored once). If a random
// walk runs out of kicks, the table is rebuilt with the next salt (fresh
// buckets and tags for every hash, which a builder fed only hashes can still
// compute), then with ~3% more buckets, and as a last resort the hashes are
// written as a blocked Bloom filter of the same payload size, which readers
// recognise from its trailer.

#include "policy/cuckoo/cuckoo.h"

#include <algorithm>
#include <cmath>

#include "policy/bloom_fallback.h"
#include "policy/cuckoo/cuckoo_impl.h"
#include "policy/format.h"
#include "sstfilter/params.h"

namespace sstfilter {

// The cuckoo kinds' FPR and fingerprint formulas (sstfilter/params.h).

double CuckooFpr(int fingerprint_bits, double load) {
  if (fingerprint_bits <= 0 || load <= 0) return load <= 0 ? 0.0 : 1.0;
  const double tags = std::ldexp(1.0, fingerprint_bits) - 1;  // 2^f - 1
  // log1p/expm1 keep the result exact for large f, where 1/tags ~ 1e-10.
  return -std::expm1(8.0 * load * std::log1p(-1.0 / tags));
}

int CuckooFingerprintBits(double bits_per_key) {
  if (!(bits_per_key > 4)) return 4;
  if (bits_per_key >= 32) return 32;
  return static_cast<int>(std::lround(bits_per_key));
}

namespace internal {
namespace {

// Inserts every hash into the zeroed table of `buckets` buckets (and
// kCuckooSlack bytes of slack) at `data`, with `salt`; false as soon as
// one insertion runs out of kicks.
bool FillTable(const HashList& hashes, int f, uint64_t buckets, uint32_t salt,
               int max_kicks, std::vector<CuckooMove>* moves, uint8_t* data) {
  uint64_t rng = Mix64(hashes.size() ^ (uint64_t{salt} << 56));
  return WithTagBits(f, [&](auto F) {
    CuckooTable<F()> table(data, buckets, moves);
    return InBatches(
        hashes.size(),
        [&](size_t i) {
          const CuckooLoc loc = table.Locate(hashes[i], salt);
          table.Prefetch(loc);
          return loc;
        },
        [&](size_t, const CuckooLoc& loc) {
          return table.Insert(loc, /*skip_present=*/true, max_kicks, &rng);
        });
  });
}

void AppendCuckooTrailer(uint64_t payload, const FilterSpec& spec, int f,
                         uint32_t salt, std::string* dst) {
  Trailer t;
  t.kind = FilterKind::kCuckoo;
  t.payload_size = payload;
  SetTrailerHashing(spec, &t);
  t.params[0] = static_cast<uint8_t>(f);
  t.params[1] = static_cast<uint8_t>(salt);
  t.params_size = 2;
  AppendTrailer(t, dst);
}

// The cuckoo table for n > 0 keys.
KindPlan PlanCuckooTable(const FilterSpec& spec, uint64_t n) {
  KindPlan plan = StartPlan(spec, n);
  FilterParams& p = plan.params;
  const int f = CuckooFingerprintBits(spec.bits_per_key);
  const uint64_t buckets = CuckooBucketsFor(n);
  p.kind = FilterKind::kCuckoo;
  p.fingerprint_bits = f;
  p.expected_fpr =
      CuckooFpr(f, static_cast<double>(n) /
                       (kCuckooSlots * static_cast<double>(buckets)));
  plan.payload_bytes = CuckooPayloadBytes(buckets, f);
  plan.kind_params_size = 2;  // f, salt
  plan.first_param = static_cast<uint8_t>(f);
  return plan;
}

// PlanCuckoo without the padding that keeps FilterSize non-decreasing.
KindPlan PlanCuckooAlone(const FilterSpec& spec, uint64_t n) {
  const KindPlan plan = PlanCuckooTable(spec, n);
  const FilterParams& p = plan.params;
  if (plan.payload_bytes >= kMinBlockedPayload) return plan;

  // Small filters: bucket rounding and the trailer weigh more, and a
  // standard Bloom filter may reach the same FPR in fewer bytes. Scan the
  // Bloom sizes from just under the optimum up to the cuckoo's own total
  // size. (Up to the total, not the payload: a Bloom filter whose smaller
  // trailer leaves it more payload must be found too, or FilterSize would
  // drop from a cuckoo filter at n - 1 keys to a smaller Bloom filter at n.)
  const uint64_t cuckoo_total = PlannedFilterBytes(plan, spec);
  const double optimum = n * StandardBloomOptimumBits(p.expected_fpr) / 8;
  uint64_t bytes = std::max<uint64_t>(1, static_cast<uint64_t>(optimum));
  // A Bloom payload of `bytes` takes at least bytes + kCompactTrailerSize.
  for (; bytes + kCompactTrailerSize <= cuckoo_total; bytes++) {
    // (The standard Bloom formula is cheap, unlike the blocked one.)
    KindPlan bloom = PlanBloomFamily(
        BloomSpecForBytes(FilterKind::kBloom, bytes, n, spec), n,
        /*with_fpr=*/true);
    if (bloom.payload_bytes == bytes &&
        PlannedFilterBytes(bloom, spec) <= cuckoo_total &&
        bloom.params.expected_fpr <= p.expected_fpr) {
      bloom.params.bits_per_key = spec.bits_per_key;
      return bloom;
    }
  }
  return plan;
}

// A Bloom filter written for a cuckoo spec is the smallest that reaches
// the cuckoo filter's FPR, which rises with n between bucket counts, and
// its trailer is 4 bytes larger from k = 16 probes on (no compact form):
// so it can be smaller than the filter for a key fewer. It is then padded
// to that size (the smallest Bloom filter of at least that many bytes, or
// the cuckoo table), filter sizes being followed from kCuckooSizeWindow
// keys back (measured: every such drop recovers within 3 keys;
// tests/filter_size_test.cc checks every n up to 10^5 on a fine grid of
// bits per key).
constexpr uint64_t kCuckooSizeWindow = 8;

// `plan` for n keys, or if it is a Bloom filter of fewer than `floor`
// bytes, the smallest filter of at least `floor` bytes.
KindPlan AtLeast(const KindPlan& plan, uint64_t floor, const FilterSpec& spec,
                 uint64_t n) {
  if (plan.params.kind != FilterKind::kBloom ||
      PlannedFilterBytes(plan, spec) >= floor) {
    return plan;
  }
  const KindPlan table = PlanCuckooTable(spec, n);
  for (uint64_t total = floor; total < PlannedFilterBytes(table, spec);
       total++) {
    const FilterSpec bloom = BloomSpecOfTotal(total, n, spec);
    KindPlan padded = PlanBloomFamily(bloom, n, /*with_fpr=*/true);
    if (PlannedFilterBytes(padded, bloom) == total) {
      padded.params.bits_per_key = spec.bits_per_key;
      return padded;
    }
  }
  return table;  // at least as large as any filter for fewer keys
}

}  // namespace

KindPlan PlanCuckoo(const FilterSpec& spec, uint64_t n) {
  if (n == 0) return StartPlan(spec, n);
  KindPlan plan = PlanCuckooAlone(spec, n);
  if (plan.params.kind != FilterKind::kBloom) return plan;
  uint64_t floor = 0;
  for (uint64_t m = n > kCuckooSizeWindow ? n - kCuckooSizeWindow : 1; m < n;
       m++) {
    floor = PlannedFilterBytes(
        AtLeast(PlanCuckooAlone(spec, m), floor, spec, m), spec);
  }
  return AtLeast(plan, floor, spec, n);
}

void AppendCuckooFilter(const FilterSpec& spec, const HashList& hashes,
                        std::string* dst, const CuckooBuildOptions& options,
                        CuckooBuildStats* stats) {
  CuckooBuildStats local;
  if (stats == nullptr) stats = &local;
  *stats = CuckooBuildStats();
  const uint64_t n = hashes.size();
  const KindPlan plan = PlanCuckoo(spec, n);
  if (plan.params.kind == FilterKind::kEmpty) {
    stats->kind = FilterKind::kEmpty;
    AppendEmptyFilter(spec, dst);
    return;
  }
  if (plan.params.kind == FilterKind::kBloom) {
    stats->kind = FilterKind::kBloom;
    AppendBloomFamilyFilter(
        BloomSpecForBytes(FilterKind::kBloom, plan.payload_bytes, n, spec),
        hashes, dst);
    return;
  }

  const int f = plan.params.fingerprint_bits;
  const uint64_t base_buckets = CuckooBucketsFor(n);
  const size_t start = dst->size();
  const int salts = std::clamp(options.salts_per_size, 1, 64);
  const int growths = std::clamp(options.growths, 0, 3);
  std::vector<CuckooMove> moves;
  for (int growth = 0; growth <= growths; growth++) {
    const uint64_t buckets =
        base_buckets + growth * std::max<uint64_t>(1, base_buckets / 32);
    const uint64_t payload = CuckooPayloadBytes(buckets, f);
    for (int s = 0; s < salts; s++) {
      const uint32_t salt = static_cast<uint32_t>(growth * salts + s);
      stats->attempts++;
      dst->resize(start);
      dst->resize(start + payload + kCuckooSlack);  // zero-filled
      uint8_t* data = reinterpret_cast<uint8_t*>(&(*dst)[start]);
      if (!FillTable(hashes, f, buckets, salt, options.max_kicks, &moves,
                     data)) {
        continue;
      }
      dst->resize(start + payload);  // drop the slack (still zero)
      AppendCuckooTrailer(payload, spec, f, salt, dst);
      stats->kind = FilterKind::kCuckoo;
      stats->num_buckets = buckets;
      return;
    }
  }
  // Every table ran out of kicks: a blocked Bloom of the same budget.
  dst->resize(start);
  stats->kind = FilterKind::kBlockedBloom;
  AppendBloomFamilyFilter(
      BloomSpecForBytes(FilterKind::kBlockedBloom, plan.payload_bytes, n, spec),
      hashes, dst);
}

namespace {

class CuckooBuilder final : public HashListBuilder {
 public:
  explicit CuckooBuilder(const FilterSpec& spec) : HashListBuilder(spec) {}

  // Drops a hash equal to one of the two added just before it, or to the
  // last kept hash that shares its top 6 bits (a direct-mapped cache of
  // 64): engines repeat keys and prefixes close together (RocksDB: prefix,
  // key, prefix, key...), and a cuckoo table must be sized for distinct
  // keys. A repeat that gets through costs a little load, nothing else:
  // the table stores it once.
  void AddHash(uint64_t hash) override {
    const bool repeat = (num_added_ >= 1 && prev1_ == hash) ||
                        (num_added_ >= 2 && prev2_ == hash);
    prev2_ = prev1_;
    prev1_ = hash;
    num_added_++;
    if (repeat) return;
    const unsigned i = static_cast<unsigned>(hash >> 58);
    if (((recent_valid_ >> i) & 1) != 0 && recent_[i] == hash) return;
    recent_[i] = hash;
    recent_valid_ |= uint64_t{1} << i;
    hashes_.push_back(hash);
  }

  void Finish(std::string* dst) override {
    const size_t start = dst->size();
    AppendCuckooFilter(FilterSpecNow(), hashes_, dst);
    EndFilter(start, dst);
    hashes_.clear();
    recent_valid_ = 0;
    num_added_ = 0;
  }

 private:
  uint64_t prev1_ = 0, prev2_ = 0;  // the last two hashes added
  uint64_t num_added_ = 0;
  uint64_t recent_[64];
  uint64_t recent_valid_ = 0;  // bit i: recent_[i] holds a hash
};

}  // namespace

std::unique_ptr<FilterBuilder> NewCuckooBuilder(const FilterSpec& spec) {
  return std::make_unique<CuckooBuilder>(spec);
}

}  // namespace internal
}  // namespace sstfilter
