// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The range kind (sstfilter/range.h): its spec, builder and reader. The
// layout is drawn in policy/range/range_impl.h and docs/FORMAT.md:
//
//   payload := low words (u64le) | upper words (u64le) | samples (u32le)
//   params  := u8 len | u16le offset | u8 block_shift | u8 low_bits |
//              u64le universe | u32le count

#include "sstfilter/range.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "policy/format.h"
#include "policy/range/range_impl.h"
#include "policy/spec_parse.h"

namespace sstfilter {
namespace {

using internal::DecodeFixed32;
using internal::DecodeFixed64;

using internal::ParseWhole;

Status RangeBad(std::string_view text, const std::string& why) {
  return internal::SpecError("range filter spec", text, why);
}

// Parses the ":name=value" options after the bits into *out.
Status ParseRangeOptions(std::string_view text, std::string_view rest,
                         RangeFilterSpec* out) {
  internal::SpecOptions options(rest);
  std::string_view option;
  std::string repeated;
  while (options.Next(&option, &repeated)) {
    const size_t eq = option.find('=');
    if (eq == std::string_view::npos) {
      return RangeBad(text, "option \"" + std::string(option) +
                                "\" needs a value (name=value)");
    }
    if (!repeated.empty()) {
      return RangeBad(text, "option \"" + repeated + "\" given twice");
    }
    const std::string name(option.substr(0, eq));
    const std::string_view value = option.substr(eq + 1);
    bool ok = false;
    if (name == "offset") {
      ok = ParseWhole(value, &out->offset);
    } else if (name == "len") {
      ok = ParseWhole(value, &out->len);
    } else if (name == "max_range") {
      ok = ParseWhole(value, &out->max_range);
    } else if (name == "seed") {
      ok = ParseWhole(value, &out->seed);
    } else {
      return RangeBad(text,
                      "unknown option \"" + std::string(option) +
                          "\"; expected offset=, len=, max_range= or seed=");
    }
    if (!ok) {
      return RangeBad(text, name + " \"" + std::string(value) +
                                "\" is not an unsigned integer");
    }
  }
  return Status::OK();
}

// Bit `pos` onwards of the little-endian u64 words at p, shifted down.
inline uint64_t WordFrom(const uint8_t* p, uint64_t pos) {
  return DecodeFixed64(p + 8 * (pos >> 6)) >> (pos & 63);
}

}  // namespace

// ---- spec ----------------------------------------------------------------

std::string RangeFilterSpec::ToString() const {
  const RangeFilterSpec d;
  std::string s = "range:" + internal::FormatDecimal(bits_per_key);
  if (offset != d.offset) s += ":offset=" + std::to_string(offset);
  if (len != d.len) s += ":len=" + std::to_string(len);
  if (max_range != d.max_range) s += ":max_range=" + std::to_string(max_range);
  if (seed != d.seed) s += ":seed=" + std::to_string(seed);
  return s;
}

Status RangeFilterSpec::Validate() const {
  if (!(bits_per_key >= kMinBits && bits_per_key <= kMaxBits)) {
    return Status::InvalidArgument("range bits per key must be within [" +
                                   internal::FormatNumber(kMinBits) + ", " +
                                   internal::FormatNumber(kMaxBits) +
                                   "], got " +
                                   internal::FormatNumber(bits_per_key));
  }
  if (len < 1 || len > 8) {
    return Status::InvalidArgument("len must be within [1, 8] bytes, got " +
                                   std::to_string(len));
  }
  if (offset > kMaxOffset) {
    return Status::InvalidArgument("offset must be at most " +
                                   std::to_string(kMaxOffset) + ", got " +
                                   std::to_string(offset));
  }
  if (max_range < 1 || max_range > internal::kRangeMaxUniverse) {
    return Status::InvalidArgument("max_range must be within [1, 2^62], got " +
                                   std::to_string(max_range));
  }
  return Status::OK();
}

Status ParseRangeFilterSpec(std::string_view text, RangeFilterSpec* spec) {
  std::string_view rest = text;
  constexpr std::string_view kPrefix = "sstfilter.";
  if (rest.substr(0, kPrefix.size()) == kPrefix) {
    rest.remove_prefix(kPrefix.size());
  }
  constexpr std::string_view kKind = "range:";
  if (rest.substr(0, kKind.size()) != kKind) {
    return RangeBad(text, "expected range:<bits_per_key>, e.g. \"range:14\"");
  }
  rest.remove_prefix(kKind.size());
  const std::string_view bits = rest.substr(0, rest.find(':'));
  rest.remove_prefix(bits.size());
  RangeFilterSpec out;
  auto res = std::from_chars(bits.data(), bits.data() + bits.size(),
                             out.bits_per_key, std::chars_format::fixed);
  if (bits.empty() || res.ec != std::errc() ||
      res.ptr != bits.data() + bits.size() ||
      !std::isfinite(out.bits_per_key)) {
    return RangeBad(text, "bits per key \"" + std::string(bits) +
                              "\" is not a decimal number");
  }
  // ParseRangeOptions names the spec in its errors; Validate does not.
  Status s = ParseRangeOptions(text, rest, &out);
  if (!s.ok()) return s;
  s = out.Validate();
  if (!s.ok()) return RangeBad(text, s.message());
  *spec = out;
  return Status::OK();
}

uint64_t KeySegmentImage(std::string_view key, uint32_t offset, uint32_t len) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < len; i++) {
    const size_t at = size_t{offset} + i;
    v = (v << 8) | (at < key.size() ? static_cast<uint8_t>(key[at]) : 0);
  }
  return v;
}

// ---- plan and builder ----------------------------------------------------

namespace {

struct RangePlan {
  uint64_t universe;  // r
  int low_bits;       // l
  int block_shift;    // s
};

// r = n * 2^(B-2) for n distinct images (at least 1): < 2^62 since
// n < 2^32 and B <= 32. l = floor(log2(r / n)) >= 2, 2^s <= r / 2.
RangePlan PlanRange(const RangeFilterSpec& spec, uint64_t distinct) {
  const uint64_t n = std::max<uint64_t>(distinct, 1);
  RangePlan p;
  p.universe = static_cast<uint64_t>(
      std::ceil(static_cast<long double>(n) *
                std::exp2(static_cast<long double>(spec.bits_per_key) - 2)));
  p.low_bits = internal::FloorLog2(p.universe / n);
  p.block_shift = std::min(internal::CeilLog2(spec.max_range),
                           internal::FloorLog2(p.universe) - 1);
  return p;
}

internal::Trailer RangeTrailer(const RangeFilterSpec& spec, const RangePlan& p,
                               uint64_t count, uint64_t payload_size) {
  internal::Trailer t;
  t.kind = FilterKind::kRange;
  t.payload_size = payload_size;
  t.seed = spec.seed;
  t.params[0] = static_cast<uint8_t>(spec.len);
  t.params[1] = static_cast<uint8_t>(spec.offset);
  t.params[2] = static_cast<uint8_t>(spec.offset >> 8);
  t.params[3] = static_cast<uint8_t>(p.block_shift);
  t.params[4] = static_cast<uint8_t>(p.low_bits);
  internal::EncodeFixed64(t.params + 5, p.universe);
  internal::EncodeFixed32(t.params + 13, static_cast<uint32_t>(count));
  t.params_size = internal::kRangeParamsSize;
  return t;
}

}  // namespace

size_t RangeFilterSize(const RangeFilterSpec& spec, uint64_t distinct_images) {
  if (distinct_images > std::numeric_limits<uint32_t>::max()) return 0;
  const RangePlan p = PlanRange(spec, distinct_images);
  const uint64_t payload =
      internal::MakeRangeLayout(distinct_images, p.universe, p.low_bits)
          .PayloadSize();
  return payload +
         internal::TrailerSize(RangeTrailer(spec, p, distinct_images, payload));
}

double RangeFprBound(double bits_per_key, uint64_t range_length) {
  return std::min(
      1.0, static_cast<double>(range_length) / std::exp2(bits_per_key - 2));
}

void RangeFilterBuilder::Finish(std::string* dst) {
  std::vector<uint64_t> v;
  v.swap(images_);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  // A table of 2^32 distinct images or more: no filter, which reads as
  // "may contain" everywhere.
  if (v.size() > std::numeric_limits<uint32_t>::max()) return;
  const RangePlan plan = PlanRange(spec_, v.size());
  const uint64_t universe = plan.universe;
  const int low_bits = plan.low_bits;
  const int block_shift = plan.block_shift;
  for (uint64_t& x : v) {
    x = internal::RangeHash(x, block_shift, spec_.seed, universe);
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());

  const internal::RangeLayout layout =
      internal::MakeRangeLayout(v.size(), universe, low_bits);
  std::vector<uint64_t> low(layout.low_words), upper(layout.upper_words);
  std::vector<uint32_t> samples(layout.groups);
  const uint64_t low_mask = (uint64_t{1} << low_bits) - 1;
  uint64_t group = 0;
  for (uint64_t i = 0; i < v.size(); i++) {
    const uint64_t high = v[i] >> low_bits;
    // Samples of every group up to this hash's count the hashes before it.
    for (; group <= (high >> internal::kRangeGroupShift); group++) {
      samples[group] = static_cast<uint32_t>(i);
    }
    const uint64_t bit = i * low_bits;
    const uint64_t lo = v[i] & low_mask;
    if (low_bits > 0) {
      low[bit >> 6] |= lo << (bit & 63);
      if ((bit & 63) + low_bits > 64)
        low[(bit >> 6) + 1] |= lo >> (64 - (bit & 63));
    }
    const uint64_t pos = high + i;
    upper[pos >> 6] |= uint64_t{1} << (pos & 63);
  }
  for (; group < layout.groups; group++) {
    samples[group] = static_cast<uint32_t>(v.size());
  }

  const size_t start = dst->size();
  dst->resize(start + layout.PayloadSize());
  auto* p = reinterpret_cast<uint8_t*>(&(*dst)[start]);
  for (uint64_t w : low) internal::EncodeFixed64(p, w), p += 8;
  for (uint64_t w : upper) internal::EncodeFixed64(p, w), p += 8;
  for (uint32_t s : samples) internal::EncodeFixed32(p, s), p += 4;

  internal::AppendTrailer(
      RangeTrailer(spec_, plan, v.size(), layout.PayloadSize()), dst);
}

// ---- reader --------------------------------------------------------------

namespace {

// Whether `filter`, whose trailer parses, matches its trailer's check.
bool VerifiedPayload(std::string_view filter) {
  internal::Trailer t;
  const auto* data = reinterpret_cast<const uint8_t*>(filter.data());
  return internal::ParseTrailer(data, filter.size(), &t) &&
         internal::VerifyPayload(data, filter.size(), t);
}

}  // namespace

RangeFilterReader RangeFilterReader::Open(std::string_view filter) {
  RangeFilterReader r = OpenUnverified(filter);
  if (r.valid_ && !VerifiedPayload(filter)) r = RangeFilterReader();
  return r;
}

bool RangeFilterReader::MayContainKeysOnce(
    std::string_view filter, std::string_view lower,
    std::optional<std::string_view> upper) {
  // "May contain" needs no check: damage can only cost a read. An "empty"
  // is given only if the bytes are as written.
  return OpenUnverified(filter).MayContainKeys(lower, upper) ||
         !VerifiedPayload(filter);
}

RangeFilterReader RangeFilterReader::OpenUnverified(std::string_view filter) {
  RangeFilterReader r;
  internal::Trailer t;
  const auto* data = reinterpret_cast<const uint8_t*>(filter.data());
  if (!internal::ParseTrailer(data, filter.size(), &t)) return r;
  if (t.kind != FilterKind::kRange || t.compact || t.keyed ||
      t.params_size != internal::kRangeParamsSize) {
    return r;
  }
  const uint8_t* p = t.params;
  const uint32_t len = p[0];
  const uint32_t offset = p[1] | uint32_t{p[2]} << 8;
  const int block_shift = p[3];
  const int low_bits = p[4];
  const uint64_t universe = DecodeFixed64(p + 5);
  const uint64_t count = DecodeFixed32(p + 13);
  if (len < 1 || len > 8 || universe < 4 ||
      universe >= internal::kRangeMaxUniverse || count > universe ||
      low_bits > internal::FloorLog2(universe) ||
      block_shift > internal::FloorLog2(universe) - 1) {
    return r;
  }
  const internal::RangeLayout layout =
      internal::MakeRangeLayout(count, universe, low_bits);
  if (layout.PayloadSize() != t.payload_size) return r;
  r.valid_ = true;
  r.low_bits_ = static_cast<uint8_t>(low_bits);
  r.block_shift_ = static_cast<uint8_t>(block_shift);
  r.offset_ = offset;
  r.len_ = len;
  r.seed_ = t.seed;
  r.count_ = count;
  r.universe_ = universe;
  r.upper_bits_ = layout.upper_bits;
  r.buckets_ = layout.buckets;
  r.low_ = data;
  r.upper_ = data + 8 * layout.low_words;
  r.samples_ = r.upper_ + 8 * layout.upper_words;
  r.payload_size_ = t.payload_size;
  return r;
}

uint64_t RangeFilterReader::Successor(uint64_t x) const {
  const uint64_t b = x >> low_bits_;
  if (b >= buckets_) return universe_;
  const uint64_t g = b >> internal::kRangeGroupShift;
  uint64_t ones = DecodeFixed32(samples_ + 4 * g);
  if (ones > count_) return x;  // inconsistent: reads as a hit
  // Skip the zeros that end buckets g * 512 .. b - 1.
  uint64_t pos = (g << internal::kRangeGroupShift) + ones;
  uint64_t zeros = b - (g << internal::kRangeGroupShift);
  while (zeros > 0) {
    if (pos >= upper_bits_) return x;
    uint64_t w = ~WordFrom(upper_, pos);
    const uint64_t avail = 64 - (pos & 63);
    if (avail < 64) w &= (uint64_t{1} << avail) - 1;
    const uint64_t z = static_cast<uint64_t>(__builtin_popcountll(w));
    if (z < zeros) {
      zeros -= z;
      pos += avail;
      continue;
    }
    for (; zeros > 1; zeros--) w &= w - 1;
    pos += static_cast<uint64_t>(__builtin_ctzll(w)) + 1;
    zeros = 0;
  }
  if (pos > upper_bits_) return x;
  ones = pos - b;  // pos = b + (hashes before bucket b)
  // The hashes of bucket b, then the first one after it.
  const uint64_t low_mask = (uint64_t{1} << low_bits_) - 1;
  bool in_bucket = true;
  while (pos < upper_bits_) {
    const uint64_t w = WordFrom(upper_, pos);
    if ((w & 1) == 0) {
      if (w == 0) {
        pos += 64 - (pos & 63);
      } else {
        pos += static_cast<uint64_t>(__builtin_ctzll(w));
      }
      in_bucket = false;
      continue;
    }
    if (ones >= count_) return x;
    const uint64_t high = pos - ones;
    uint64_t lo = 0;
    if (low_bits_ > 0) {
      const uint64_t bit = ones * low_bits_;
      lo = WordFrom(low_, bit);
      if ((bit & 63) + low_bits_ > 64) {
        lo |= DecodeFixed64(low_ + 8 * ((bit >> 6) + 1)) << (64 - (bit & 63));
      }
      lo &= low_mask;
    }
    const uint64_t v = high << low_bits_ | lo;
    if (v >= x || !in_bucket) return v;
    ones++;
    pos++;
  }
  return universe_;
}

bool RangeFilterReader::HitsWindow(uint64_t x, uint64_t n) const {
  const uint64_t end = x + n - 1;
  if (end < universe_) return Successor(x) <= end;
  return Successor(x) < universe_ || Successor(0) <= end - universe_;
}

bool RangeFilterReader::MayContain(uint64_t lo, uint64_t hi) const {
  if (!valid_) return true;
  if (lo > hi) return false;
  if (count_ == 0) return false;
  const int s = block_shift_;
  const uint64_t first = lo >> s, last = hi >> s;
  if (last - first >= internal::kRangeMaxBlocks) return true;
  const uint64_t mask = (uint64_t{1} << s) - 1;
  for (uint64_t b = first;; b++) {
    const uint64_t piece_lo = std::max(lo, b << s);
    const uint64_t piece_hi = std::min(hi, (b << s) | mask);
    const uint64_t x = internal::RangeHash(piece_lo, s, seed_, universe_);
    if (HitsWindow(x, piece_hi - piece_lo + 1)) return true;
    if (b == last) return false;
  }
}

bool RangeFilterReader::MayContainKeys(
    std::string_view lower, std::optional<std::string_view> upper) const {
  if (!valid_) return true;
  if (upper.has_value() && !(lower < *upper)) return true;
  if (offset_ > 0) {
    // Images are ordered only among keys that share their first offset_
    // bytes; [lower, upper) keeps to one such prefix iff both bounds do.
    if (!upper.has_value() || lower.size() < offset_ ||
        upper->size() < offset_ ||
        lower.substr(0, offset_) != upper->substr(0, offset_)) {
      return true;
    }
  }
  const uint64_t lo = KeySegmentImage(lower, offset_, len_);
  uint64_t hi = len_ == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * len_)) - 1;
  if (upper.has_value()) {
    hi = KeySegmentImage(*upper, offset_, len_);
    // An upper bound that ends inside the segment on a non-zero byte: every
    // key with its image starts with the whole bound, so is >= it.
    if (upper->size() > offset_ && upper->size() <= size_t{offset_} + len_ &&
        upper->back() != 0) {
      hi--;  // image(upper) > 0 here
    }
  }
  return MayContain(lo, hi);
}

}  // namespace sstfilter
