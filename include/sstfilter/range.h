// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Range filters: "may a key of this set lie in [lo, hi]?", so that a scan
// can skip a table whose keys all lie outside its range.
//
//   sstfilter::RangeFilterSpec spec;
//   sstfilter::Status s = sstfilter::ParseRangeFilterSpec(
//       "range:14:offset=0:len=8:max_range=16", &spec);
//   sstfilter::RangeFilterBuilder builder(spec);   // after s.ok()
//   builder.AddKey("apple");
//   builder.AddKey("banana");
//   std::string bytes;
//   builder.Finish(&bytes);                        // appends
//   auto reader = sstfilter::RangeFilterReader::Open(bytes);
//   reader.MayContainKeys("apple", "apricot");    // true: holds "apple"
//   reader.MayContainKeys("c", "d");              // false, except with
//                                                 // P <= FPR below
//
// The filter works on the key's segment image (KeySegmentImage): the
// `len` bytes of the key from byte `offset` on, read as a big-endian
// integer, bytes past the key's end read as zero. For keys that share
// their first `offset` bytes the image never decreases as keys grow in
// bytewise order, so the keys of [lower, upper) have images in
// [image(lower), image(upper)]. Keys with equal images are one entry.
//
// Construction (Grafite, Costa et al., SIGMOD 2024; docs/FORMAT.md, kind
// 7): each distinct image x is hashed into a universe of r = n * 2^(B-2)
// values by h(x) = (q(x >> s) + (x mod 2^s)) mod r, q a seeded hash of
// the block x >> s, which keeps order inside each block of 2^s images; the
// sorted hashes are stored in Elias-Fano form (about B bits per distinct
// image). A range of images is answered as at most 16 block pieces, each
// one successor query; a range over more blocks reads "may contain". For
// an image range of length l (hi - lo + 1) holding no key, with l at most
// 15 * max_range + 1, the probability of "may contain" is at most
// l / 2^(B-2); it never answers "empty" for a range that holds an added
// key.
//
// Bytes that are empty, truncated, of another kind or trailer form, or that
// fail a size check or the check over their bytes read as a filter that
// may contain every range.

#ifndef SSTFILTER_RANGE_H_
#define SSTFILTER_RANGE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sstfilter/status.h"

namespace sstfilter {

//   <range_spec> ::= ["sstfilter."] "range:" <bits_per_key> (":" <option>)*
//   <option>     ::= "offset=" <int> | "len=" <int> | "max_range=" <u64>
//                  | "seed=" <u64>
//
// Each option at most once, in any order. Examples: "range:14",
// "range:16:offset=4:len=8:max_range=256".
struct RangeFilterSpec {
  // B: bits per distinct image, in [kMinBits, kMaxBits]; fractions allowed.
  double bits_per_key = 14.0;
  uint32_t offset = 0;  // first byte of the segment, at most kMaxOffset
  uint32_t len = 8;     // bytes of the segment, 1..8
  // Image ranges of up to max_range values cost one or two successor
  // queries (block size: max_range rounded up to a power of two, capped
  // at r / 2). A range spanning more than 16 blocks reads "may contain"
  // whatever the keys, so the FPR bound (RangeFprBound) holds only for
  // ranges of at most 15 * max_range + 1 images: such a range spans at
  // most 16 blocks, or, where the cap applies, is so long that the bound
  // is 1. A longer range may read "may contain" far above the bound, up
  // to always.
  uint64_t max_range = 4096;  // in [1, 2^62]
  uint64_t seed = 0;          // of the block hash q; stored in the filter

  static constexpr double kMinBits = 4;
  static constexpr double kMaxBits = 32;
  static constexpr uint32_t kMaxOffset = 65535;

  // Canonical: "range:14" plus every option not at its default, in the
  // grammar's order; ParseRangeFilterSpec maps it back to an equal spec.
  std::string ToString() const;
  Status Validate() const;

  bool operator==(const RangeFilterSpec& o) const {
    return bits_per_key == o.bits_per_key && offset == o.offset &&
           len == o.len && max_range == o.max_range && seed == o.seed;
  }
  bool operator!=(const RangeFilterSpec& o) const { return !(*this == o); }
};

// Parses `text` into *spec (which then passes Validate()). On error *spec
// is unchanged and the InvalidArgument Status quotes the text.
Status ParseRangeFilterSpec(std::string_view text, RangeFilterSpec* spec);

// The segment image of `key`: key bytes [offset, offset + len) as a
// big-endian integer of len bytes, missing bytes read as 0.
// REQUIRES: 1 <= len <= 8.
uint64_t KeySegmentImage(std::string_view key, uint32_t offset, uint32_t len);

// The largest upper bound, on the reader's side: MayContainKeys(lower,
// kNoUpperBound) asks about every key >= lower.
inline constexpr std::optional<std::string_view> kNoUpperBound = std::nullopt;

// The size in bytes of the filter `spec` writes for `distinct_images`
// distinct images (assuming distinct hashes, the usual case; colliding
// hashes only shrink it); 0 for more than 2^32 - 1.
size_t RangeFilterSize(const RangeFilterSpec& spec, uint64_t distinct_images);

// The bound on the FPR of an empty range of `range_length` images:
// min(1, range_length / 2^(bits_per_key - 2)). It holds for ranges of at
// most 15 * max_range + 1 images; longer ones may span more than 16
// blocks of the filter and then read "may contain" (see max_range).
double RangeFprBound(double bits_per_key, uint64_t range_length);

// The user-collected table property under which RocksDB's range collector
// stores a table's range filter (sstfilter/rocksdb.h).
inline constexpr const char kRangePropertyName[] = "sstfilter.range";

// Collects the images of a set of keys, then encodes their range filter.
// Grammar of calls: ((AddKey | AddImage)* Finish)*. Keys in any order,
// repeated or empty. Memory: 8 bytes per key added until Finish.
class RangeFilterBuilder {
 public:
  // REQUIRES: spec.Validate().ok().
  explicit RangeFilterBuilder(const RangeFilterSpec& spec) : spec_(spec) {}

  void AddKey(std::string_view key) {
    AddImage(KeySegmentImage(key, spec_.offset, spec_.len));
  }
  void AddImage(uint64_t image) { images_.push_back(image); }
  // Images added since the last Finish, repeats included.
  size_t NumAdded() const { return images_.size(); }

  // Appends the filter to *dst, never touching the bytes already there,
  // and empties the builder.
  void Finish(std::string* dst);

  const RangeFilterSpec& spec() const { return spec_; }

 private:
  RangeFilterSpec spec_;
  std::vector<uint64_t> images_;
};

// A read-only view over one range filter's bytes: small, copyable, never
// allocates; the bytes must outlive it. Thread-safe.
class RangeFilterReader {
 public:
  // A reader that may contain every range.
  RangeFilterReader() = default;

  // Validates the trailer, the sizes it implies and (bytes written since
  // format version 4) the check over the payload, which reads every byte
  // once; anything else gives a reader that may contain every range.
  static RangeFilterReader Open(std::string_view filter);

  // Open(filter).MayContainKeys(lower, upper) for one range, reading the
  // whole filter only when the answer would be "no" (to check it): for
  // callers that keep no reader (the RocksDB range scan's table filter).
  static bool MayContainKeysOnce(std::string_view filter,
                                 std::string_view lower,
                                 std::optional<std::string_view> upper);

  // False only if no added image lies in [lo, hi] (inclusive). True for
  // lo > hi never: an empty interval holds no key.
  bool MayContain(uint64_t lo, uint64_t hi) const;

  // False only if no added key k has lower <= k < upper (bytewise order);
  // no upper bound with kNoUpperBound. Where the keys of the range need
  // not share the first `offset` bytes (offset > 0 and lower, upper
  // differ there), or lower >= upper, it answers true.
  bool MayContainKeys(std::string_view lower,
                      std::optional<std::string_view> upper) const;

  // What Open found; valid() is false for bytes it could not read.
  bool valid() const { return valid_; }
  uint32_t offset() const { return offset_; }
  uint32_t len() const { return len_; }
  uint64_t seed() const { return seed_; }
  uint64_t num_entries() const { return count_; }   // distinct hashes
  uint64_t universe() const { return universe_; }   // r
  int block_shift() const { return block_shift_; }  // s
  size_t payload_size() const { return payload_size_; }

 private:
  // Open without the payload check.
  static RangeFilterReader OpenUnverified(std::string_view filter);
  // Smallest stored hash >= x, or universe_ if none; a value > universe_
  // if the payload is inconsistent (then the caller answers true).
  uint64_t Successor(uint64_t x) const;
  // Whether a stored hash lies in [x, x + n - 1] taken mod universe_.
  bool HitsWindow(uint64_t x, uint64_t n) const;

  bool valid_ = false;
  uint8_t low_bits_ = 0;
  uint8_t block_shift_ = 0;
  uint32_t offset_ = 0;
  uint32_t len_ = 0;
  uint64_t seed_ = 0;
  uint64_t count_ = 0;
  uint64_t universe_ = 0;
  uint64_t upper_bits_ = 0;  // count_ + buckets
  uint64_t buckets_ = 0;
  const uint8_t* low_ = nullptr;      // count_ * low_bits_ bits
  const uint8_t* upper_ = nullptr;    // upper_bits_ bits
  const uint8_t* samples_ = nullptr;  // u32le per group of buckets
  size_t payload_size_ = 0;
};

}  // namespace sstfilter

#endif  // SSTFILTER_RANGE_H_
