// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// make_corpus DIR: writes the seed corpus of the fuzz targets into DIR
// (committed as fuzz/corpus; regenerate with tools/fuzz --corpus):
//   DIR/filters/       golden filters of every kind the format has, built
//                      by this version's builders: empty, tiny, LevelDB-
//                      sized and block-sized, with and without a seed, the
//                      mutable kinds, keyed filters (fuzz_util.h's
//                      secret), and a few damaged ones
//   DIR/specs/         edge-case spec strings
//   DIR/differential/  inputs of differential_fuzzer (kind, size, keys)
// The keys are "key0", "key1", ... as in fuzz_util.h's probe keys.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "sstfilter/filter.h"
#include "sstfilter/mutable.h"
#include "sstfilter/spec.h"

namespace {

namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "make_corpus: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

std::string Key(int i) { return "key" + std::to_string(i); }

std::string Build(const std::string& text, int n) {
  sstfilter::FilterSpec spec;
  std::unique_ptr<sstfilter::FilterBuilder> b;
  if (!sstfilter::ParseFilterSpec(text, &spec).ok() ||
      !sstfilter::NewFilterBuilder(spec, &b, sstfilter::fuzz::FuzzSecret())
           .ok()) {
    std::fprintf(stderr, "make_corpus: bad spec %s\n", text.c_str());
    std::exit(1);
  }
  for (int i = 0; i < n; i++) b->AddKey(Key(i));
  std::string bytes;
  b->Finish(&bytes);
  return bytes;
}

std::string Name(std::string s) {
  for (char& c : s) {
    if (c == ':' || c == '=' || c == '.') c = '_';
  }
  return s;
}

// Specs of every kind a spec names (the kinds table): its example, its
// fewest and most bits per key, a fraction, the largest seed.
std::vector<std::string> StaticSpecs() {
  std::vector<std::string> specs;
  for (sstfilter::FilterKind kind : sstfilter::SpecKinds()) {
    const std::string name = sstfilter::FilterKindName(kind);
    sstfilter::FilterSpec spec;
    spec.kind = kind;
    spec.bits_per_key = sstfilter::MinBitsPerKey(kind);
    const std::string min = spec.ToString();
    spec.bits_per_key = sstfilter::MaxBitsPerKey(kind);
    spec.seed = 7;
    const std::string max = spec.ToString();
    spec.bits_per_key = sstfilter::MinBitsPerKey(kind) + 5.3;
    spec.seed = UINT64_MAX;
    specs.insert(specs.end(),
                 {sstfilter::ExampleSpec(kind), min, max, spec.ToString()});
  }
  return specs;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  for (const char* sub : {"filters", "specs", "differential"}) {
    fs::create_directories(dir / sub);
  }

  // Static kinds. 36 keys is LevelDB's filter size; 1000 keys give a
  // blocked Bloom payload of whole blocks and a cuckoo table (smaller ones
  // are written as standard Bloom).
  for (const std::string& spec : StaticSpecs()) {
    // 36 keys: ribbon's dense form and compact trailers; 1000: banded.
    for (int n : {0, 1, 36, 1000}) {
      const std::string bytes = Build(spec, n);
      Write(dir / "filters" / (Name(spec) + "_n" + std::to_string(n)), bytes);
      if (n == 36) {
        // Damaged copies: a flipped payload byte, a flipped trailer byte,
        // one byte short.
        std::string d = bytes;
        d[0] ^= 0x40;
        Write(dir / "filters" / (Name(spec) + "_payload_flip"), d);
        d = bytes;
        d[d.size() - 2] ^= 1;
        Write(dir / "filters" / (Name(spec) + "_trailer_flip"), d);
        Write(dir / "filters" / (Name(spec) + "_truncated"), bytes.substr(1));
      }
    }
  }

  // Keyed filters (format version 3), and one with its trailer damaged.
  for (sstfilter::FilterKind kind : sstfilter::SpecKinds()) {
    const std::string spec =
        std::string(sstfilter::ExampleSpec(kind)) + ":keyed";
    for (int n : {0, 36, 1000}) {
      const std::string bytes = Build(spec, n);
      Write(dir / "filters" / (Name(spec) + "_n" + std::to_string(n)), bytes);
      if (n == 36) {
        std::string d = bytes;
        d[d.size() - 4] ^= 1;
        Write(dir / "filters" / (Name(spec) + "_trailer_flip"), d);
      }
    }
  }

  // Mutable kinds, partly and fully loaded.
  for (int capacity : {1, 40, 300}) {
    sstfilter::MutableFilterOptions o;
    o.capacity = capacity;
    o.target_fpr = 0.01;
    o.seed = capacity == 40 ? 7 : 0;
    sstfilter::CountingBloomFilter cb;
    sstfilter::DynamicCuckooFilter dc;
    if (!sstfilter::CountingBloomFilter::Create(o, &cb).ok() ||
        !sstfilter::DynamicCuckooFilter::Create(o, &dc).ok()) {
      std::fprintf(stderr, "make_corpus: cannot make mutable filters\n");
      return 1;
    }
    for (int i = 0; i < capacity; i++) {
      cb.Insert(Key(i));
      dc.Insert(Key(i));
    }
    std::string bytes;
    cb.Serialize(&bytes);
    Write(dir / "filters" / ("counting_bloom_c" + std::to_string(capacity)),
          bytes);
    bytes.clear();
    dc.Serialize(&bytes);
    Write(dir / "filters" / ("dynamic_cuckoo_c" + std::to_string(capacity)),
          bytes);
  }
  // Keyed mutable kinds (the fuzz secret).
  {
    sstfilter::MutableFilterOptions o;
    o.capacity = 40;
    o.secret = sstfilter::fuzz::FuzzSecret();
    sstfilter::CountingBloomFilter cb;
    sstfilter::DynamicCuckooFilter dc;
    if (!sstfilter::CountingBloomFilter::Create(o, &cb).ok() ||
        !sstfilter::DynamicCuckooFilter::Create(o, &dc).ok()) {
      std::fprintf(stderr, "make_corpus: cannot make keyed mutable filters\n");
      return 1;
    }
    for (int i = 0; i < 40; i++) {
      cb.Insert(Key(i));
      dc.Insert(Key(i));
    }
    std::string bytes;
    cb.Serialize(&bytes);
    Write(dir / "filters" / "counting_bloom_keyed_c40", bytes);
    bytes.clear();
    dc.Serialize(&bytes);
    Write(dir / "filters" / "dynamic_cuckoo_keyed_c40", bytes);
  }
  std::string bytes;
  sstfilter::DynamicCuckooFilter().Serialize(&bytes);
  Write(dir / "filters" / "dynamic_cuckoo_default", bytes);
  // Not filters: nothing, one byte, a tag of the checked full trailer
  // (0x21) whose length is too short for it.
  Write(dir / "filters" / "empty_input", "");
  Write(dir / "filters" / "one_byte", std::string(1, '\0'));
  Write(dir / "filters" / "version_2", std::string("\x05\x00\x00\x05\x21", 5));

  int i = 0;
  for (const char* spec : {"bloom:10",
                           "sstfilter.blocked_bloom:9.5",
                           "cuckoo:12:seed=7",
                           "bloom:1",
                           "bloom:64",
                           "cuckoo:5",
                           "cuckoo:34",
                           "bloom:0.999999",
                           "bloom:1000000000",
                           "bloom:1e9",
                           "bloom:-1",
                           "bloom:nan",
                           "bloom:inf",
                           "bloom:10:seed=18446744073709551615",
                           "bloom:10:seed=18446744073709551616",
                           "bloom:10:seed=",
                           "bloom:10:",
                           "bloom:",
                           ":10",
                           "",
                           "sstfilter.",
                           "counting_bloom:10",
                           "dynamic_cuckoo:12",
                           "empty:0",
                           "bloom:+10",
                           "bloom: 10",
                           "bloom:10.0000000000000000000000000001",
                           "bloom:00000000000000000000010",
                           "blocked_bloom:1e-300",
                           "bloom:10:seed=7:seed=8",
                           "bloom\0:10",
                           "bloom:10:keyed",
                           "cuckoo:12:keyed:salt",
                           "bloom:10:salt:seed=7",
                           "bloom:10:keyed=1",
                           "ribbon:10:salt:salt"}) {
    Write(dir / "specs" / ("spec" + std::to_string(i++)), spec);
  }

  // Differential inputs: kind byte, bits byte, flags, [seed], keys.
  i = 0;
  for (int kind = 0; kind < 6; kind++) {
    for (int n : {0, 3, 40, 400}) {
      std::string in;
      in.push_back(static_cast<char>(kind));
      in.push_back(static_cast<char>(n * 37 % 256));
      in.push_back(static_cast<char>(n == 40 ? 1 | 2 | 64 : 64));
      if (n == 40) in += std::string("\x07\0\0\0\0\0\0\0", 8);
      for (int k = 0; k < n; k++) {
        const std::string key = Key(k);
        in.push_back(static_cast<char>(key.size()));
        in += key;
      }
      Write(dir / "differential" / ("input" + std::to_string(i++)), in);
    }
  }
  // Keyed (flags bit 2) and keyed with salt (bit 3), static kinds.
  for (int kind = 0; kind < 4; kind++) {
    for (int flags : {4, 4 | 8 | 2}) {
      std::string in;
      in.push_back(static_cast<char>(kind));
      in.push_back(static_cast<char>(100));
      in.push_back(static_cast<char>(flags));
      for (int k = 0; k < 40; k++) {
        const std::string key = Key(k);
        in.push_back(static_cast<char>(key.size()));
        in += key;
      }
      Write(dir / "differential" / ("input" + std::to_string(i++)), in);
    }
  }
  return 0;
}
