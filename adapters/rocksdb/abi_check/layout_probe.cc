// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Prints the vtable slot of every virtual function of FilterBitsBuilder and
// FilterBitsReader, one "Class::method slot" line each ("absent" if the
// class has no such method), then the first slot after the class's own
// virtuals ("end"). Compiled twice by check.sh against one RocksDB source
// tree: once with RocksDB's own filter_policy_internal.h
// (-DSSTFILTER_PROBE_ROCKSDB) and once with adapters/rocksdb/rocksdb_abi.h;
// the two outputs must be identical.
//
// Itanium C++ ABI: a pointer to a virtual member function holds
// 1 + the byte offset of its vtable slot (then an adjustment); the
// destructor, whose address cannot be taken, occupies two slots.

#if defined(SSTFILTER_PROBE_ROCKSDB)
#include "table/block_based/filter_policy_internal.h"
#else
#include "adapters/rocksdb/rocksdb_abi.h"
#endif

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

namespace {

using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;

template <typename MemberPointer>
long Slot(MemberPointer p) {
  static_assert(sizeof(p) == 2 * sizeof(uintptr_t), "not Itanium");
  uintptr_t word;
  std::memcpy(&word, &p, sizeof(word));
  if ((word & 1) == 0) return -2;  // not virtual
  return static_cast<long>((word - 1) / sizeof(void*));
}

void Print(const char* name, long slot) {
  if (slot == -1) {
    std::printf("%s absent\n", name);
  } else if (slot == -2) {
    std::printf("%s not-virtual\n", name);
  } else {
    std::printf("%s %ld\n", name, slot);
  }
}

// Prints the slot of T::name taken as a `Type`, or "absent".
#define SSTFILTER_SLOT(T, name, Type)                                        \
  do {                                                                       \
    if constexpr (requires { static_cast<Type>(&T::name); }) {               \
      Print(#T "::" #name "(" #Type ")", Slot(static_cast<Type>(&T::name))); \
    } else {                                                                 \
      Print(#T "::" #name "(" #Type ")", -1);                                \
    }                                                                        \
  } while (0)

// A new virtual declared by a subclass takes the first slot after the
// base's: the number of slots the base uses.
template <typename T>
struct After : T {
  virtual void SstfilterProbeEnd();
};

template <typename B>
void Builder() {
  using AddKeyF = void (B::*)(const Slice&);
  using AddKeyAndAltF = void (B::*)(const Slice&, const Slice&);
  using CountF = size_t (B::*)();
  using Finish1F = Slice (B::*)(std::unique_ptr<const char[]>*);
  using Finish2F = Slice (B::*)(std::unique_ptr<const char[]>*, Status*);
  using VerifyF = Status (B::*)(const Slice&);
  using SizeF = size_t (B::*)(size_t);
  using FpF = double (B::*)(size_t, size_t);
  SSTFILTER_SLOT(B, AddKey, AddKeyF);
  SSTFILTER_SLOT(B, AddKeyAndAlt, AddKeyAndAltF);
  SSTFILTER_SLOT(B, EstimateEntriesAdded, CountF);
  SSTFILTER_SLOT(B, Finish, Finish1F);
  SSTFILTER_SLOT(B, Finish, Finish2F);
  SSTFILTER_SLOT(B, MaybePostVerify, VerifyF);
  SSTFILTER_SLOT(B, ApproximateNumEntries, SizeF);
  SSTFILTER_SLOT(B, CalculateSpace, SizeF);
  SSTFILTER_SLOT(B, EstimatedFpRate, FpF);
  Print("FilterBitsBuilder end", Slot(&After<B>::SstfilterProbeEnd));
}

template <typename R>
void Reader() {
  using OneF = bool (R::*)(const Slice&);
  using BatchF = void (R::*)(int, Slice**, bool*);
  SSTFILTER_SLOT(R, MayMatch, OneF);
  SSTFILTER_SLOT(R, MayMatch, BatchF);
  Print("FilterBitsReader end", Slot(&After<R>::SstfilterProbeEnd));
}

}  // namespace

int main() {
  std::printf("RocksDB %d.%d.%d\n", ROCKSDB_MAJOR, ROCKSDB_MINOR,
              ROCKSDB_PATCH);
  Builder<ROCKSDB_NAMESPACE::FilterBitsBuilder>();
  Reader<ROCKSDB_NAMESPACE::FilterBitsReader>();
  return 0;
}
