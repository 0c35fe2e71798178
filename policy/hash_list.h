// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Internal: HashList, the store of the hashes a builder was given.
//
// Hashes live in fixed chunks of kChunkHashes (64 KiB each) instead of one
// growing std::vector: a vector that doubles holds the old and the new
// array at once (up to 3 x 8 bytes per key at the moment it grows) and
// leaves up to half its capacity unused; chunks cost 8 bytes per key plus
// at most one partly filled chunk. Order is kept: the same hashes in the
// same order give the same filter bytes.

#ifndef SSTFILTER_POLICY_HASH_LIST_H_
#define SSTFILTER_POLICY_HASH_LIST_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace sstfilter {
namespace internal {

class HashList {
 public:
  static constexpr int kChunkShift = 13;
  static constexpr size_t kChunkHashes = size_t{1} << kChunkShift;

  HashList() = default;
  // Copies `hashes` (tests and one-shot callers).
  HashList(const std::vector<uint64_t>& hashes) {  // NOLINT: implicit
    for (uint64_t h : hashes) push_back(h);
  }
  // A moved-from list is empty and usable (tail_ must not point into the
  // chunks it gave away).
  HashList(HashList&& o) noexcept { *this = std::move(o); }
  HashList& operator=(HashList&& o) noexcept {
    if (this != &o) {
      chunks_ = std::move(o.chunks_);
      size_ = o.size_;
      tail_ = o.tail_;
      o.chunks_.clear();
      o.size_ = 0;
      o.tail_ = nullptr;
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // REQUIRES: !empty(). The last hash always sits just before tail_.
  uint64_t back() const { return tail_[-1]; }
  uint64_t operator[](size_t i) const {
    return chunks_[i >> kChunkShift][i & (kChunkHashes - 1)];
  }
  uint64_t& operator[](size_t i) {
    return chunks_[i >> kChunkShift][i & (kChunkHashes - 1)];
  }
  HashList Copy() const {
    HashList copy;
    ForEachChunk([&](const uint64_t* p, size_t count) {
      for (size_t j = 0; j < count; j++) copy.push_back(p[j]);
    });
    return copy;
  }

  void push_back(uint64_t hash) {
    if ((size_ & (kChunkHashes - 1)) == 0) StartChunk();
    *tail_++ = hash;
    size_++;
  }

  // Empties the list, keeping the first chunk for the next filter so that
  // a builder reused for small filters does not allocate again.
  void clear() {
    if (chunks_.size() > 1) chunks_.resize(1);
    size_ = 0;
    tail_ = nullptr;
  }

  // Calls f(hashes, count) for each chunk in order: the fast way through
  // the list (no index arithmetic per hash).
  template <typename F>
  void ForEachChunk(F&& f) const {
    for (size_t i = 0; i < size_; i += kChunkHashes) {
      const size_t left = size_ - i;
      f(&chunks_[i >> kChunkShift][0],
        left < kChunkHashes ? left : kChunkHashes);
    }
  }

  class const_iterator {
   public:
    const_iterator(const HashList* list, size_t i) : list_(list), i_(i) {}
    uint64_t operator*() const { return (*list_)[i_]; }
    const_iterator& operator++() {
      i_++;
      return *this;
    }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const HashList* list_;
    size_t i_;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size_); }

 private:
  // Points tail_ at chunk size_ / kChunkHashes, allocating it if needed.
  void StartChunk() {
    const size_t c = size_ >> kChunkShift;
    if (c == chunks_.size()) {
      // Owned before the vector may grow: if growing throws bad_alloc the
      // chunk is freed and the list is unchanged (the C API reports
      // out-of-memory and the builder stays usable).
      std::unique_ptr<uint64_t[]> chunk(new uint64_t[kChunkHashes]);
      chunks_.push_back(std::move(chunk));
    }
    tail_ = &chunks_[c][0];
  }

  std::vector<std::unique_ptr<uint64_t[]>> chunks_;
  size_t size_ = 0;
  uint64_t* tail_ = nullptr;  // where the next hash goes, within a chunk
};

// Calls visit(h, locate(h)) for every hash h of `hashes`, in order, with
// locate running kAhead hashes ahead of visit: locate prefetches what
// visit will touch, so that up to kAhead cache misses overlap. The order
// of the visits is the list's, so the bytes built are the same as a plain
// loop's.
template <size_t kAhead, typename Locate, typename Visit>
inline void ForEachPrefetched(const HashList& hashes, Locate&& locate,
                              Visit&& visit) {
  static_assert((kAhead & (kAhead - 1)) == 0, "kAhead: a power of two");
  struct Item {
    uint64_t hash;
    decltype(locate(uint64_t{0})) where;
  };
  Item ring[kAhead];
  size_t seen = 0;
  hashes.ForEachChunk([&](const uint64_t* chunk, size_t count) {
    for (size_t j = 0; j < count; j++, seen++) {
      Item& item = ring[seen & (kAhead - 1)];
      if (seen >= kAhead) visit(item.hash, item.where);
      item.where = locate(chunk[j]);
      item.hash = chunk[j];
    }
  });
  for (size_t i = seen > kAhead ? seen - kAhead : 0; i < seen; i++) {
    const Item& item = ring[i & (kAhead - 1)];
    visit(item.hash, item.where);
  }
}

}  // namespace internal
}  // namespace sstfilter

#endif  // SSTFILTER_POLICY_HASH_LIST_H_
