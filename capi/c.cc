// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The C API (include/sstfilter/c.h): thin wrappers over the C++ API. Every
// function that can allocate runs its body inside Guard, which turns any
// exception into a code and a message, so none crosses into C.

#include "sstfilter/c.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sstfilter/filter.h"
#include "sstfilter/hash.h"
#include "sstfilter/mutable.h"
#include "sstfilter/params.h"
#include "sstfilter/secret.h"
#include "sstfilter/spec.h"
#include "sstfilter/status.h"

// The C names of the kind bytes mirror sstfilter::FilterKind (C cannot
// read the kinds table): a kind added there adds its enumerator here
// (SpecTest.EveryKindHasANameAndACName checks that the last one is the
// table's last kind).
static_assert(SSTFILTER_KIND_EMPTY == int(sstfilter::FilterKind::kEmpty) &&
                  SSTFILTER_KIND_BLOOM == int(sstfilter::FilterKind::kBloom) &&
                  SSTFILTER_KIND_BLOCKED_BLOOM ==
                      int(sstfilter::FilterKind::kBlockedBloom) &&
                  SSTFILTER_KIND_CUCKOO ==
                      int(sstfilter::FilterKind::kCuckoo) &&
                  SSTFILTER_KIND_COUNTING_BLOOM ==
                      int(sstfilter::FilterKind::kCountingBloom) &&
                  SSTFILTER_KIND_DYNAMIC_CUCKOO ==
                      int(sstfilter::FilterKind::kDynamicCuckoo) &&
                  SSTFILTER_KIND_RIBBON ==
                      int(sstfilter::FilterKind::kRibbon) &&
                  SSTFILTER_KIND_RANGE == int(sstfilter::FilterKind::kRange),
              "include/sstfilter/c.h's sstfilter_kind mirrors FilterKind");

// The handles: plain structs owning the C++ objects.
struct sstfilter_builder {
  std::unique_ptr<sstfilter::FilterBuilder> impl;
};
struct sstfilter_reader {
  sstfilter::FilterReader impl;
};
struct sstfilter_secret {
  std::unique_ptr<const sstfilter::FilterSecret> impl;
};
// One of the two mutable filters, by kind.
struct sstfilter_mutable {
  sstfilter::FilterKind kind;
  sstfilter::CountingBloomFilter counting;  // kind kCountingBloom
  sstfilter::DynamicCuckooFilter cuckoo;    // kind kDynamicCuckoo
  uint64_t count = 0;  // inserts minus erases that succeeded
};

namespace {

using sstfilter::FilterKind;
using sstfilter::Status;

// Keys per round of the batched queries (their answers on the stack).
constexpr size_t kBatch = 64;

// A malloc'ed copy of `s` (NUL-terminated), or nullptr if malloc fails.
char* CopyString(std::string_view s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

// A malloc'ed copy of filter bytes for the caller; throws std::bad_alloc.
char* CopyBytes(const std::string& bytes) {
  // malloc(0) may return NULL; filters are never empty anyway.
  char* p = static_cast<char*>(std::malloc(std::max<size_t>(bytes.size(), 1)));
  if (p == nullptr) throw std::bad_alloc();
  std::memcpy(p, bytes.data(), bytes.size());
  return p;
}

sstfilter_code Fail(sstfilter_code code, std::string_view msg, char** errmsg) {
  if (errmsg != nullptr) *errmsg = CopyString(msg);
  return code;
}

sstfilter_code FromStatus(const Status& s, char** errmsg) {
  if (errmsg != nullptr) *errmsg = nullptr;
  switch (s.code()) {
    case Status::Code::kOk:
      return SSTFILTER_OK;
    case Status::Code::kInvalidArgument:
      return Fail(SSTFILTER_INVALID_ARGUMENT, s.message(), errmsg);
    case Status::Code::kNotSupported:
      return Fail(SSTFILTER_NOT_SUPPORTED, s.message(), errmsg);
    case Status::Code::kCorruption:
      return Fail(SSTFILTER_CORRUPTION, s.message(), errmsg);
    case Status::Code::kIOError:  // no call of this API reads a file
      break;
  }
  return Fail(SSTFILTER_INTERNAL, s.ToString(), errmsg);
}

// Runs fn() -> Status, mapping exceptions to codes. `errmsg` is cleared
// first, so it is NULL after success whatever fn does.
template <typename Fn>
sstfilter_code Guard(char** errmsg, Fn&& fn) noexcept {
  if (errmsg != nullptr) *errmsg = nullptr;
  try {
    return FromStatus(fn(), errmsg);
  } catch (const std::bad_alloc&) {
    return Fail(SSTFILTER_OUT_OF_MEMORY, "out of memory", errmsg);
  } catch (const std::length_error& e) {
    // std::string / std::vector beyond max_size(): a size no memory holds.
    // Nothing here may allocate with new: the stack holds the message.
    char msg[256];
    std::snprintf(msg, sizeof(msg), "out of memory: %s", e.what());
    return Fail(SSTFILTER_OUT_OF_MEMORY, msg, errmsg);
  } catch (const std::exception& e) {
    return Fail(SSTFILTER_INTERNAL, e.what(), errmsg);
  } catch (...) {
    return Fail(SSTFILTER_INTERNAL, "unknown exception", errmsg);
  }
}

Status NullArgument(const char* what) {
  return Status::InvalidArgument(std::string(what) + " is NULL");
}

Status MutableKindOk(int kind) {
  if (kind == SSTFILTER_KIND_COUNTING_BLOOM ||
      kind == SSTFILTER_KIND_DYNAMIC_CUCKOO) {
    return Status::OK();
  }
  return Status::InvalidArgument(
      "mutable filter kind must be counting_bloom (4) or dynamic_cuckoo (5), "
      "got " +
      std::to_string(kind));
}

void ToCParams(const sstfilter::FilterParams& p, sstfilter_params* out) {
  out->kind = static_cast<int32_t>(p.kind);
  out->num_probes = p.num_probes;
  out->fingerprint_bits = p.fingerprint_bits;
  out->num_keys = p.num_keys;
  out->bits_per_key = p.bits_per_key;
  out->filter_bytes = p.filter_bytes;
  out->expected_fpr = p.expected_fpr;
}

// Keys given as (pointer, length) with a NULL pointer are valid only when
// empty; a NULL pointer with a length is a caller bug we refuse to read.
bool KeyOk(const char* key, size_t len) { return key != nullptr || len == 0; }
std::string_view Key(const char* key, size_t len) {
  return key == nullptr ? std::string_view() : std::string_view(key, len);
}

// The batched query's keys, read by FilterReader as it hashes them.
struct KeyArrays {
  const char* const* keys;
  const size_t* lens;
};
std::string_view KeyOfArrays(const void* arrays, size_t i) {
  const auto* a = static_cast<const KeyArrays*>(arrays);
  return Key(a->keys[i], a->lens[i]);
}

}  // namespace

extern "C" {

const char* sstfilter_code_name(sstfilter_code code) noexcept {
  switch (code) {
    case SSTFILTER_OK:
      return "OK";
    case SSTFILTER_INVALID_ARGUMENT:
      return "Invalid argument";
    case SSTFILTER_NOT_SUPPORTED:
      return "Not supported";
    case SSTFILTER_CORRUPTION:
      return "Corruption";
    case SSTFILTER_OUT_OF_MEMORY:
      return "Out of memory";
    case SSTFILTER_INTERNAL:
      return "Internal error";
    case SSTFILTER_FULL:
      return "Full";
  }
  return "Unknown code";
}

void sstfilter_free(void* ptr) noexcept { std::free(ptr); }

const char* sstfilter_family_name(void) noexcept {
  return sstfilter::kFamilyName;
}

const char* sstfilter_kind_name(int kind) noexcept {
  if (kind < 0 || kind > 255) return "unknown";
  return sstfilter::FilterKindName(static_cast<FilterKind>(kind));
}

sstfilter_code sstfilter_spec_parse(const char* spec, char** canonical,
                                    char** errmsg) noexcept {
  if (canonical != nullptr) *canonical = nullptr;
  return Guard(errmsg, [&] {
    if (spec == nullptr) return NullArgument("spec");
    sstfilter::FilterSpec parsed;
    Status s = sstfilter::ParseFilterSpec(spec, &parsed);
    if (!s.ok() || canonical == nullptr) return s;
    *canonical = CopyString(parsed.ToString());
    if (*canonical == nullptr) throw std::bad_alloc();
    return s;
  });
}

uint64_t sstfilter_hash64(const char* key, size_t len, uint64_t seed) noexcept {
  return sstfilter::Hash64(Key(key, len), seed);
}

sstfilter_code sstfilter_params_for_spec(const char* spec, uint64_t num_keys,
                                         sstfilter_params* out,
                                         char** errmsg) noexcept {
  return Guard(errmsg, [&] {
    if (spec == nullptr) return NullArgument("spec");
    if (out == nullptr) return NullArgument("out");
    sstfilter::FilterSpec parsed;
    Status s = sstfilter::ParseFilterSpec(spec, &parsed);
    sstfilter::FilterParams p;
    if (s.ok()) s = sstfilter::ParamsForSpec(parsed, num_keys, &p);
    if (s.ok()) ToCParams(p, out);
    return s;
  });
}

sstfilter_code sstfilter_params_for_fpr(int kind, uint64_t num_keys,
                                        double target_fpr,
                                        sstfilter_params* out,
                                        char** errmsg) noexcept {
  return Guard(errmsg, [&] {
    if (out == nullptr) return NullArgument("out");
    if (kind < 0 || kind > 255) {
      return Status::InvalidArgument("unknown filter kind " +
                                     std::to_string(kind));
    }
    sstfilter::FilterParams p;
    Status s = sstfilter::ParamsForFpr(static_cast<FilterKind>(kind), num_keys,
                                       target_fpr, &p);
    if (s.ok()) ToCParams(p, out);
    return s;
  });
}

sstfilter_code sstfilter_plan_level_bits(int kind, const uint64_t* run_keys,
                                         size_t num_runs,
                                         double avg_bits_per_key,
                                         double* bits_per_key, double* fpr,
                                         double* expected_false_positives,
                                         double* uniform_false_positives,
                                         char** errmsg) noexcept {
  return Guard(errmsg, [&] {
    if (run_keys == nullptr && num_runs > 0) return NullArgument("run_keys");
    if (bits_per_key == nullptr) return NullArgument("bits_per_key");
    if (kind < 0 || kind > 255) {
      return Status::InvalidArgument("unknown filter kind " +
                                     std::to_string(kind));
    }
    sstfilter::LevelPlan plan;
    Status s = sstfilter::PlanLevelBits(
        static_cast<FilterKind>(kind),
        std::vector<uint64_t>(run_keys, run_keys + num_runs), avg_bits_per_key,
        &plan);
    if (!s.ok()) return s;
    std::copy(plan.bits_per_key.begin(), plan.bits_per_key.end(), bits_per_key);
    if (fpr != nullptr) std::copy(plan.fpr.begin(), plan.fpr.end(), fpr);
    if (expected_false_positives != nullptr) {
      *expected_false_positives = plan.expected_false_positives;
    }
    if (uniform_false_positives != nullptr) {
      *uniform_false_positives = plan.uniform_false_positives;
    }
    return s;
  });
}

// ---- builders -------------------------------------------------------------

sstfilter_code sstfilter_secret_create(const char* bytes, size_t len,
                                       sstfilter_secret** out,
                                       char** errmsg) noexcept {
  if (out != nullptr) *out = nullptr;
  return Guard(errmsg, [&] {
    if (out == nullptr) return NullArgument("out");
    if (!KeyOk(bytes, len)) return NullArgument("bytes of non-zero length");
    auto secret = std::make_unique<sstfilter_secret>();
    Status s = sstfilter::NewFilterSecret(Key(bytes, len), &secret->impl);
    if (s.ok()) *out = secret.release();
    return s;
  });
}

void sstfilter_secret_destroy(sstfilter_secret* s) noexcept { delete s; }

uint32_t sstfilter_secret_key_id(const sstfilter_secret* s) noexcept {
  return s == nullptr ? 0 : s->impl->key_id();
}

sstfilter_code sstfilter_builder_create(const char* spec,
                                        sstfilter_builder** out,
                                        char** errmsg) noexcept {
  return sstfilter_builder_create_keyed(spec, nullptr, out, errmsg);
}

sstfilter_code sstfilter_builder_create_keyed(const char* spec,
                                              const sstfilter_secret* secret,
                                              sstfilter_builder** out,
                                              char** errmsg) noexcept {
  if (out != nullptr) *out = nullptr;
  return Guard(errmsg, [&] {
    if (spec == nullptr) return NullArgument("spec");
    if (out == nullptr) return NullArgument("out");
    sstfilter::FilterSpec parsed;
    Status s = sstfilter::ParseFilterSpec(spec, &parsed);
    if (!s.ok()) return s;
    auto b = std::make_unique<sstfilter_builder>();
    s = sstfilter::NewFilterBuilder(
        parsed, &b->impl, secret == nullptr ? nullptr : secret->impl.get());
    if (s.ok()) *out = b.release();
    return s;
  });
}

void sstfilter_builder_destroy(sstfilter_builder* b) noexcept { delete b; }

sstfilter_code sstfilter_builder_add_key(sstfilter_builder* b, const char* key,
                                         size_t len, char** errmsg) noexcept {
  return Guard(errmsg, [&] {
    if (b == nullptr) return NullArgument("builder");
    if (!KeyOk(key, len)) return NullArgument("key of non-zero length");
    b->impl->AddKey(Key(key, len));
    return Status::OK();
  });
}

sstfilter_code sstfilter_builder_add_keys(sstfilter_builder* b, size_t n,
                                          const char* const* keys,
                                          const size_t* lens,
                                          char** errmsg) noexcept {
  return Guard(errmsg, [&] {
    if (b == nullptr) return NullArgument("builder");
    if (n > 0 && (keys == nullptr || lens == nullptr)) {
      return NullArgument("keys or lens");
    }
    for (size_t i = 0; i < n; i++) {
      if (!KeyOk(keys[i], lens[i])) {
        return Status::InvalidArgument("key " + std::to_string(i) +
                                       " is NULL with non-zero length");
      }
      b->impl->AddKey(Key(keys[i], lens[i]));
    }
    return Status::OK();
  });
}

sstfilter_code sstfilter_builder_add_hash(sstfilter_builder* b, uint64_t hash,
                                          char** errmsg) noexcept {
  return Guard(errmsg, [&] {
    if (b == nullptr) return NullArgument("builder");
    b->impl->AddHash(hash);
    return Status::OK();
  });
}

size_t sstfilter_builder_num_entries(const sstfilter_builder* b) noexcept {
  return b == nullptr ? 0 : b->impl->NumEntries();
}

uint64_t sstfilter_builder_seed(const sstfilter_builder* b) noexcept {
  return b == nullptr ? 0 : b->impl->seed();
}

uint64_t sstfilter_builder_hash(const sstfilter_builder* b, const char* key,
                                size_t len) noexcept {
  if (b == nullptr || !KeyOk(key, len)) return 0;
  return b->impl->HashKey(Key(key, len));
}

size_t sstfilter_builder_filter_size(const sstfilter_builder* b,
                                     size_t num_entries) noexcept {
  return b == nullptr ? 0 : b->impl->FilterSize(num_entries);
}

sstfilter_code sstfilter_builder_finish(sstfilter_builder* b, char** data,
                                        size_t* size, char** errmsg) noexcept {
  if (data != nullptr) *data = nullptr;
  if (size != nullptr) *size = 0;
  return Guard(errmsg, [&] {
    if (b == nullptr) return NullArgument("builder");
    if (data == nullptr || size == nullptr) return NullArgument("data or size");
    std::string bytes;
    b->impl->Finish(&bytes);
    *data = CopyBytes(bytes);
    *size = bytes.size();
    return Status::OK();
  });
}

// ---- readers --------------------------------------------------------------

sstfilter_code sstfilter_reader_open(const char* data, size_t size,
                                     sstfilter_reader** out,
                                     char** errmsg) noexcept {
  return sstfilter_reader_open_keyed(data, size, nullptr, out, errmsg);
}

sstfilter_code sstfilter_reader_open_keyed(const char* data, size_t size,
                                           const sstfilter_secret* secret,
                                           sstfilter_reader** out,
                                           char** errmsg) noexcept {
  if (out != nullptr) *out = nullptr;
  return Guard(errmsg, [&] {
    if (out == nullptr) return NullArgument("out");
    if (!KeyOk(data, size)) return NullArgument("data of non-zero size");
    auto r = std::make_unique<sstfilter_reader>();
    r->impl = sstfilter::FilterReader::Open(
        Key(data, size), secret == nullptr ? nullptr : secret->impl.get());
    *out = r.release();
    return Status::OK();
  });
}

void sstfilter_reader_destroy(sstfilter_reader* r) noexcept { delete r; }

int sstfilter_reader_valid(const sstfilter_reader* r) noexcept {
  return r != nullptr && r->impl.valid();
}

int sstfilter_reader_kind(const sstfilter_reader* r) noexcept {
  return r == nullptr ? SSTFILTER_KIND_EMPTY : static_cast<int>(r->impl.kind());
}

uint64_t sstfilter_reader_seed(const sstfilter_reader* r) noexcept {
  return r == nullptr ? 0 : r->impl.seed();
}

size_t sstfilter_reader_payload_size(const sstfilter_reader* r) noexcept {
  return r == nullptr ? 0 : r->impl.payload_size();
}

uint64_t sstfilter_reader_hash(const sstfilter_reader* r, const char* key,
                               size_t len) noexcept {
  if (r == nullptr || !KeyOk(key, len)) return 0;
  return r->impl.Hash(Key(key, len));
}

int sstfilter_reader_may_match(const sstfilter_reader* r, const char* key,
                               size_t len) noexcept {
  if (r == nullptr || !KeyOk(key, len)) return 1;
  return r->impl.MayMatch(Key(key, len));
}

int sstfilter_reader_may_match_hash(const sstfilter_reader* r,
                                    uint64_t hash) noexcept {
  return r == nullptr || r->impl.MayMatchHash(hash);
}

void sstfilter_reader_may_match_batch(const sstfilter_reader* r, size_t n,
                                      const char* const* keys,
                                      const size_t* lens,
                                      unsigned char* results) noexcept {
  if (results == nullptr) return;
  if (r == nullptr || keys == nullptr || lens == nullptr) {
    std::fill(results, results + n, 1);
    return;
  }
  bool found[kBatch];
  for (size_t i = 0; i < n; i += kBatch) {
    const size_t m = std::min(kBatch, n - i);
    const KeyArrays round{keys + i, lens + i};
    r->impl.MayMatch(m, KeyOfArrays, &round, found);
    for (size_t j = 0; j < m; j++) {
      // A NULL key with a length was never added: answer "may match".
      results[i + j] = found[j] || !KeyOk(keys[i + j], lens[i + j]);
    }
  }
}

void sstfilter_reader_may_match_hashes(const sstfilter_reader* r, size_t n,
                                       const uint64_t* hashes,
                                       unsigned char* results) noexcept {
  if (results == nullptr) return;
  if (r == nullptr || hashes == nullptr) {
    std::fill(results, results + n, 1);
    return;
  }
  bool found[kBatch];
  for (size_t i = 0; i < n; i += kBatch) {
    const size_t m = std::min(kBatch, n - i);
    r->impl.MayMatchHashes(m, hashes + i, found);
    for (size_t j = 0; j < m; j++) results[i + j] = found[j];
  }
}

int sstfilter_may_match(const char* filter, size_t size, const char* key,
                        size_t len) noexcept {
  if (!KeyOk(filter, size) || !KeyOk(key, len)) return 1;
  return sstfilter::FilterReader::MayMatchOnce(Key(filter, size),
                                               Key(key, len));
}

// ---- mutable filters ------------------------------------------------------

void sstfilter_mutable_options_init(
    sstfilter_mutable_options* options) noexcept {
  if (options == nullptr) return;
  const sstfilter::MutableFilterOptions defaults;
  options->capacity = defaults.capacity;
  options->target_fpr = defaults.target_fpr;
  options->bits_per_key = defaults.bits_per_key;
  options->seed = defaults.seed;
}

sstfilter_code sstfilter_mutable_create(
    int kind, const sstfilter_mutable_options* options, sstfilter_mutable** out,
    char** errmsg) noexcept {
  return sstfilter_mutable_create_keyed(kind, options, nullptr, out, errmsg);
}

sstfilter_code sstfilter_mutable_create_keyed(
    int kind, const sstfilter_mutable_options* options,
    const sstfilter_secret* secret, sstfilter_mutable** out,
    char** errmsg) noexcept {
  if (out != nullptr) *out = nullptr;
  return Guard(errmsg, [&] {
    if (options == nullptr) return NullArgument("options");
    if (out == nullptr) return NullArgument("out");
    Status s = MutableKindOk(kind);
    if (!s.ok()) return s;
    sstfilter::MutableFilterOptions o;
    o.capacity = options->capacity;
    o.target_fpr = options->target_fpr;
    o.bits_per_key = options->bits_per_key;
    o.seed = options->seed;
    o.secret = secret != nullptr ? secret->impl.get() : nullptr;
    auto m = std::make_unique<sstfilter_mutable>();
    m->kind = static_cast<FilterKind>(kind);
    s = m->kind == FilterKind::kCountingBloom
            ? sstfilter::CountingBloomFilter::Create(o, &m->counting)
            : sstfilter::DynamicCuckooFilter::Create(o, &m->cuckoo);
    if (s.ok()) *out = m.release();
    return s;
  });
}

void sstfilter_mutable_destroy(sstfilter_mutable* m) noexcept { delete m; }

int sstfilter_mutable_kind(const sstfilter_mutable* m) noexcept {
  return m == nullptr ? SSTFILTER_KIND_EMPTY : static_cast<int>(m->kind);
}

uint64_t sstfilter_mutable_seed(const sstfilter_mutable* m) noexcept {
  if (m == nullptr) return 0;
  return m->kind == FilterKind::kCountingBloom ? m->counting.seed()
                                               : m->cuckoo.seed();
}

uint64_t sstfilter_mutable_count(const sstfilter_mutable* m) noexcept {
  return m == nullptr ? 0 : m->count;
}

sstfilter_code sstfilter_mutable_insert(sstfilter_mutable* m, const char* key,
                                        size_t len, char** errmsg) noexcept {
  bool full = false;
  const sstfilter_code c = Guard(errmsg, [&] {
    if (m == nullptr) return NullArgument("filter");
    if (!KeyOk(key, len)) return NullArgument("key of non-zero length");
    if (m->kind == FilterKind::kCountingBloom) {
      m->counting.Insert(Key(key, len));
    } else if (!m->cuckoo.Insert(Key(key, len))) {
      full = true;
      return Status::OK();
    }
    m->count++;
    return Status::OK();
  });
  if (c != SSTFILTER_OK || !full) return c;
  char msg[160];  // on the stack: noexcept code must not throw bad_alloc
  std::snprintf(msg, sizeof(msg),
                "dynamic cuckoo filter is full (%llu keys in %llu slots): "
                "the key was not added",
                static_cast<unsigned long long>(m->cuckoo.size()),
                static_cast<unsigned long long>(m->cuckoo.num_slots()));
  return Fail(SSTFILTER_FULL, msg, errmsg);
}

int sstfilter_mutable_erase(sstfilter_mutable* m, const char* key,
                            size_t len) noexcept {
  if (m == nullptr || !KeyOk(key, len)) return 0;
  const bool erased = m->kind == FilterKind::kCountingBloom
                          ? m->counting.Erase(Key(key, len))
                          : m->cuckoo.Erase(Key(key, len));
  if (erased && m->count > 0) m->count--;
  return erased;
}

int sstfilter_mutable_contains(const sstfilter_mutable* m, const char* key,
                               size_t len) noexcept {
  if (m == nullptr || !KeyOk(key, len)) return 1;
  return m->kind == FilterKind::kCountingBloom
             ? m->counting.Contains(Key(key, len))
             : m->cuckoo.Contains(Key(key, len));
}

sstfilter_code sstfilter_mutable_serialize(const sstfilter_mutable* m,
                                           char** data, size_t* size,
                                           char** errmsg) noexcept {
  if (data != nullptr) *data = nullptr;
  if (size != nullptr) *size = 0;
  return Guard(errmsg, [&] {
    if (m == nullptr) return NullArgument("filter");
    if (data == nullptr || size == nullptr) return NullArgument("data or size");
    std::string bytes;
    if (m->kind == FilterKind::kCountingBloom) {
      m->counting.Serialize(&bytes);
    } else {
      m->cuckoo.Serialize(&bytes);
    }
    *data = CopyBytes(bytes);
    *size = bytes.size();
    return Status::OK();
  });
}

sstfilter_code sstfilter_mutable_deserialize(int kind, const char* data,
                                             size_t size,
                                             sstfilter_mutable** out,
                                             char** errmsg) noexcept {
  return sstfilter_mutable_deserialize_keyed(kind, data, size, nullptr, out,
                                             errmsg);
}

sstfilter_code sstfilter_mutable_deserialize_keyed(
    int kind, const char* data, size_t size, const sstfilter_secret* secret,
    sstfilter_mutable** out, char** errmsg) noexcept {
  if (out != nullptr) *out = nullptr;
  return Guard(errmsg, [&] {
    if (out == nullptr) return NullArgument("out");
    if (!KeyOk(data, size)) return NullArgument("data of non-zero size");
    Status s = MutableKindOk(kind);
    if (!s.ok()) return s;
    auto m = std::make_unique<sstfilter_mutable>();
    m->kind = static_cast<FilterKind>(kind);
    const sstfilter::FilterSecret* key =
        secret != nullptr ? secret->impl.get() : nullptr;
    if (m->kind == FilterKind::kCountingBloom) {
      s = sstfilter::CountingBloomFilter::Deserialize(Key(data, size),
                                                      &m->counting, key);
      // A counting Bloom filter keeps no count: it restarts at 0.
    } else {
      s = sstfilter::DynamicCuckooFilter::Deserialize(Key(data, size),
                                                      &m->cuckoo, key);
      m->count = m->cuckoo.size();
    }
    if (s.ok()) *out = m.release();
    return s;
  });
}

}  // extern "C"
