// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// `sstfilter inspect`: what filter a RocksDB SST file carries, read from its
// table properties through rocksdb::SstFileReader, and whether an sstfilter
// policy can use it.
//
// RocksDB records the writing policy's Name() in the property
// filter_policy_name ("" when the file has no filter). sstfilter's policies
// are named "sstfilter.<kind>" and store every kind's filter under the one
// family name kFamilyName ("sstfilter.v1", RocksDB's CompatibilityName()),
// so any sstfilter policy reads a file whose policy name starts with
// "sstfilter.".

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sstfilter/filter.h"
#include "tools/commands.h"

#if SSTFILTER_TOOL_WITH_ROCKSDB
#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table_properties.h>

namespace sstfilter {
namespace tool {
namespace {

bool IsSstfilterPolicy(const std::string& name) {
  return name == kFamilyName || name.rfind(kPolicyPrefix, 0) == 0;
}

// Prints one file's report; false if it cannot be read as an SST.
bool InspectFile(const std::string& path) {
  rocksdb::Options options;
  rocksdb::SstFileReader reader(options);
  rocksdb::Status s = reader.Open(path);
  if (!s.ok()) {
    std::fprintf(stderr, "sstfilter: %s: not a readable RocksDB SST file: %s\n",
                 path.c_str(), s.ToString().c_str());
    return false;
  }
  const std::shared_ptr<const rocksdb::TableProperties> props =
      reader.GetTableProperties();
  if (props == nullptr) {
    std::fprintf(stderr, "sstfilter: %s: no table properties\n", path.c_str());
    return false;
  }
  const rocksdb::TableProperties& p = *props;
  std::printf("%s\n", path.c_str());
  std::printf("  entries:           %llu in %llu data blocks\n",
              static_cast<unsigned long long>(p.num_entries),
              static_cast<unsigned long long>(p.num_data_blocks));
  if (p.prefix_extractor_name != "nullptr" &&
      !p.prefix_extractor_name.empty()) {
    std::printf("  prefix extractor:  %s\n", p.prefix_extractor_name.c_str());
  }

  if (p.filter_policy_name.empty()) {
    std::printf(
        "  filter:            NONE: this file carries no filter, so every "
        "lookup that\n"
        "                     reaches it reads a data block. If the DB was "
        "configured\n"
        "                     with an sstfilter policy, the program that "
        "wrote this file\n"
        "                     did not know it: RocksDB drops an unknown "
        "filter id\n"
        "                     silently. Load the sstfilter plugin (or call\n"
        "                     sstfilter::RegisterRocksDBFilterPolicies) "
        "wherever the\n"
        "                     DB is opened, then compact.\n");
    std::printf("  sstfilter:         nothing to read\n");
    return true;
  }

  // Entries the filter holds: distinct keys or prefixes when RocksDB
  // counted them, else every entry.
  const uint64_t filter_entries =
      p.num_filter_entries > 0 ? p.num_filter_entries : p.num_entries;
  std::printf("  filter policy:     %s\n", p.filter_policy_name.c_str());
  std::printf("  filter size:       %llu bytes\n",
              static_cast<unsigned long long>(p.filter_size));
  std::printf("  filter entries:    %llu\n",
              static_cast<unsigned long long>(filter_entries));
  if (filter_entries > 0) {
    std::printf("  bits per key:      %.2f\n",
                8.0 * static_cast<double>(p.filter_size) /
                    static_cast<double>(filter_entries));
  }
  if (IsSstfilterPolicy(p.filter_policy_name)) {
    std::printf(
        "  sstfilter:         yes: family %s; any sstfilter policy reads it, "
        "whatever\n"
        "                     its kind or size\n",
        kFamilyName);
  } else {
    std::printf(
        "  sstfilter:         no: \"%s\" is not an sstfilter policy. A DB "
        "opened with\n"
        "                     an sstfilter policy reads this file correctly "
        "but without\n"
        "                     a filter until compaction rewrites it.\n",
        p.filter_policy_name.c_str());
  }
  return true;
}

}  // namespace

int Inspect(const std::vector<std::string>& files) {
  bool ok = true;
  for (size_t i = 0; i < files.size(); i++) {
    if (i > 0) std::printf("\n");
    ok = InspectFile(files[i]) && ok;
  }
  return ok ? 0 : 1;
}

}  // namespace tool
}  // namespace sstfilter

#else  // !SSTFILTER_TOOL_WITH_ROCKSDB

namespace sstfilter {
namespace tool {

int Inspect(const std::vector<std::string>&) {
  std::fprintf(stderr,
               "sstfilter: inspect is not available: this sstfilter was "
               "built without RocksDB\n");
  return 1;
}

}  // namespace tool
}  // namespace sstfilter

#endif  // SSTFILTER_TOOL_WITH_ROCKSDB
