// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// The filter block of a LevelDB table file (.ldb), read straight from the
// bytes (LevelDB's doc/table_format.md), with no LevelDB library and no
// filter policy: a table's footer (48 bytes: metaindex handle, index
// handle, padding, magic 0xdb4775248b80fb57) points to its metaindex block,
// whose entry "filter.<policy Name()>" points to the filter block:
//
//   [filter 0] ... [filter n-1] [fixed32 offset of each] [fixed32 offset of
//   that array] [base_lg byte]
//
// Every read is bounds-checked; a malformed file gives an error, never a
// read out of bounds.

#ifndef SSTFILTER_TOOLS_LEVELDB_TABLE_H_
#define SSTFILTER_TOOLS_LEVELDB_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sstfilter/status.h"

namespace sstfilter {
namespace tool {

struct LevelDBFilterBlock {
  std::string policy_name;   // after "filter."; empty: the table has none
  uint64_t block_bytes = 0;  // the filter block, without its 5-byte trailer
  uint64_t index_bytes = 0;  // the index block, likewise (from the footer)
  std::vector<std::string> filters;  // one per 2^base_lg bytes of data
};

// Whether `path` ends in LevelDB's table magic number (a RocksDB file of
// the block-based format ends in another).
bool IsLevelDBTable(const std::string& path);

// Reads the filter block of the LevelDB table at `path` into *out. OK also
// for a table without a filter; IOError if the file cannot be read,
// Corruption naming the path and what is wrong if it is not a LevelDB table.
Status ReadLevelDBFilterBlock(const std::string& path, LevelDBFilterBlock* out);

}  // namespace tool
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_LEVELDB_TABLE_H_
