/* Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
 *
 * The C API, tested from C (compiled as C11, no C++): every function, bad
 * specs, NULL handles, corrupt and truncated bytes, and a reader shared by
 * threads. Prints one line per failed check and exits non-zero on any.
 */

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sstfilter/c.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    checks++;                                                                  \
    if (!(cond)) {                                                             \
      failures++;                                                              \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* A call that must succeed; prints the message if it does not. */
#define CHECK_OK(call)                                                      \
  do {                                                                      \
    sstfilter_code c_ = (call);                                             \
    checks++;                                                               \
    if (c_ != SSTFILTER_OK) {                                               \
      failures++;                                                           \
      fprintf(stderr, "%s:%d: %s returned %s\n", __FILE__, __LINE__, #call, \
              sstfilter_code_name(c_));                                     \
    }                                                                       \
  } while (0)

/* Fixed keys, so FPR checks never flake: "key-%011llu" + 'a' (present),
 * "nokey-%llu" (absent). */
static size_t Key(unsigned long long i, char* buf) {
  return (size_t)sprintf(buf, "key-%011llua", i);
}
static size_t AbsentKey(unsigned long long i, char* buf) {
  return (size_t)sprintf(buf, "nokey-%llu", i);
}

/* Expects `code` with a non-empty message that contains `needle`. */
static void ExpectError(sstfilter_code got, char* err, sstfilter_code want,
                        const char* needle, int line) {
  checks++;
  if (got != want || err == NULL || strstr(err, needle) == NULL) {
    failures++;
    fprintf(stderr, "line %d: expected %s containing \"%s\", got %s: %s\n",
            line, sstfilter_code_name(want), needle, sstfilter_code_name(got),
            err ? err : "(no message)");
  }
  sstfilter_free(err);
}

static void TestNamesAndCodes(void) {
  CHECK(strcmp(sstfilter_family_name(), "sstfilter.v1") == 0);
  CHECK(strcmp(sstfilter_code_name(SSTFILTER_OK), "OK") == 0);
  CHECK(strcmp(sstfilter_code_name(SSTFILTER_OUT_OF_MEMORY), "Out of memory") ==
        0);
  CHECK(strcmp(sstfilter_code_name(SSTFILTER_FULL), "Full") == 0);
  CHECK(strcmp(sstfilter_code_name((sstfilter_code)77), "Unknown code") == 0);
  CHECK(strcmp(sstfilter_kind_name(SSTFILTER_KIND_BLOOM), "bloom") == 0);
  CHECK(strcmp(sstfilter_kind_name(SSTFILTER_KIND_BLOCKED_BLOOM),
               "blocked_bloom") == 0);
  CHECK(strcmp(sstfilter_kind_name(SSTFILTER_KIND_CUCKOO), "cuckoo") == 0);
  CHECK(strcmp(sstfilter_kind_name(SSTFILTER_KIND_RIBBON), "ribbon") == 0);
  CHECK(strcmp(sstfilter_kind_name(-1), "unknown") == 0);
  CHECK(strcmp(sstfilter_kind_name(200), "unknown") == 0);
  sstfilter_free(NULL);
}

static void TestSpecs(void) {
  char* canonical = NULL;
  char* err = (char*)1; /* must be overwritten */
  CHECK(sstfilter_spec_parse("sstfilter.bloom:10.50", &canonical, &err) ==
        SSTFILTER_OK);
  CHECK(err == NULL);
  CHECK(canonical != NULL && strcmp(canonical, "bloom:10.5") == 0);
  sstfilter_free(canonical);
  CHECK(sstfilter_spec_parse("blocked_bloom:9:seed=7", NULL, NULL) ==
        SSTFILTER_OK);

  sstfilter_code c;
  canonical = (char*)1;
  c = sstfilter_spec_parse("bloom:-3", &canonical, &err);
  CHECK(canonical == NULL);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "bloom:-3", __LINE__);
  c = sstfilter_spec_parse("nope:10", NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "unknown filter kind",
              __LINE__);
  c = sstfilter_spec_parse("bloom", NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "expected <kind>", __LINE__);
  c = sstfilter_spec_parse("bloom:10:salt=1", NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "seed", __LINE__);
  c = sstfilter_spec_parse("bloom:1000", NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "within", __LINE__);
  c = sstfilter_spec_parse(NULL, NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  /* A NULL errmsg is allowed on failure too. */
  CHECK(sstfilter_spec_parse("", NULL, NULL) == SSTFILTER_INVALID_ARGUMENT);
}

static void TestHash(void) {
  /* The published XXH3_64bits vector for "" (seed 0), and seeds matter. */
  CHECK(sstfilter_hash64("", 0, 0) == 0x2d06800538d394c2ull);
  CHECK(sstfilter_hash64(NULL, 0, 0) == 0x2d06800538d394c2ull);
  CHECK(sstfilter_hash64("hello world", 11, 42) == 0x972a5725e93d338eull);
  CHECK(sstfilter_hash64("a", 1, 0) != sstfilter_hash64("a", 1, 1));
}

static void TestParams(void) {
  sstfilter_params p;
  memset(&p, 0, sizeof(p));
  CHECK_OK(
      sstfilter_params_for_fpr(SSTFILTER_KIND_BLOOM, 1000000, 0.01, &p, NULL));
  CHECK(p.kind == SSTFILTER_KIND_BLOOM);
  CHECK(p.num_keys == 1000000);
  CHECK(p.num_probes == 7);
  CHECK(fabs(p.bits_per_key - 9.6) < 0.1);
  CHECK(p.expected_fpr <= 0.01 && p.expected_fpr > 0.009);
  CHECK(p.filter_bytes >= 1190000 && p.filter_bytes <= 1210000);

  CHECK_OK(sstfilter_params_for_fpr(SSTFILTER_KIND_BLOCKED_BLOOM, 1000000,
                                    0.001, &p, NULL));
  CHECK(p.kind == SSTFILTER_KIND_BLOCKED_BLOOM);
  CHECK(p.expected_fpr <= 0.001);
  CHECK(p.bits_per_key > 14.4); /* more than standard Bloom needs */

  CHECK_OK(sstfilter_params_for_spec("bloom:10", 1000, &p, NULL));
  CHECK(p.kind == SSTFILTER_KIND_BLOOM && p.num_probes == 7);
  CHECK(p.filter_bytes > 1250 && p.filter_bytes < 1270);
  CHECK(fabs(p.expected_fpr - 0.00819) < 0.0001);

  char* err = NULL;
  sstfilter_code c;
  c = sstfilter_params_for_fpr(SSTFILTER_KIND_BLOOM, 1000, 0, &p, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "FPR", __LINE__);
  c = sstfilter_params_for_fpr(SSTFILTER_KIND_BLOOM, 1000, 1.5, &p, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "FPR", __LINE__);
  c = sstfilter_params_for_fpr(SSTFILTER_KIND_BLOOM, 1000, NAN, &p, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "FPR", __LINE__);
  c = sstfilter_params_for_fpr(SSTFILTER_KIND_BLOOM, 1000, 1e-30, &p, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "cannot reach", __LINE__);
  c = sstfilter_params_for_fpr(-1, 1000, 0.01, &p, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "kind", __LINE__);
  c = sstfilter_params_for_fpr(SSTFILTER_KIND_EMPTY, 1000, 0.01, &p, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "empty", __LINE__);
  c = sstfilter_params_for_fpr(SSTFILTER_KIND_BLOOM, 1000, 0.01, NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  c = sstfilter_params_for_spec("bloom:0.5", 1000, &p, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "bits per key", __LINE__);
}

static void TestPlanLevelBits(void) {
  const uint64_t runs[4] = {0, 1000000, 10000000, 100000000};
  double bits[4] = {-1, -1, -1, -1}, fpr[4];
  double fp = 0, uniform = 0;
  CHECK_OK(sstfilter_plan_level_bits(SSTFILTER_KIND_BLOOM, runs, 4, 10, bits,
                                     fpr, &fp, &uniform, NULL));
  CHECK(bits[0] == 0 && fpr[0] == 0);
  CHECK(bits[1] > bits[2] && bits[2] > bits[3]);
  CHECK(bits[3] < 10 && bits[1] > 15);
  CHECK(fabs(fp - (fpr[1] + fpr[2] + fpr[3])) < 1e-12);
  CHECK(fp < 0.5 * uniform);
  /* Memory is the average's: keys-weighted mean of bits per key ~ 10. */
  const double mean =
      (bits[1] * 1e6 + bits[2] * 1e7 + bits[3] * 1e8) / 111000000.0;
  CHECK(fabs(mean - 10) < 0.01);
  CHECK_OK(sstfilter_plan_level_bits(SSTFILTER_KIND_CUCKOO, runs + 3, 1, 12,
                                     bits, NULL, NULL, NULL, NULL));
  CHECK(bits[0] == 12);

  char* err = NULL;
  sstfilter_code c;
  c = sstfilter_plan_level_bits(SSTFILTER_KIND_BLOOM, runs, 0, 10, bits, NULL,
                                NULL, NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "at least one run", __LINE__);
  c = sstfilter_plan_level_bits(SSTFILTER_KIND_BLOOM, NULL, 2, 10, bits, NULL,
                                NULL, NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  c = sstfilter_plan_level_bits(SSTFILTER_KIND_BLOOM, runs, 4, 10, NULL, NULL,
                                NULL, NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  c = sstfilter_plan_level_bits(SSTFILTER_KIND_BLOOM, runs, 4, 0.2, bits, NULL,
                                NULL, NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "bits per key", __LINE__);
  c = sstfilter_plan_level_bits(SSTFILTER_KIND_COUNTING_BLOOM, runs, 4, 10,
                                bits, NULL, NULL, NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "no builder", __LINE__);
}

/* Builds the filter of Key(0 .. n-1) for `spec` using every way of adding
 * keys: one at a time, in batches, and as hashes. */
static char* Build(const char* spec, unsigned long long n, size_t* size) {
  sstfilter_builder* b = NULL;
  char* err = NULL;
  if (sstfilter_builder_create(spec, &b, &err) != SSTFILTER_OK) {
    fprintf(stderr, "create %s: %s\n", spec, err ? err : "?");
    sstfilter_free(err);
    failures++;
    return NULL;
  }
  const uint64_t seed = sstfilter_builder_seed(b);
  char buf[8][32];
  const char* keys[8];
  size_t lens[8];
  unsigned long long i = 0;
  while (i < n) {
    char key[32];
    size_t len = Key(i, key);
    if (i % 3 == 0) {
      CHECK_OK(sstfilter_builder_add_key(b, key, len, NULL));
      i++;
    } else if (i % 3 == 1) {
      CHECK_OK(sstfilter_builder_add_hash(b, sstfilter_hash64(key, len, seed),
                                          NULL));
      i++;
    } else {
      size_t m = 0;
      for (; m < 8 && i < n; m++, i++) {
        lens[m] = Key(i, buf[m]);
        keys[m] = buf[m];
      }
      CHECK_OK(sstfilter_builder_add_keys(b, m, keys, lens, NULL));
    }
  }
  CHECK(sstfilter_builder_num_entries(b) == n);
  const size_t predicted = sstfilter_builder_filter_size(b, (size_t)n);
  char* data = NULL;
  CHECK_OK(sstfilter_builder_finish(b, &data, size, NULL));
  CHECK(data != NULL);
  CHECK(*size == predicted);
  CHECK(sstfilter_builder_num_entries(b) == 0);
  sstfilter_builder_destroy(b);
  return data;
}

static void TestBuildAndRead(const char* spec, int expected_kind) {
  const unsigned long long n = 20000;
  size_t size = 0;
  char* data = Build(spec, n, &size);
  if (data == NULL) return;

  sstfilter_reader* r = NULL;
  CHECK_OK(sstfilter_reader_open(data, size, &r, NULL));
  CHECK(sstfilter_reader_valid(r));
  CHECK(sstfilter_reader_kind(r) == expected_kind);

  /* No false negatives: single, batched and hashed. */
  int misses = 0;
  char key[32];
  for (unsigned long long i = 0; i < n; i++) {
    size_t len = Key(i, key);
    if (!sstfilter_reader_may_match(r, key, len)) misses++;
    if (!sstfilter_reader_may_match_hash(
            r, sstfilter_hash64(key, len, sstfilter_reader_seed(r)))) {
      misses++;
    }
    if (!sstfilter_may_match(data, size, key, len)) misses++;
  }
  CHECK(misses == 0);

  /* Batched, across more than one internal round (64 keys). */
  enum { kBatch = 1000 };
  static char bufs[kBatch][32];
  const char* keys[kBatch];
  size_t lens[kBatch];
  uint64_t hashes[kBatch];
  unsigned char results[kBatch], hash_results[kBatch];
  for (int i = 0; i < kBatch; i++) {
    lens[i] = Key((unsigned long long)i * 7, bufs[i]);
    keys[i] = bufs[i];
    hashes[i] = sstfilter_hash64(keys[i], lens[i], sstfilter_reader_seed(r));
  }
  memset(results, 0, sizeof(results));
  sstfilter_reader_may_match_batch(r, kBatch, keys, lens, results);
  sstfilter_reader_may_match_hashes(r, kBatch, hashes, hash_results);
  int batch_misses = 0;
  for (int i = 0; i < kBatch; i++) {
    if (results[i] != 1 || hash_results[i] != 1) batch_misses++;
  }
  CHECK(batch_misses == 0);

  /* FPR under a ceiling over fixed absent keys, and the batch agrees with
   * single queries on them. */
  sstfilter_params p;
  CHECK_OK(sstfilter_params_for_spec(spec, n, &p, NULL));
  const int probes = 100000;
  int fp = 0, disagree = 0;
  for (int i = 0; i < probes; i += kBatch) {
    for (int j = 0; j < kBatch; j++) {
      lens[j] = AbsentKey((unsigned long long)(i + j), bufs[j]);
    }
    sstfilter_reader_may_match_batch(r, kBatch, keys, lens, results);
    for (int j = 0; j < kBatch; j++) {
      fp += results[j];
      if (results[j] != sstfilter_reader_may_match(r, keys[j], lens[j]))
        disagree++;
    }
  }
  const double fpr = (double)fp / probes;
  printf("  %-22s %zu bytes, expected FPR %.4f%%, measured %.4f%%\n", spec,
         size, 100 * p.expected_fpr, 100 * fpr);
  CHECK(fpr <= 1.3 * p.expected_fpr + 0.001);
  CHECK(fp > 0); /* the filter is not trivially "no" */
  CHECK(disagree == 0);
  sstfilter_reader_destroy(r);

  /* A reader is a view, not a copy: clearing the payload it points into
   * changes its answers (no key matches an all-zero Bloom payload). */
  CHECK_OK(sstfilter_reader_open(data, size, &r, NULL));
  CHECK(sstfilter_reader_payload_size(r) > 0 &&
        sstfilter_reader_payload_size(r) < size);
  if (expected_kind == SSTFILTER_KIND_BLOOM ||
      expected_kind == SSTFILTER_KIND_BLOCKED_BLOOM) {
    memset(data, 0, sstfilter_reader_payload_size(r));
    size_t len = Key(0, key);
    CHECK(sstfilter_reader_may_match(r, key, len) == 0);
  }
  sstfilter_reader_destroy(r);
  sstfilter_free(data);
}

static void TestEmptyAndReuse(void) {
  sstfilter_builder* b = NULL;
  CHECK_OK(sstfilter_builder_create("bloom:10:seed=9", &b, NULL));
  char* data = NULL;
  size_t size = 0;
  /* Zero keys: a few bytes that never match. */
  CHECK_OK(sstfilter_builder_finish(b, &data, &size, NULL));
  CHECK(data != NULL && size > 0 && size <= 16);
  sstfilter_reader* r = NULL;
  CHECK_OK(sstfilter_reader_open(data, size, &r, NULL));
  CHECK(sstfilter_reader_valid(r));
  CHECK(sstfilter_reader_kind(r) == SSTFILTER_KIND_EMPTY);
  CHECK(sstfilter_reader_seed(r) == 9);
  CHECK(sstfilter_reader_may_match(r, "x", 1) == 0);
  CHECK(sstfilter_reader_may_match(r, NULL, 0) == 0);
  sstfilter_reader_destroy(r);
  sstfilter_free(data);

  /* The same builder, reused, with the empty key. */
  CHECK_OK(sstfilter_builder_add_key(b, NULL, 0, NULL));
  CHECK_OK(sstfilter_builder_add_key(b, "x", 1, NULL));
  CHECK_OK(sstfilter_builder_finish(b, &data, &size, NULL));
  CHECK_OK(sstfilter_reader_open(data, size, &r, NULL));
  CHECK(sstfilter_reader_kind(r) == SSTFILTER_KIND_BLOOM);
  CHECK(sstfilter_reader_seed(r) == 9);
  CHECK(sstfilter_reader_may_match(r, "", 0) == 1);
  CHECK(sstfilter_reader_may_match(r, "x", 1) == 1);
  sstfilter_reader_destroy(r);
  sstfilter_free(data);
  sstfilter_builder_destroy(b);
}

static void TestBadBuilderCalls(void) {
  char* err = NULL;
  sstfilter_builder* b = (sstfilter_builder*)1;
  sstfilter_code c = sstfilter_builder_create("bloom:abc", &b, &err);
  CHECK(b == NULL);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "bloom:abc", __LINE__);
  c = sstfilter_builder_create("counting_bloom:10", &b, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "counting_bloom", __LINE__);
  c = sstfilter_builder_create(NULL, &b, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  c = sstfilter_builder_create("bloom:10", NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);

  c = sstfilter_builder_add_key(NULL, "k", 1, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  c = sstfilter_builder_add_hash(NULL, 1, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  char* data = (char*)1;
  size_t size = 5;
  c = sstfilter_builder_finish(NULL, &data, &size, &err);
  CHECK(data == NULL && size == 0);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  CHECK(sstfilter_builder_num_entries(NULL) == 0);
  sstfilter_builder_destroy(NULL);

  CHECK_OK(sstfilter_builder_create("blocked_bloom:10", &b, NULL));
  c = sstfilter_builder_add_key(b, NULL, 3, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  const char* keys[2] = {"ok", NULL};
  size_t lens[2] = {2, 4};
  c = sstfilter_builder_add_keys(b, 2, keys, lens, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "key 1", __LINE__);
  CHECK(sstfilter_builder_num_entries(b) == 1); /* "ok" was added */
  c = sstfilter_builder_add_keys(b, 2, NULL, lens, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  CHECK_OK(sstfilter_builder_add_keys(b, 0, NULL, NULL, NULL));
  c = sstfilter_builder_finish(b, NULL, &size, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  sstfilter_builder_destroy(b);
}

/* Every truncation and every single-bit flip of the trailer of a filter
 * must give a reader that matches all keys, never one that misses. */
static void TestCorruptBytes(const char* spec) {
  const unsigned long long n = 50;
  size_t size = 0;
  char* data = Build(spec, n, &size);
  if (data == NULL) return;
  char* copy = (char*)malloc(size);
  char key[32];
  int bad = 0;
  sstfilter_reader* r = NULL;

  /* Every prefix and every suffix, each in an exactly-sized heap block so
   * that ASan catches a read outside the bytes. A compact filter's 7-bit
   * check (docs/FORMAT.md) misses a cut with probability 2^-7: at most
   * twice that rate (and 1) may read as valid; the others match every
   * key. */
  int cuts = 0, passed = 0;
  for (size_t cut = 1; cut <= size; cut++) {
    for (int from_front = 0; from_front < 2; from_front++) {
      const size_t len = size - cut;
      char* part = (char*)malloc(len + 1);
      memcpy(part, from_front ? data + cut : data, len);
      CHECK_OK(sstfilter_reader_open(part, len, &r, NULL));
      cuts++;
      if (sstfilter_reader_valid(r)) {
        passed++;
      } else {
        for (unsigned long long i = 0; i < n; i++) {
          if (!sstfilter_reader_may_match(r, key, Key(i, key))) bad++;
        }
      }
      sstfilter_reader_destroy(r);
      free(part);
    }
  }
  CHECK(passed <= 1 + cuts / 64);
  /* Flip each bit of the last 16 bytes (the trailer and a little payload):
   * a flip in the trailer must be detected; one in the payload may
   * legitimately change answers, so only trailer flips are checked. */
  const size_t tail_start = size > 16 ? size - 16 : 0;
  int trailer_flips = 0;
  for (size_t pos = tail_start; pos < size; pos++) {
    for (int bit = 0; bit < 8; bit++) {
      memcpy(copy, data, size);
      copy[pos] ^= (char)(1 << bit);
      CHECK_OK(sstfilter_reader_open(copy, size, &r, NULL));
      if (!sstfilter_reader_valid(r)) {
        trailer_flips++;
        for (unsigned long long i = 0; i < n; i++) {
          if (!sstfilter_reader_may_match(r, key, Key(i, key))) bad++;
        }
      }
      sstfilter_reader_destroy(r);
    }
  }
  CHECK(trailer_flips >= 2 * 8); /* at least the 2-byte compact trailer */
  /* Garbage: all zeros, all ones. */
  memset(copy, 0, size);
  CHECK(sstfilter_may_match(copy, size, "k", 1) == 1);
  memset(copy, 0xff, size);
  CHECK(sstfilter_may_match(copy, size, "k", 1) == 1);
  CHECK(sstfilter_may_match(NULL, 0, "k", 1) == 1);
  CHECK(sstfilter_may_match(NULL, 10, "k", 1) == 1);
  CHECK(sstfilter_may_match(data, size, NULL, 3) == 1);
  CHECK(bad == 0);
  free(copy);
  sstfilter_free(data);

  /* NULL handles and arguments to readers. */
  char* err = NULL;
  sstfilter_code c = sstfilter_reader_open(NULL, 5, &r, &err);
  CHECK(r == NULL);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  c = sstfilter_reader_open("abc", 3, NULL, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  CHECK(sstfilter_reader_may_match(NULL, "k", 1) == 1);
  CHECK(sstfilter_reader_may_match_hash(NULL, 1) == 1);
  CHECK(sstfilter_reader_valid(NULL) == 0);
  unsigned char res[2] = {0, 0};
  const char* ks[2] = {"a", "b"};
  size_t ls[2] = {1, 1};
  sstfilter_reader_may_match_batch(NULL, 2, ks, ls, res);
  CHECK(res[0] == 1 && res[1] == 1);
  sstfilter_reader_destroy(NULL);
}

static int CountContained(const sstfilter_mutable* m, unsigned long long from,
                          unsigned long long to, int absent) {
  char key[32];
  int n = 0;
  for (unsigned long long i = from; i < to; i++) {
    size_t len = absent ? AbsentKey(i, key) : Key(i, key);
    n += sstfilter_mutable_contains(m, key, len);
  }
  return n;
}

static void TestMutable(int kind) {
  const unsigned long long n = 10000;
  char key[32];
  size_t len;
  char* err = NULL;
  sstfilter_code c;
  sstfilter_mutable_options o;
  memset(&o, 0xff, sizeof(o));
  sstfilter_mutable_options_init(&o);
  CHECK(o.capacity == 0 && o.target_fpr == 0.01 && o.bits_per_key == 0 &&
        o.seed == 0);

  /* Bad options and kinds. */
  sstfilter_mutable* m = (sstfilter_mutable*)1;
  c = sstfilter_mutable_create(kind, &o, &m, &err);
  CHECK(m == NULL);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "capacity", __LINE__);
  o.capacity = n;
  c = sstfilter_mutable_create(SSTFILTER_KIND_BLOOM, &o, &m, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "mutable filter kind",
              __LINE__);
  o.target_fpr = 0;
  c = sstfilter_mutable_create(kind, &o, &m, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "target_fpr", __LINE__);
  o.target_fpr = 0.01;
  o.bits_per_key = 100;
  c = sstfilter_mutable_create(kind, &o, &m, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "bits_per_key", __LINE__);
  o.bits_per_key = 0;
  c = sstfilter_mutable_create(kind, NULL, &m, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);

  o.seed = 5;
  CHECK_OK(sstfilter_mutable_create(kind, &o, &m, NULL));
  CHECK(sstfilter_mutable_kind(m) == kind);
  CHECK(sstfilter_mutable_seed(m) == 5);
  CHECK(sstfilter_mutable_count(m) == 0);
  CHECK(CountContained(m, 0, n, 0) == 0); /* empty: nothing matches */

  /* Insert to capacity: every key found, FPR near the target. */
  int failed = 0;
  for (unsigned long long i = 0; i < n; i++) {
    len = Key(i, key);
    failed += sstfilter_mutable_insert(m, key, len, NULL) != SSTFILTER_OK;
  }
  CHECK(failed == 0);
  CHECK(sstfilter_mutable_count(m) == n);
  CHECK(CountContained(m, 0, n, 0) == (int)n);
  const int probes = 100000;
  const int fp = CountContained(m, 0, probes, 1);
  printf("  mutable %-15s FPR at capacity %.4f%% (target 1%%)\n",
         sstfilter_kind_name(kind), 100.0 * fp / probes);
  CHECK(fp > 0 && fp <= probes * 0.015);

  /* Erase the even keys: the odd ones stay, the even ones mostly go. */
  int erased = 0;
  for (unsigned long long i = 0; i < n; i += 2) {
    len = Key(i, key);
    erased += sstfilter_mutable_erase(m, key, len);
  }
  CHECK(erased == (int)n / 2);
  CHECK(sstfilter_mutable_count(m) == n / 2);
  int odd = 0, even = 0;
  for (unsigned long long i = 0; i < n; i++) {
    len = Key(i, key);
    if (i % 2)
      odd += sstfilter_mutable_contains(m, key, len);
    else
      even += sstfilter_mutable_contains(m, key, len);
  }
  CHECK(odd == (int)n / 2);
  CHECK(even <= (int)n / 2 / 20);
  /* A certainly-absent key is not erased. */
  for (unsigned long long i = 0;; i++) {
    len = AbsentKey(i, key);
    if (!sstfilter_mutable_contains(m, key, len)) break;
  }
  CHECK(sstfilter_mutable_erase(m, key, len) == 0);
  CHECK(sstfilter_mutable_count(m) == n / 2);
  /* A multiset: two copies need two erases. */
  CHECK_OK(sstfilter_mutable_insert(m, "twice", 5, NULL));
  CHECK_OK(sstfilter_mutable_insert(m, "twice", 5, NULL));
  CHECK(sstfilter_mutable_erase(m, "twice", 5) == 1);
  CHECK(sstfilter_mutable_contains(m, "twice", 5) == 1);
  CHECK(sstfilter_mutable_erase(m, "twice", 5) == 1);

  /* Serialize; the bytes are a filter any reader reads, and load back. */
  char* data = NULL;
  size_t size = 0;
  CHECK_OK(sstfilter_mutable_serialize(m, &data, &size, NULL));
  sstfilter_reader* r = NULL;
  CHECK_OK(sstfilter_reader_open(data, size, &r, NULL));
  CHECK(sstfilter_reader_valid(r));
  CHECK(sstfilter_reader_kind(r) == kind);
  CHECK(sstfilter_reader_seed(r) == 5);
  int misses = 0;
  for (unsigned long long i = 1; i < n; i += 2) {
    len = Key(i, key);
    misses += !sstfilter_reader_may_match(r, key, len);
  }
  CHECK(misses == 0);
  sstfilter_reader_destroy(r);

  sstfilter_mutable* loaded = NULL;
  CHECK_OK(sstfilter_mutable_deserialize(kind, data, size, &loaded, NULL));
  CHECK(sstfilter_mutable_kind(loaded) == kind);
  CHECK(sstfilter_mutable_seed(loaded) == 5);
  if (kind == SSTFILTER_KIND_DYNAMIC_CUCKOO) {
    CHECK(sstfilter_mutable_count(loaded) == n / 2);
  }
  odd = 0;
  for (unsigned long long i = 1; i < n; i += 2) {
    len = Key(i, key);
    odd += sstfilter_mutable_contains(loaded, key, len);
  }
  CHECK(odd == (int)n / 2);
  /* The copy is independent of the bytes and of the original. */
  memset(data, 0, size);
  CHECK_OK(sstfilter_mutable_insert(loaded, "new", 3, NULL));
  CHECK(sstfilter_mutable_contains(loaded, "new", 3) == 1);
  len = Key(1, key);
  CHECK(sstfilter_mutable_contains(loaded, key, len) == 1);
  sstfilter_mutable_destroy(loaded);

  /* Bytes that are not this kind of filter. */
  loaded = (sstfilter_mutable*)1;
  c = sstfilter_mutable_deserialize(kind, data, size, &loaded,
                                    &err); /* zeros */
  CHECK(loaded == NULL);
  ExpectError(c, err, SSTFILTER_CORRUPTION, "", __LINE__);
  sstfilter_free(data);
  CHECK_OK(sstfilter_mutable_serialize(m, &data, &size, NULL));
  c = sstfilter_mutable_deserialize(kind, data, size - 1, &loaded, &err);
  ExpectError(c, err, SSTFILTER_CORRUPTION, "", __LINE__);
  const int other = kind == SSTFILTER_KIND_COUNTING_BLOOM
                        ? SSTFILTER_KIND_DYNAMIC_CUCKOO
                        : SSTFILTER_KIND_COUNTING_BLOOM;
  c = sstfilter_mutable_deserialize(other, data, size, &loaded, &err);
  ExpectError(c, err, SSTFILTER_CORRUPTION, sstfilter_kind_name(other),
              __LINE__);
  size_t fsize = 0;
  char* static_filter = Build("bloom:10", 10, &fsize);
  c = sstfilter_mutable_deserialize(kind, static_filter, fsize, &loaded, &err);
  ExpectError(c, err, SSTFILTER_CORRUPTION, "bloom", __LINE__);
  sstfilter_free(static_filter);
  c = sstfilter_mutable_deserialize(kind, NULL, 4, &loaded, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  c = sstfilter_mutable_deserialize(SSTFILTER_KIND_CUCKOO, data, size, &loaded,
                                    &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "mutable filter kind",
              __LINE__);
  sstfilter_free(data);

  /* Beyond capacity: a dynamic cuckoo filter fills up and says so, keeping
   * every key it accepted; a counting Bloom filter accepts everything. */
  sstfilter_mutable_destroy(m);
  o.capacity = 100;
  CHECK_OK(sstfilter_mutable_create(kind, &o, &m, NULL));
  unsigned long long accepted = 0, i = 0;
  for (; i < 1000; i++) {
    len = Key(i, key);
    c = sstfilter_mutable_insert(m, key, len, &err);
    if (c == SSTFILTER_FULL) {
      ExpectError(c, err, SSTFILTER_FULL, "full", __LINE__);
      break;
    }
    CHECK(c == SSTFILTER_OK);
    accepted++;
  }
  if (kind == SSTFILTER_KIND_DYNAMIC_CUCKOO) {
    CHECK(i < 1000 && accepted >= 95);
  } else {
    CHECK(accepted == 1000);
  }
  CHECK(sstfilter_mutable_count(m) == accepted);
  CHECK(CountContained(m, 0, accepted, 0) == (int)accepted);
  sstfilter_mutable_destroy(m);

  /* NULL handles. */
  CHECK(sstfilter_mutable_contains(NULL, "k", 1) == 1);
  CHECK(sstfilter_mutable_erase(NULL, "k", 1) == 0);
  CHECK(sstfilter_mutable_count(NULL) == 0);
  c = sstfilter_mutable_insert(NULL, "k", 1, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  c = sstfilter_mutable_serialize(NULL, &data, &size, &err);
  CHECK(data == NULL && size == 0);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "NULL", __LINE__);
  sstfilter_mutable_destroy(NULL);
  sstfilter_mutable_options_init(NULL);
}

/* One reader, many threads: all see every key. */
struct ThreadArg {
  const sstfilter_reader* reader;
  unsigned long long n;
  int misses;
};

static void* QueryAll(void* p) {
  struct ThreadArg* a = (struct ThreadArg*)p;
  char key[32];
  for (int round = 0; round < 5; round++) {
    for (unsigned long long i = 0; i < a->n; i++) {
      if (!sstfilter_reader_may_match(a->reader, key, Key(i, key))) a->misses++;
    }
  }
  return NULL;
}

static void TestSharedReader(void) {
  const unsigned long long n = 10000;
  size_t size = 0;
  char* data = Build("blocked_bloom:10", n, &size);
  if (data == NULL) return;
  sstfilter_reader* r = NULL;
  CHECK_OK(sstfilter_reader_open(data, size, &r, NULL));
  enum { kThreads = 4 };
  pthread_t threads[kThreads];
  struct ThreadArg args[kThreads];
  for (int t = 0; t < kThreads; t++) {
    args[t].reader = r;
    args[t].n = n;
    args[t].misses = 0;
    CHECK(pthread_create(&threads[t], NULL, QueryAll, &args[t]) == 0);
  }
  for (int t = 0; t < kThreads; t++) {
    pthread_join(threads[t], NULL);
    CHECK(args[t].misses == 0);
  }
  sstfilter_reader_destroy(r);
  sstfilter_free(data);
}

/* Keyed and salted filters: a keyed spec needs a secret; with it every key
 * matches (by key and by the builder's and reader's hashes); without it, or
 * with another one, the reader matches every key. */
static void TestKeyed(const char* spec) {
  static const char kSecret[] = "C API test secret, 32 bytes long";
  sstfilter_secret* secret = NULL;
  sstfilter_secret* other = NULL;
  char* err = NULL;
  sstfilter_code c = sstfilter_secret_create("short", 5, &secret, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "at least 16 bytes",
              __LINE__);
  CHECK(secret == NULL);
  CHECK_OK(sstfilter_secret_create(kSecret, strlen(kSecret), &secret, NULL));
  CHECK_OK(sstfilter_secret_create("another secret, 32 bytes long...", 32,
                                   &other, NULL));
  CHECK(sstfilter_secret_key_id(secret) != sstfilter_secret_key_id(other));

  sstfilter_builder* b = NULL;
  c = sstfilter_builder_create(spec, &b, &err);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "is keyed", __LINE__);
  CHECK(b == NULL);
  CHECK_OK(sstfilter_builder_create_keyed(spec, secret, &b, NULL));
  if (b == NULL) return;
  const unsigned long long n = 3000;
  char key[32];
  for (unsigned long long i = 0; i < n; i++) {
    size_t len = Key(i, key);
    if (i % 2 == 0) {
      CHECK_OK(sstfilter_builder_add_key(b, key, len, NULL));
    } else {
      CHECK_OK(sstfilter_builder_add_hash(
          b, sstfilter_builder_hash(b, key, len), NULL));
    }
  }
  const uint64_t seed = sstfilter_builder_seed(b);
  char* data = NULL;
  size_t size = 0;
  CHECK_OK(sstfilter_builder_finish(b, &data, &size, NULL));
  if (strstr(spec, "salt") != NULL) {
    CHECK(seed != 0 && sstfilter_builder_seed(b) != seed);
  }
  sstfilter_reader* r = NULL;
  sstfilter_reader* blind = NULL;
  sstfilter_reader* wrong = NULL;
  CHECK_OK(sstfilter_reader_open_keyed(data, size, secret, &r, NULL));
  CHECK_OK(sstfilter_reader_open(data, size, &blind, NULL));
  CHECK_OK(sstfilter_reader_open_keyed(data, size, other, &wrong, NULL));
  CHECK(sstfilter_reader_valid(r));
  CHECK(sstfilter_reader_seed(r) == seed);
  CHECK(!sstfilter_reader_valid(blind) && !sstfilter_reader_valid(wrong));
  int misses = 0, fp = 0, blind_no = 0;
  for (unsigned long long i = 0; i < n; i++) {
    size_t len = Key(i, key);
    if (!sstfilter_reader_may_match(r, key, len)) misses++;
    if (!sstfilter_reader_may_match_hash(r,
                                         sstfilter_reader_hash(r, key, len))) {
      misses++;
    }
    len = AbsentKey(i, key);
    fp += sstfilter_reader_may_match(r, key, len);
    blind_no += !sstfilter_reader_may_match(blind, key, len);
    blind_no += !sstfilter_reader_may_match(wrong, key, len);
  }
  CHECK(misses == 0);
  CHECK(fp < 100); /* ~1% of 3000 */
  CHECK(blind_no == 0);
  sstfilter_reader_destroy(r);
  sstfilter_reader_destroy(blind);
  sstfilter_reader_destroy(wrong);
  sstfilter_free(data);
  sstfilter_builder_destroy(b);
  sstfilter_secret_destroy(secret);
  sstfilter_secret_destroy(other);
}

/* Keyed mutable filters: a keyed filter serializes keyed bytes that load
 * and read with its secret only; without it, or with another, loading
 * fails and a reader matches every key. */
static void TestKeyedMutable(int kind) {
  static const char kSecret[] = "C API test secret, 32 bytes long";
  sstfilter_secret* secret = NULL;
  sstfilter_secret* other = NULL;
  CHECK_OK(sstfilter_secret_create(kSecret, strlen(kSecret), &secret, NULL));
  CHECK_OK(sstfilter_secret_create("another secret, 32 bytes long...", 32,
                                   &other, NULL));
  sstfilter_mutable_options o;
  sstfilter_mutable_options_init(&o);
  o.capacity = 1000;
  sstfilter_mutable* m = NULL;
  CHECK_OK(sstfilter_mutable_create_keyed(kind, &o, secret, &m, NULL));
  if (m == NULL) return;
  char key[32];
  for (unsigned long long i = 0; i < 1000; i++) {
    size_t len = Key(i, key);
    CHECK_OK(sstfilter_mutable_insert(m, key, len, NULL));
  }
  char* data = NULL;
  size_t size = 0;
  CHECK_OK(sstfilter_mutable_serialize(m, &data, &size, NULL));
  sstfilter_mutable* loaded = NULL;
  CHECK_OK(sstfilter_mutable_deserialize_keyed(kind, data, size, secret,
                                               &loaded, NULL));
  sstfilter_reader* r = NULL;
  sstfilter_reader* blind = NULL;
  CHECK_OK(sstfilter_reader_open_keyed(data, size, secret, &r, NULL));
  CHECK_OK(sstfilter_reader_open_keyed(data, size, other, &blind, NULL));
  CHECK(sstfilter_reader_valid(r) && !sstfilter_reader_valid(blind));
  int misses = 0, fp = 0, differ = 0, blind_no = 0;
  for (unsigned long long i = 0; i < 1000; i++) {
    size_t len = Key(i, key);
    misses += !sstfilter_mutable_contains(loaded, key, len);
    misses += !sstfilter_reader_may_match(r, key, len);
    len = AbsentKey(i, key);
    fp += sstfilter_mutable_contains(loaded, key, len);
    differ += sstfilter_mutable_contains(m, key, len) !=
              sstfilter_reader_may_match(r, key, len);
    blind_no += !sstfilter_reader_may_match(blind, key, len);
  }
  CHECK(misses == 0);
  CHECK(fp < 50); /* ~1% of 1000 */
  CHECK(differ == 0);
  CHECK(blind_no == 0);
  char* err = NULL;
  sstfilter_mutable* refused = (sstfilter_mutable*)1;
  sstfilter_code c =
      sstfilter_mutable_deserialize(kind, data, size, &refused, &err);
  CHECK(refused == NULL);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "FilterSecret", __LINE__);
  c = sstfilter_mutable_deserialize_keyed(kind, data, size, other, &refused,
                                          &err);
  CHECK(refused == NULL);
  ExpectError(c, err, SSTFILTER_INVALID_ARGUMENT, "key id", __LINE__);
  sstfilter_reader_destroy(r);
  sstfilter_reader_destroy(blind);
  sstfilter_mutable_destroy(loaded);
  sstfilter_mutable_destroy(m);
  sstfilter_free(data);
  sstfilter_secret_destroy(secret);
  sstfilter_secret_destroy(other);
}

int main(void) {
  printf("sstfilter C API test\n");
  TestNamesAndCodes();
  TestSpecs();
  TestHash();
  TestParams();
  TestPlanLevelBits();
  TestBuildAndRead("bloom:10", SSTFILTER_KIND_BLOOM);
  TestBuildAndRead("blocked_bloom:10", SSTFILTER_KIND_BLOCKED_BLOOM);
  TestBuildAndRead("bloom:16:seed=12345", SSTFILTER_KIND_BLOOM);
  TestEmptyAndReuse();
  TestBadBuilderCalls();
  TestCorruptBytes("bloom:10");
  TestCorruptBytes("blocked_bloom:10:seed=3");
  TestSharedReader();
  TestMutable(SSTFILTER_KIND_COUNTING_BLOOM);
  TestMutable(SSTFILTER_KIND_DYNAMIC_CUCKOO);
  TestBuildAndRead("cuckoo:12", SSTFILTER_KIND_CUCKOO);
  TestCorruptBytes("cuckoo:12");
  TestBuildAndRead("ribbon:9.5", SSTFILTER_KIND_RIBBON);
  TestCorruptBytes("ribbon:9.5");
  TestKeyed("blocked_bloom:10:keyed");
  TestKeyed("cuckoo:12:keyed:salt");
  TestKeyed("ribbon:10:keyed:salt");
  TestKeyedMutable(SSTFILTER_KIND_COUNTING_BLOOM);
  TestKeyedMutable(SSTFILTER_KIND_DYNAMIC_CUCKOO);
  printf("%d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
