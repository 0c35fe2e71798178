// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/params.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "policy/plan.h"

namespace sstfilter {

double StandardBloomFpr(double bits_per_key, int num_probes) {
  if (bits_per_key <= 0 || num_probes <= 0) return 1.0;
  const double k = num_probes;
  return std::pow(1.0 - std::exp(-k / bits_per_key), k);
}

int StandardBloomProbes(double bits_per_key) {
  const int k = static_cast<int>(std::lround(bits_per_key * std::log(2.0)));
  return std::clamp(k, 1, 30);
}

double BlockedBloomFpr(double bits_per_key, int num_probes) {
  if (bits_per_key <= 0 || num_probes <= 0) return 1.0;
  constexpr double kBlockBits = 512;
  const double lambda = kBlockBits / bits_per_key;  // mean keys per block
  const double k = num_probes;
  // Sum the Poisson terms within lambda +- 12 standard deviations (+ 40):
  // the tail beyond is below 1e-30.
  const double spread = 12 * std::sqrt(lambda) + 40;
  const int lo = static_cast<int>(std::max(0.0, std::floor(lambda - spread)));
  const int hi = static_cast<int>(std::ceil(lambda + spread));
  double fpr = 0;
  for (int j = lo; j <= hi; j++) {
    const double log_p = -lambda + j * std::log(lambda) - std::lgamma(j + 1.0);
    const double fill = 1.0 - std::pow(1.0 - 1.0 / kBlockBits, j * k);
    fpr += std::exp(log_p) * std::pow(fill, k);
  }
  return std::min(fpr, 1.0);
}

int BlockedBloomProbes(double bits_per_key) {
  int best = 1;
  double best_fpr = BlockedBloomFpr(bits_per_key, 1);
  for (int k = 2; k <= 16; k++) {
    const double f = BlockedBloomFpr(bits_per_key, k);
    if (f < best_fpr) {
      best = k;
      best_fpr = f;
    }
  }
  return best;
}

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

Status ParamsForSpec(const FilterSpec& spec, uint64_t num_keys,
                     FilterParams* out) {
  Status s = spec.Validate();
  if (!s.ok()) return s;
  *out = internal::PlanFilter(spec, num_keys);
  return Status::OK();
}

Status ParamsForFpr(FilterKind kind, uint64_t num_keys, double target_fpr,
                    FilterParams* out) {
  if (!(target_fpr > 0 && target_fpr < 1)) {
    return Status::InvalidArgument("target FPR must be within (0, 1), got " +
                                   std::to_string(target_fpr));
  }
  FilterSpec spec;
  spec.kind = kind;
  spec.bits_per_key = MaxBitsPerKey(kind);
  Status s = spec.Validate();
  if (!s.ok()) return s;
  // Expected FPR is non-increasing in bits per key: bisect on it, in steps
  // of 1/64 bit, for the smallest spec that reaches the target.
  const uint64_t n = std::max<uint64_t>(num_keys, 1);
  auto fpr_at = [&](double bits) {
    FilterSpec t = spec;
    t.bits_per_key = bits;
    return internal::PlanFilter(t, n).expected_fpr;
  };
  double lo = MinBitsPerKey(kind), hi = MaxBitsPerKey(kind);
  if (fpr_at(hi) > target_fpr) {
    return Status::InvalidArgument(std::string(FilterKindName(kind)) +
                                   " cannot reach FPR " +
                                   std::to_string(target_fpr) + " within " +
                                   std::to_string(hi) + " bits per key");
  }
  if (fpr_at(lo) <= target_fpr) hi = lo;
  while (hi - lo > 1.0 / 64) {
    const double mid = (lo + hi) / 2;
    if (fpr_at(mid) <= target_fpr) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  spec.bits_per_key = hi;
  *out = internal::PlanFilter(spec, num_keys);
  return Status::OK();
}

}  // namespace sstfilter
