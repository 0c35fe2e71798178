// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// A minimal sorted-file store that embeds sstfilter the way LevelDB does:
// one small filter per data block. A lookup finds the one block that could
// hold its key, asks that block's filter, and reads the block from disk only
// if the filter says "may match". A tutorial; block_store_demo.cc runs it.
//
// File (u32 = little-endian 32 bits; an example, not a format to keep):
//   block* filter* index footer         (filters in the order of blocks)
//   block  := (u32 key_len, key, u32 value_len, value)*
//   index  := per block: u32 size, u32 filter_size, u32 key_len, last_key
//   footer := u32 filters_offset, u32 index_offset

#ifndef SSTFILTER_EXAMPLES_BLOCK_STORE_H_
#define SSTFILTER_EXAMPLES_BLOCK_STORE_H_

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sstfilter/filter.h"
#include "sstfilter/spec.h"

namespace block_store {

inline void PutU32(std::string* dst, size_t v) {
  for (int i = 0; i < 4; i++) dst->push_back(static_cast<char>(v >> (8 * i)));
}
inline void PutBytes(std::string* dst, std::string_view s) {
  PutU32(dst, s.size());
  dst->append(s);
}
// Get*: decode at *pos and advance; false if `in` ends first.
inline bool GetU32(std::string_view in, size_t* pos, uint32_t* v) {
  if (in.size() - *pos < 4) return false;
  *v = 0;
  for (int i = 0; i < 4; i++) *v |= uint32_t{uint8_t(in[*pos + i])} << (8 * i);
  *pos += 4;
  return true;
}
inline bool GetBytes(std::string_view in, size_t* pos, std::string_view* s) {
  uint32_t n;
  if (!GetU32(in, pos, &n) || in.size() - *pos < n) return false;
  *s = in.substr(*pos, n);
  *pos += n;
  return true;
}

// Writes one store file. Calls: Open Add* Finish, keys strictly increasing.
class Writer {
 public:
  // `spec` is an sstfilter spec, e.g. "bloom:10"; a bad one is an error.
  sstfilter::Status Open(const std::string& path, const std::string& spec,
                         size_t block_bytes = 4096) {
    sstfilter::FilterSpec parsed;
    sstfilter::Status s = sstfilter::ParseFilterSpec(spec, &parsed);
    if (s.ok()) s = sstfilter::NewFilterBuilder(parsed, &builder_);
    if (s.ok()) out_.open(path, std::ios::binary | std::ios::trunc);
    block_bytes_ = block_bytes;
    return s;
  }

  void Add(std::string_view key, std::string_view value) {
    PutBytes(&block_, key);
    PutBytes(&block_, value);
    builder_->AddKey(key);  // the current block's filter learns the key
    last_key_ = key;
    if (block_.size() >= block_bytes_) FlushBlock();
  }

  bool Finish() {  // false if the file could not be written
    FlushBlock();
    std::string tail = filters_ + index_;
    PutU32(&tail, offset_);  // the filters follow the last block
    PutU32(&tail, offset_ + filters_.size());
    out_.write(tail.data(), static_cast<std::streamsize>(tail.size()));
    out_.close();
    return !out_.fail();
  }

 private:
  void FlushBlock() {
    if (block_.empty()) return;
    const size_t filter_start = filters_.size();
    builder_->Finish(&filters_);  // appends the block's filter; resets
    PutU32(&index_, block_.size());
    PutU32(&index_, filters_.size() - filter_start);
    PutBytes(&index_, last_key_);
    out_.write(block_.data(), static_cast<std::streamsize>(block_.size()));
    offset_ += block_.size();
    block_.clear();
  }

  std::unique_ptr<sstfilter::FilterBuilder> builder_;
  std::ofstream out_;
  size_t block_bytes_ = 0, offset_ = 0;  // offset_: where the next block goes
  std::string block_, filters_, index_, last_key_;
};

// What lookups cost: filter checks (lookups that reached a block's filter),
// data blocks read, and reads saved because the filter said "no".
struct Stats {
  uint64_t filter_checks = 0, blocks_read = 0, blocks_skipped = 0;
};

// Reads a store file. The index and the filters stay in memory (as LevelDB
// keeps a table's filter block); data blocks are read per lookup.
class Store {
 public:
  Store() = default;
  Store(const Store&) = delete;  // the filter readers point into meta_
  bool Open(const std::string& path) {
    in_.open(path, std::ios::binary | std::ios::ate);
    const uint64_t size = in_ ? static_cast<uint64_t>(in_.tellg()) : 0;
    size_t pos = 0;
    uint32_t filters_at, index_at;  // file offsets, from the footer
    if (size < 8 || !Read(size - 8, 8, &meta_) ||
        !GetU32(meta_, &pos, &filters_at) || !GetU32(meta_, &pos, &index_at) ||
        filters_at > index_at || index_at > size - 8 ||
        !Read(filters_at, size - 8 - filters_at, &meta_)) {
      return false;
    }
    const std::string_view filters(meta_.data(), index_at - filters_at);
    const std::string_view index =
        std::string_view(meta_).substr(filters.size());
    uint32_t offset = 0, filter_offset = 0, filter_size;
    for (pos = 0; pos < index.size();) {
      Block b;
      std::string_view last_key;
      if (!GetU32(index, &pos, &b.size) || !GetU32(index, &pos, &filter_size) ||
          !GetBytes(index, &pos, &last_key) ||
          filters.size() - filter_offset < filter_size) {
        return false;
      }
      b.offset = offset;  // blocks are back to back from offset 0
      offset += b.size;
      b.last_key = last_key;
      // A view into meta_: no copy now, no allocation per lookup.
      b.filter = sstfilter::FilterReader::Open(
          filters.substr(filter_offset, filter_size));
      filter_offset += filter_size;
      blocks_.push_back(std::move(b));
    }
    return true;
  }

  // Finds `key`. Reads at most one block; none if the filter rules it out.
  bool Get(std::string_view key, std::string* value) {
    // The first block whose last key is >= key is the only candidate.
    auto it = std::lower_bound(
        blocks_.begin(), blocks_.end(), key,
        [](const Block& b, std::string_view k) { return b.last_key < k; });
    if (it == blocks_.end()) return false;  // after the last key
    const Block& b = *it;
    stats_.filter_checks++;
    if (!b.filter.MayMatch(key)) {
      stats_.blocks_skipped++;  // the point of it all: no disk read
      return false;
    }
    stats_.blocks_read++;
    std::string data;
    if (!Read(b.offset, b.size, &data)) return false;
    for (size_t pos = 0; pos < data.size();) {
      std::string_view k, v;
      if (!GetBytes(data, &pos, &k) || !GetBytes(data, &pos, &v)) return false;
      if (k == key) return value->assign(v), true;
    }
    return false;  // the filter's false positive: this read was wasted
  }

  size_t num_blocks() const { return blocks_.size(); }
  const Stats& stats() const { return stats_; }

 private:
  struct Block {
    uint32_t offset = 0, size = 0;
    std::string last_key;
    sstfilter::FilterReader filter;  // a view into meta_
  };

  bool Read(uint64_t offset, uint32_t n, std::string* dst) {
    dst->resize(n);
    in_.seekg(static_cast<std::streamoff>(offset));
    return static_cast<bool>(in_.read(dst->data(), n));
  }

  std::ifstream in_;
  std::string meta_;  // every block's filter, then the index
  std::vector<Block> blocks_;
  Stats stats_;
};

}  // namespace block_store

#endif  // SSTFILTER_EXAMPLES_BLOCK_STORE_H_
