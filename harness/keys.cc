// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "harness/keys.h"

#include <cassert>
#include <cstdio>

namespace sstfilter {
namespace harness {

KeySpace KeySpace::Decimal(std::string prefix, int digits, std::string tail) {
  assert(digits > 0);
  return KeySpace(std::move(prefix), digits, 0, std::move(tail));
}

KeySpace KeySpace::Hashed(uint64_t seed, std::string tail) {
  return KeySpace("", 0, SplitMix64Finalizer(seed ^ 0x5eed5eed5eed5eedULL),
                  std::move(tail));
}

uint64_t KeySpace::Number(uint64_t i) const {
  return digits_ > 0 ? i : SplitMix64Finalizer(i + offset_);
}

void KeySpace::Key(uint64_t i, std::string* out) const {
  out->assign(prefix_);
  if (digits_ > 0) {
    char buf[32];
    const int n = std::snprintf(buf, sizeof(buf), "%0*llu", digits_,
                                static_cast<unsigned long long>(i));
    out->append(buf, static_cast<size_t>(n));
  } else {
    const uint64_t v = Number(i);
    for (int b = 0; b < 8; b++)
      out->push_back(static_cast<char>(v >> (56 - 8 * b)));
  }
  out->append(tail_);
}

std::string KeySpace::Key(uint64_t i) const {
  std::string k;
  Key(i, &k);
  return k;
}

std::string KeySpace::Key(uint64_t i, char last) const {
  assert(!tail_.empty());
  std::string k = Key(i);
  k.back() = last;
  return k;
}

void KeySpace::Value(uint64_t i, size_t size, std::string* out) const {
  out->resize(size);
  Random64 r(Number(i) ^ 0x76616c7565ULL);
  for (size_t b = 0; b < size; b += 8) {
    uint64_t w = r.Next();
    for (size_t j = b; j < size && j < b + 8; j++, w >>= 8) {
      (*out)[j] = static_cast<char>(w);
    }
  }
}

const KeySpace& FixedKeys() {
  static const KeySpace* keys =
      new KeySpace(KeySpace::Decimal("key-", 11, "a"));
  return *keys;
}

std::string OtherPrefixKey(uint64_t i) {
  static const KeySpace* keys =
      new KeySpace(KeySpace::Decimal("nokey-", 1, ""));
  return keys->Key(i);
}

std::string FarAbsentKey(uint64_t j, uint64_t num_keys) {
  return FixedKeys().Key(j * 7919 % num_keys) + "/" + std::to_string(j);
}

std::string NeighbourAbsentKey(uint64_t j, uint64_t num_keys) {
  return FixedKeys().Key(j * 7919 % num_keys, 'b');
}

std::string AnyByteNeighbourKey(uint64_t j, uint64_t num_keys) {
  return FixedKeys().Key(j * 7919 % num_keys,
                         static_cast<char>('a' + 1 + j % 255));
}

KeySet::KeySet(const KeySpace& space, uint64_t base, uint64_t n) {
  std::string key;
  space.Key(base, &key);
  const size_t len = key.size();
  buf_.reserve(n * len);
  for (uint64_t i = 0; i < n; i++) {
    space.Key(base + i, &key);
    assert(key.size() == len);
    buf_.append(key);
  }
  views_.reserve(n);
  for (uint64_t i = 0; i < n; i++) views_.emplace_back(&buf_[i * len], len);
}

}  // namespace harness
}  // namespace sstfilter
