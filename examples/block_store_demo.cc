// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// Writes a store of 100,000 keys with one sstfilter filter per 4 KiB data
// block, then looks up every key and as many absent ones, and prints how
// many block reads the filters saved.
//
//   block_store_demo [--spec=bloom:10] [--path=/tmp/block_store_demo.db]

#include <cstdio>
#include <cstring>
#include <string>

#include "examples/block_store.h"

int main(int argc, char** argv) {
  std::string spec = "bloom:10", path = "/tmp/block_store_demo.db";
  for (int i = 1; i < argc; i++) {
    if (std::strncmp(argv[i], "--spec=", 7) == 0) {
      spec = argv[i] + 7;
    } else if (std::strncmp(argv[i], "--path=", 7) == 0) {
      path = argv[i] + 7;
    } else {
      std::fprintf(stderr, "usage: %s [--spec=SPEC] [--path=FILE]\n", argv[0]);
      return 2;
    }
  }
  const int n = 100000;
  auto key = [](int i, char last) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "user%010d%c", i, last);
    return std::string(buf);
  };

  block_store::Writer writer;
  sstfilter::Status s = writer.Open(path, spec);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  for (int i = 0; i < n; i++)
    writer.Add(key(i, 'a'), "value of " + key(i, 'a'));
  if (!writer.Finish()) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return 1;
  }

  block_store::Store store;
  if (!store.Open(path)) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::string value;
  int missing = 0;
  for (int i = 0; i < n; i++) {
    if (!store.Get(key(i, 'a'), &value) || value != "value of " + key(i, 'a')) {
      missing++;
    }
  }
  const block_store::Stats present = store.stats();
  int found = 0;
  for (int i = 0; i < n; i++) found += store.Get(key(i, 'b'), &value);
  const block_store::Stats& all = store.stats();
  const uint64_t checks = all.filter_checks - present.filter_checks;
  const uint64_t reads = all.blocks_read - present.blocks_read;

  std::printf("%s: %d keys in %zu blocks, filter %s\n", path.c_str(), n,
              store.num_blocks(), spec.c_str());
  std::printf("present keys: %d looked up, %d missing, %llu block reads\n", n,
              missing, static_cast<unsigned long long>(present.blocks_read));
  std::printf(
      "absent keys:  %d looked up, %llu filter checks, %llu block reads "
      "(%.3f%% of checks), %llu reads saved\n",
      n, static_cast<unsigned long long>(checks),
      static_cast<unsigned long long>(reads), 100.0 * reads / checks,
      static_cast<unsigned long long>(all.blocks_skipped));
  std::remove(path.c_str());
  return missing == 0 && found == 0 ? 0 : 1;
}
