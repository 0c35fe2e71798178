// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "tools/leveldb_table.h"

#include <fstream>

namespace sstfilter {
namespace tool {
namespace {

constexpr uint64_t kFooterSize = 48;
constexpr uint64_t kBlockTrailer = 5;  // compression type, crc32c
constexpr uint32_t kMagicLow = 0x8b80fb57u, kMagicHigh = 0xdb477524u;

bool GetVarint64(const char** p, const char* limit, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && *p < limit; shift += 7) {
    const uint64_t byte = static_cast<unsigned char>(**p);
    (*p)++;
    result |= (byte & 127) << shift;
    if ((byte & 128) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

uint32_t DecodeFixed32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
         static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24;
}

bool ReadAt(std::ifstream& f, uint64_t offset, uint64_t n, std::string* out) {
  out->resize(n);
  f.clear();
  f.seekg(static_cast<std::streamoff>(offset));
  f.read(out->data(), static_cast<std::streamsize>(n));
  return static_cast<uint64_t>(f.gcount()) == n;
}

uint64_t FileSize(std::ifstream& f) {
  f.seekg(0, std::ios::end);
  return static_cast<uint64_t>(f.tellg());
}

Status Corrupt(const std::string& path, const char* what) {
  return Status::Corruption(path + ": not a readable LevelDB table: " + what);
}

}  // namespace

bool IsLevelDBTable(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  const uint64_t size = FileSize(f);
  std::string magic;
  return size >= kFooterSize && ReadAt(f, size - 8, 8, &magic) &&
         DecodeFixed32(magic.data()) == kMagicLow &&
         DecodeFixed32(magic.data() + 4) == kMagicHigh;
}

Status ReadLevelDBFilterBlock(const std::string& path,
                              LevelDBFilterBlock* out) {
  *out = LevelDBFilterBlock();
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::IOError(path + ": cannot open");
  const uint64_t file_size = FileSize(f);
  std::string footer;
  if (file_size < kFooterSize ||
      !ReadAt(f, file_size - kFooterSize, kFooterSize, &footer)) {
    return Corrupt(path, "shorter than a table footer");
  }
  if (DecodeFixed32(footer.data() + 40) != kMagicLow ||
      DecodeFixed32(footer.data() + 44) != kMagicHigh) {
    return Corrupt(path, "no LevelDB table magic number");
  }
  const char* p = footer.data();
  uint64_t meta_offset = 0, meta_size = 0;
  if (!GetVarint64(&p, footer.data() + 40, &meta_offset) ||
      !GetVarint64(&p, footer.data() + 40, &meta_size) ||
      meta_offset > file_size || meta_size > file_size - meta_offset ||
      kBlockTrailer > file_size - meta_offset - meta_size) {
    return Corrupt(path, "bad metaindex handle");
  }
  uint64_t index_offset = 0;
  if (!GetVarint64(&p, footer.data() + 40, &index_offset) ||
      !GetVarint64(&p, footer.data() + 40, &out->index_bytes) ||
      index_offset > file_size || out->index_bytes > file_size - index_offset) {
    return Corrupt(path, "bad index handle");
  }
  std::string meta;
  if (!ReadAt(f, meta_offset, meta_size + kBlockTrailer, &meta)) {
    return Status::IOError(path + ": short read");
  }
  if (meta[meta_size] != 0) return Corrupt(path, "compressed metaindex block");
  // Block: entries (shared, non_shared, value_length varints, key delta,
  // value), then restart offsets and their count (fixed32s).
  if (meta_size < 4) return Corrupt(path, "short metaindex block");
  const uint64_t restarts = DecodeFixed32(meta.data() + meta_size - 4);
  if ((restarts + 1) * 4 > meta_size)
    return Corrupt(path, "bad metaindex restarts");
  const char* q = meta.data();
  const char* const limit = meta.data() + meta_size - (restarts + 1) * 4;
  std::string key;
  constexpr char kPrefix[] = "filter.";
  while (q < limit) {
    uint64_t shared = 0, non_shared = 0, value_length = 0;
    if (!GetVarint64(&q, limit, &shared) ||
        !GetVarint64(&q, limit, &non_shared) ||
        !GetVarint64(&q, limit, &value_length) || shared > key.size() ||
        non_shared > static_cast<uint64_t>(limit - q) ||
        value_length > static_cast<uint64_t>(limit - q) - non_shared) {
      return Corrupt(path, "corrupt metaindex entry");
    }
    key.resize(shared);
    key.append(q, non_shared);
    q += non_shared;
    const char* value = q;
    q += value_length;
    if (key.compare(0, sizeof(kPrefix) - 1, kPrefix) != 0) continue;
    uint64_t offset = 0, size = 0;
    if (!GetVarint64(&value, q, &offset) || !GetVarint64(&value, q, &size) ||
        offset > file_size || size > file_size - offset || size < 5) {
      return Corrupt(path, "bad filter block handle");
    }
    std::string block;
    if (!ReadAt(f, offset, size, &block))
      return Status::IOError(path + ": short read");
    const uint64_t array = DecodeFixed32(block.data() + size - 5);
    if (array > size - 5) return Corrupt(path, "bad filter offset array");
    const uint64_t num = (size - 5 - array) / 4;
    for (uint64_t i = 0; i < num; i++) {
      const uint64_t start = DecodeFixed32(block.data() + array + 4 * i);
      const uint64_t end =
          i + 1 < num ? DecodeFixed32(block.data() + array + 4 * (i + 1))
                      : array;
      if (start > end || end > array)
        return Corrupt(path, "bad filter offsets");
      out->filters.push_back(block.substr(start, end - start));
    }
    out->policy_name = key.substr(sizeof(kPrefix) - 1);
    out->block_bytes = size;
    return Status::OK();
  }
  return Status::OK();  // a table without a filter
}

}  // namespace tool
}  // namespace sstfilter
