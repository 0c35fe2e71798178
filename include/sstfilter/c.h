/* Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
 *
 * The C API of sstfilter, for engines and languages that cannot use the C++
 * headers. The same three steps as sstfilter/filter.h, behind opaque handles:
 *
 *   sstfilter_builder* b = NULL;
 *   char* err = NULL;
 *   if (sstfilter_builder_create("bloom:10", &b, &err) != SSTFILTER_OK) {
 *     fprintf(stderr, "%s\n", err);
 *     sstfilter_free(err);
 *     return;
 *   }
 *   sstfilter_builder_add_key(b, "apple", 5, NULL);
 *   char* bytes = NULL;
 *   size_t size = 0;
 *   sstfilter_builder_finish(b, &bytes, &size, NULL);    // bytes are yours
 *   sstfilter_builder_destroy(b);
 *
 *   sstfilter_reader* r = NULL;
 *   sstfilter_reader_open(bytes, size, &r, NULL);        // a view over bytes
 *   sstfilter_reader_may_match(r, "apple", 5);           // 1, always
 *   sstfilter_reader_destroy(r);
 *   sstfilter_free(bytes);
 *
 * Conventions, for every function below:
 *
 * - Errors. A function that can fail returns an sstfilter_code and takes a
 *   last argument `char** errmsg`, which may be NULL. If it is not NULL, on
 *   return *errmsg is NULL after success and, after a failure, either a
 *   NUL-terminated message naming the problem (allocated here; free it with
 *   sstfilter_free) or NULL if even the message could not be allocated.
 *   Out of memory is SSTFILTER_OUT_OF_MEMORY: no C++ exception ever leaves
 *   this API, and no function aborts on bad input.
 * - Ownership. Every pointer this API hands out (handles, filter bytes,
 *   messages) is owned by the caller and released with the matching
 *   *_destroy function or sstfilter_free, exactly once. Pointers the caller
 *   passes in stay the caller's; only readers keep one (see below).
 * - Keys are (pointer, length) pairs of arbitrary bytes; a key of length 0
 *   may have a NULL pointer. Spec strings are NUL-terminated.
 * - Threads. Functions on different handles may run concurrently. A reader
 *   is immutable and may be shared by any number of threads. A builder (and
 *   a mutable filter) may be used by one thread at a time.
 * - NULL handles. Queries on a NULL reader answer "may match"; other
 *   functions given a NULL handle return SSTFILTER_INVALID_ARGUMENT or do
 *   nothing (destroy).
 * - Filter bytes are the self-describing format of docs/FORMAT.md: bytes
 *   that are empty, truncated, corrupt or of an unknown kind read as a
 *   filter that matches every key, never as one that misses a key.
 */

#ifndef SSTFILTER_C_H_
#define SSTFILTER_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define SSTFILTER_C_NOEXCEPT noexcept
extern "C" {
#else
#define SSTFILTER_C_NOEXCEPT
#endif

/* ---- results and memory ------------------------------------------------ */

typedef enum sstfilter_code {
  SSTFILTER_OK = 0,
  SSTFILTER_INVALID_ARGUMENT = 1, /* bad spec, size, kind or NULL handle */
  SSTFILTER_NOT_SUPPORTED = 2,    /* reserved: no call returns it */
  SSTFILTER_CORRUPTION = 3,       /* bytes that cannot be deserialized */
  SSTFILTER_OUT_OF_MEMORY = 4,
  SSTFILTER_INTERNAL = 5, /* an unexpected failure; the message says what */
  SSTFILTER_FULL = 6      /* a dynamic cuckoo filter found no room */
} sstfilter_code;

/* "OK", "Invalid argument", ...; a static string, never NULL. */
const char* sstfilter_code_name(sstfilter_code code) SSTFILTER_C_NOEXCEPT;

/* Releases filter bytes and messages returned by this API. NULL is a no-op. */
void sstfilter_free(void* ptr) SSTFILTER_C_NOEXCEPT;

/* The format family name, "sstfilter.v1" (sstfilter::kFamilyName): the name
 * an engine stores filters under. A static string. */
const char* sstfilter_family_name(void) SSTFILTER_C_NOEXCEPT;

/* ---- kinds, specs and hashing -------------------------------------------- */

/* The kind byte of the format (sstfilter::FilterKind). */
typedef enum sstfilter_kind {
  SSTFILTER_KIND_EMPTY = 0,         /* zero keys: never matches */
  SSTFILTER_KIND_BLOOM = 1,         /* standard Bloom */
  SSTFILTER_KIND_BLOCKED_BLOOM = 2, /* one 64-byte block per key */
  SSTFILTER_KIND_CUCKOO = 3,        /* static cuckoo */
  SSTFILTER_KIND_COUNTING_BLOOM = 4,
  SSTFILTER_KIND_DYNAMIC_CUCKOO = 5,
  SSTFILTER_KIND_RIBBON = 6, /* linear system over GF(2), near log2(1/FPR) */
  SSTFILTER_KIND_RANGE = 7   /* range filter (sstfilter/range.h): no point
                                builder; a point reader says "may match" */
} sstfilter_kind;

/* "bloom", "blocked_bloom", ... or "unknown"; a static string. */
const char* sstfilter_kind_name(int kind) SSTFILTER_C_NOEXCEPT;

/* Checks a spec string (grammar in sstfilter/spec.h, e.g. "bloom:10",
 * "cuckoo:12:seed=7"). If `canonical` is not NULL, on success *canonical is
 * the canonical form (free with sstfilter_free), else it is set to NULL. */
sstfilter_code sstfilter_spec_parse(const char* spec, char** canonical,
                                    char** errmsg) SSTFILTER_C_NOEXCEPT;

/* Hash64 of sstfilter/hash.h: XXH3 64-bit of key[0, len) with `seed`. */
uint64_t sstfilter_hash64(const char* key, size_t len,
                          uint64_t seed) SSTFILTER_C_NOEXCEPT;

/* ---- keyed filters (sstfilter/secret.h) --------------------------------- */

/* The application's secret for keyed specs ("bloom:10:keyed"): never stored
 * in filters. Immutable: share it between threads; it must outlive every
 * builder and reader made with it. */
typedef struct sstfilter_secret sstfilter_secret;

/* Derives a secret from bytes[0, len), at least 16 bytes (use random ones).
 * On failure *out is NULL. */
sstfilter_code sstfilter_secret_create(const char* bytes, size_t len,
                                       sstfilter_secret** out,
                                       char** errmsg) SSTFILTER_C_NOEXCEPT;
void sstfilter_secret_destroy(sstfilter_secret* s) SSTFILTER_C_NOEXCEPT;
/* The 32-bit key id stored in keyed filters written with `s`. */
uint32_t sstfilter_secret_key_id(const sstfilter_secret* s)
    SSTFILTER_C_NOEXCEPT;

/* ---- parameter math (sstfilter/params.h) --------------------------------- */

typedef struct sstfilter_params {
  int32_t kind;             /* sstfilter_kind actually written */
  int32_t num_probes;       /* Bloom kinds, else 0 */
  int32_t fingerprint_bits; /* cuckoo kinds, else 0 */
  uint64_t num_keys;
  double bits_per_key;   /* as requested or chosen, before rounding */
  uint64_t filter_bytes; /* bytes a builder writes for num_keys keys */
  double expected_fpr;
} sstfilter_params;

/* The parameters of the filter a builder for `spec` writes for `num_keys`
 * distinct keys. */
sstfilter_code sstfilter_params_for_spec(const char* spec, uint64_t num_keys,
                                         sstfilter_params* out,
                                         char** errmsg) SSTFILTER_C_NOEXCEPT;

/* The smallest filter of `kind` whose expected FPR is <= target_fpr for
 * `num_keys` keys. INVALID_ARGUMENT unless 0 < target_fpr < 1 and the kind
 * can reach it. */
sstfilter_code sstfilter_params_for_fpr(int kind, uint64_t num_keys,
                                        double target_fpr,
                                        sstfilter_params* out,
                                        char** errmsg) SSTFILTER_C_NOEXCEPT;

/* Bits per key of each sorted run's filter in an LSM tree, for the fewest
 * false positives per absent-key lookup at the memory of `kind` at
 * `avg_bits_per_key` for every key (PlanLevelBits, sstfilter/params.h;
 * docs/LEVEL_SIZING.md). run_keys[0, num_runs): keys per run, each L0 file
 * its own run. On success bits_per_key[i] (and fpr[i], if fpr is not NULL)
 * is run i's filter's size and expected FPR, 0 for a run of no keys, and
 * *expected_false_positives and *uniform_false_positives (each may be NULL)
 * the sum of the FPRs, and the same with every run at the average.
 * bits_per_key and fpr hold num_runs doubles. */
sstfilter_code sstfilter_plan_level_bits(int kind, const uint64_t* run_keys,
                                         size_t num_runs,
                                         double avg_bits_per_key,
                                         double* bits_per_key, double* fpr,
                                         double* expected_false_positives,
                                         double* uniform_false_positives,
                                         char** errmsg) SSTFILTER_C_NOEXCEPT;

/* ---- builders ------------------------------------------------------------ */

/* Accumulates keys, then writes one filter. Calls on one builder follow
 * create ((add_key | add_keys | add_hash)* finish)* destroy; keys may repeat
 * and come in any order. One thread at a time. */
typedef struct sstfilter_builder sstfilter_builder;

/* On success *out is a new builder for `spec`; on failure *out is NULL. */
sstfilter_code sstfilter_builder_create(const char* spec,
                                        sstfilter_builder** out,
                                        char** errmsg) SSTFILTER_C_NOEXCEPT;
/* The same with a secret, which a keyed spec requires (may be NULL for an
 * unkeyed one). */
sstfilter_code sstfilter_builder_create_keyed(
    const char* spec, const sstfilter_secret* secret, sstfilter_builder** out,
    char** errmsg) SSTFILTER_C_NOEXCEPT;
void sstfilter_builder_destroy(sstfilter_builder* b) SSTFILTER_C_NOEXCEPT;

/* Adds one key, n keys, or a hash the caller computed as
 * sstfilter_builder_hash(b, key, len) since the last finish (for an unkeyed
 * spec: sstfilter_hash64(key, len, sstfilter_builder_seed(b))). On failure
 * (out of memory) the keys before the failing one were added, the rest
 * not. */
sstfilter_code sstfilter_builder_add_key(sstfilter_builder* b, const char* key,
                                         size_t len,
                                         char** errmsg) SSTFILTER_C_NOEXCEPT;
sstfilter_code sstfilter_builder_add_keys(sstfilter_builder* b, size_t n,
                                          const char* const* keys,
                                          const size_t* lens,
                                          char** errmsg) SSTFILTER_C_NOEXCEPT;
sstfilter_code sstfilter_builder_add_hash(sstfilter_builder* b, uint64_t hash,
                                          char** errmsg) SSTFILTER_C_NOEXCEPT;

/* Keys added since the last finish (an upper bound on distinct keys). */
size_t sstfilter_builder_num_entries(const sstfilter_builder* b)
    SSTFILTER_C_NOEXCEPT;
/* The seed of the filter being built: the spec's (0 unless it gave one),
 * or for a "salt" spec a fresh random one, drawn again by every finish. */
uint64_t sstfilter_builder_seed(const sstfilter_builder* b)
    SSTFILTER_C_NOEXCEPT;
/* The hash add_key adds for key[0, len) to the filter being built. */
uint64_t sstfilter_builder_hash(const sstfilter_builder* b, const char* key,
                                size_t len) SSTFILTER_C_NOEXCEPT;
/* Bytes finish would write for `num_entries` distinct keys; SIZE_MAX for a
 * count no filter can hold (over 2^52). */
size_t sstfilter_builder_filter_size(const sstfilter_builder* b,
                                     size_t num_entries) SSTFILTER_C_NOEXCEPT;

/* Writes the filter of every key added since the last finish and empties the
 * builder for reuse. On success *data (free with sstfilter_free) holds
 * *size bytes; a filter of zero keys is a few bytes, never *data == NULL.
 * On failure *data is NULL, *size 0, and the builder must be destroyed: it
 * may have lost keys, so a filter it writes later could miss them. */
sstfilter_code sstfilter_builder_finish(sstfilter_builder* b, char** data,
                                        size_t* size,
                                        char** errmsg) SSTFILTER_C_NOEXCEPT;

/* ---- readers ------------------------------------------------------------- */

/* A read-only view over the bytes of one filter: it keeps a pointer to
 * them, never a copy. The bytes must stay unchanged and alive until the
 * reader is destroyed. Immutable: share it between threads freely. */
typedef struct sstfilter_reader sstfilter_reader;

/* Opens a reader over data[0, size). Fails only for lack of memory: bytes
 * it cannot read give a reader that matches every key (valid() == 0). */
sstfilter_code sstfilter_reader_open(const char* data, size_t size,
                                     sstfilter_reader** out,
                                     char** errmsg) SSTFILTER_C_NOEXCEPT;
/* The same with a secret: a keyed filter reads only with the secret it was
 * written with (else the reader matches every key). `secret` may be NULL. */
sstfilter_code sstfilter_reader_open_keyed(const char* data, size_t size,
                                           const sstfilter_secret* secret,
                                           sstfilter_reader** out,
                                           char** errmsg) SSTFILTER_C_NOEXCEPT;
void sstfilter_reader_destroy(sstfilter_reader* r) SSTFILTER_C_NOEXCEPT;

/* 1 if the bytes were readable, 0 if the reader matches every key because
 * they were not. */
int sstfilter_reader_valid(const sstfilter_reader* r) SSTFILTER_C_NOEXCEPT;
/* The encoded sstfilter_kind (SSTFILTER_KIND_EMPTY when not valid). */
int sstfilter_reader_kind(const sstfilter_reader* r) SSTFILTER_C_NOEXCEPT;
uint64_t sstfilter_reader_seed(const sstfilter_reader* r) SSTFILTER_C_NOEXCEPT;
/* Bytes of the payload, the filter without its trailer (0 when not valid). */
size_t sstfilter_reader_payload_size(const sstfilter_reader* r)
    SSTFILTER_C_NOEXCEPT;

/* 0 only if the key was certainly not added, else 1. */
int sstfilter_reader_may_match(const sstfilter_reader* r, const char* key,
                               size_t len) SSTFILTER_C_NOEXCEPT;
/* The same for hash == sstfilter_reader_hash(r, key, len) (unkeyed:
 * sstfilter_hash64(key, len, sstfilter_reader_seed(r))). */
int sstfilter_reader_may_match_hash(const sstfilter_reader* r,
                                    uint64_t hash) SSTFILTER_C_NOEXCEPT;
uint64_t sstfilter_reader_hash(const sstfilter_reader* r, const char* key,
                               size_t len) SSTFILTER_C_NOEXCEPT;
/* results[i] = may_match(keys[i], lens[i]) for i < n, faster for many keys
 * (memory of all probes is prefetched first). */
void sstfilter_reader_may_match_batch(
    const sstfilter_reader* r, size_t n, const char* const* keys,
    const size_t* lens, unsigned char* results) SSTFILTER_C_NOEXCEPT;
void sstfilter_reader_may_match_hashes(
    const sstfilter_reader* r, size_t n, const uint64_t* hashes,
    unsigned char* results) SSTFILTER_C_NOEXCEPT;

/* One-shot query without a handle: opens a view over filter[0, size) on the
 * stack and asks about one key. Allocates nothing, so an engine may call it
 * per lookup; prefer a reader to query one filter many times. */
int sstfilter_may_match(const char* filter, size_t size, const char* key,
                        size_t len) SSTFILTER_C_NOEXCEPT;

/* ---- mutable filters (sstfilter/mutable.h) ------------------------------- */

/* A set of keys that accepts inserts and erases at any time: a counting
 * Bloom filter (SSTFILTER_KIND_COUNTING_BLOOM) or a dynamic cuckoo filter
 * (SSTFILTER_KIND_DYNAMIC_CUCKOO). It holds a multiset: a key inserted twice
 * stays until erased twice. Erase only keys that are in the filter: erasing
 * a key never inserted may remove another key's entry, which then reads as
 * absent. Writes (insert, erase) need one thread at a time; const calls
 * (contains, serialize) may run concurrently with each other. */
typedef struct sstfilter_mutable sstfilter_mutable;

typedef struct sstfilter_mutable_options {
  uint64_t capacity;   /* keys the filter is sized for, >= 1 */
  double target_fpr;   /* FPR with `capacity` keys inside, in (0, 1) */
  double bits_per_key; /* if > 0, used instead of target_fpr: counters per
                          key (counting Bloom, 4 bits each) or fingerprint
                          bits (dynamic cuckoo) */
  uint64_t seed;       /* hash seed, stored in serialized bytes */
} sstfilter_mutable_options;

/* Sets the defaults: capacity 0 (set it), target_fpr 0.01, bits_per_key 0,
 * seed 0. */
void sstfilter_mutable_options_init(sstfilter_mutable_options* options)
    SSTFILTER_C_NOEXCEPT;

/* On success *out is an empty filter of `kind` sized by `options`; on
 * failure *out is NULL (INVALID_ARGUMENT names the bad option). */
sstfilter_code sstfilter_mutable_create(
    int kind, const sstfilter_mutable_options* options, sstfilter_mutable** out,
    char** errmsg) SSTFILTER_C_NOEXCEPT;
/* The same, keyed with `secret` (NULL: unkeyed), which must outlive the
 * filter: keys hash with the secret, and the serialized bytes are keyed. */
sstfilter_code sstfilter_mutable_create_keyed(
    int kind, const sstfilter_mutable_options* options,
    const sstfilter_secret* secret, sstfilter_mutable** out,
    char** errmsg) SSTFILTER_C_NOEXCEPT;
void sstfilter_mutable_destroy(sstfilter_mutable* m) SSTFILTER_C_NOEXCEPT;

/* SSTFILTER_KIND_COUNTING_BLOOM or SSTFILTER_KIND_DYNAMIC_CUCKOO. */
int sstfilter_mutable_kind(const sstfilter_mutable* m) SSTFILTER_C_NOEXCEPT;
uint64_t sstfilter_mutable_seed(const sstfilter_mutable* m)
    SSTFILTER_C_NOEXCEPT;
/* Inserts that succeeded minus erases that did, since create or
 * deserialize (a deserialized counting Bloom filter restarts at 0: it keeps
 * no count; a dynamic cuckoo filter counts its stored fingerprints). */
uint64_t sstfilter_mutable_count(const sstfilter_mutable* m)
    SSTFILTER_C_NOEXCEPT;

/* Adds one copy of a key. SSTFILTER_FULL (the filter unchanged) when a
 * dynamic cuckoo filter finds no room, which becomes likely beyond its
 * capacity; a counting Bloom filter always accepts, its FPR growing past
 * the target beyond capacity. */
sstfilter_code sstfilter_mutable_insert(sstfilter_mutable* m, const char* key,
                                        size_t len,
                                        char** errmsg) SSTFILTER_C_NOEXCEPT;
/* Removes one copy of a key: 1 if removed, 0 if the key was certainly
 * absent (nothing changed). REQUIRES: the key is in the filter. */
int sstfilter_mutable_erase(sstfilter_mutable* m, const char* key,
                            size_t len) SSTFILTER_C_NOEXCEPT;
/* 0 only if the key is certainly absent, else 1. A NULL filter says 1. */
int sstfilter_mutable_contains(const sstfilter_mutable* m, const char* key,
                               size_t len) SSTFILTER_C_NOEXCEPT;

/* Writes the filter in the sstfilter format (kind 4 or 5): *data (free with
 * sstfilter_free) holds *size bytes. The bytes can be loaded back with
 * sstfilter_mutable_deserialize, or queried with sstfilter_reader_open. */
sstfilter_code sstfilter_mutable_serialize(const sstfilter_mutable* m,
                                           char** data, size_t* size,
                                           char** errmsg) SSTFILTER_C_NOEXCEPT;
/* Loads bytes that sstfilter_mutable_serialize wrote for a filter of
 * `kind` into a new filter (a copy: the bytes may be freed after).
 * SSTFILTER_CORRUPTION, and *out NULL, for bytes that are not such a
 * filter. */
sstfilter_code sstfilter_mutable_deserialize(
    int kind, const char* data, size_t size, sstfilter_mutable** out,
    char** errmsg) SSTFILTER_C_NOEXCEPT;
/* The same with a secret (NULL: none), which keyed bytes require: without
 * the secret they were written with, SSTFILTER_INVALID_ARGUMENT and *out
 * NULL (sstfilter_reader_open_keyed of them then matches every key). The
 * secret must outlive the filter; unkeyed bytes ignore it. */
sstfilter_code sstfilter_mutable_deserialize_keyed(
    int kind, const char* data, size_t size, const sstfilter_secret* secret,
    sstfilter_mutable** out, char** errmsg) SSTFILTER_C_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SSTFILTER_C_H_ */
