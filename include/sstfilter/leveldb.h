// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// sstfilter filters as the filter policy of LevelDB (1.23).
//
//   std::unique_ptr<const leveldb::FilterPolicy> policy;
//   leveldb::Status s = sstfilter::NewLevelDBFilterPolicy("bloom:10", &policy);
//   if (!s.ok()) { ... }                     // e.g. a bad spec
//   leveldb::Options options;
//   options.filter_policy = policy.get();    // must outlive every DB using it
//   leveldb::DB* db;
//   s = leveldb::DB::Open(options, "/tmp/db", &db);
//   ...
//   delete db;                               // first the DB, then the policy
//
// Name() of every policy made here is kFamilyName ("sstfilter.v1"), whatever
// its spec: LevelDB stores each table's filters under "filter." + Name(), and
// since the bytes are self-describing (docs/FORMAT.md), a policy of any
// sstfilter kind reads the filters of every other kind. A DB may therefore
// switch between sstfilter specs freely. Switching to or from another policy
// (LevelDB's built-in Bloom, none) is safe too: LevelDB then finds no filter
// of the new name in old tables and reads them unfiltered until compaction
// rewrites them.
//
// Never give another policy the name "sstfilter.v1": LevelDB trusts Name()
// blindly and would hand our filters to it (or its filters to us), which can
// answer "absent" for keys that are present.
//
// Like LevelDB's own Bloom policy, these policies hash whole user keys: do
// not use them with a comparator that treats different byte strings as equal
// keys.

#ifndef SSTFILTER_LEVELDB_H_
#define SSTFILTER_LEVELDB_H_

#include <memory>
#include <string>

#include "leveldb/filter_policy.h"
#include "leveldb/status.h"
#include "sstfilter/secret.h"

namespace sstfilter {

// Makes a LevelDB filter policy that builds filters as `spec` says
// ("bloom:10", "blocked_bloom:10", "cuckoo:12", with or without the
// "sstfilter." prefix; grammar in sstfilter/spec.h) and reads filters of
// every sstfilter kind.
//
// On success *out holds the policy. On error (a bad spec, or a keyed one
// without its secret) *out is unchanged and the Status, an InvalidArgument,
// quotes the spec and names the problem.
//
// The policy is thread-safe: LevelDB may call it from many threads and many
// DBs at once. CreateFilter appends to its dst and reuses one builder across
// calls; KeyMayMatch allocates nothing.
leveldb::Status NewLevelDBFilterPolicy(
    const std::string& spec, std::unique_ptr<const leveldb::FilterPolicy>* out);

// The same with the application's secret (sstfilter/secret.h), which a
// keyed spec ("bloom:10:keyed") requires. Any spec reads keyed filters
// written with `secret`, and answers "may match" for keyed filters of
// another secret, or of any secret if `secret` is null. A keyed filter
// ends in a full trailer (its key id included) instead of the 2-byte
// compact one: at LevelDB's ~36 keys per filter 13 bytes for a Bloom
// filter, 18 for the ribbon kind's, so 2.4 and 3.3 bits per key more;
// salt ("keyed:salt") adds its 8-byte seed.
leveldb::Status NewLevelDBFilterPolicy(
    const std::string& spec, std::shared_ptr<const FilterSecret> secret,
    std::unique_ptr<const leveldb::FilterPolicy>* out);

}  // namespace sstfilter

#endif  // SSTFILTER_LEVELDB_H_
