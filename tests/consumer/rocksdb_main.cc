// Uses the installed RocksDB adapter: a DB on disk with an sstfilter policy
// made by name; exit 0 on success.
#include <rocksdb/db.h>
#include <rocksdb/table.h>
#include <rocksdb/version.h>
#include <sstfilter/rocksdb.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

int main() {
  std::string dir = "/tmp/sstfilter_consumer_XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return 1;
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::BlockBasedTableOptions table_options;
  rocksdb::Status s = sstfilter::NewRocksDBFilterPolicy(
      "blocked_bloom:10", &table_options.filter_policy);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  options.table_factory.reset(
      rocksdb::NewBlockBasedTableFactory(table_options));
  std::unique_ptr<rocksdb::DB> db;
#if ROCKSDB_MAJOR >= 11  // DB::Open returns the database in a unique_ptr
  s = rocksdb::DB::Open(options, dir, &db);
#else
  rocksdb::DB* raw = nullptr;
  s = rocksdb::DB::Open(options, dir, &raw);
  db.reset(raw);
#endif
  for (int i = 0; s.ok() && i < 1000; i++) {
    s = db->Put(rocksdb::WriteOptions(), "key" + std::to_string(i), "v");
  }
  if (s.ok()) s = db->Flush(rocksdb::FlushOptions());
  std::string v;
  for (int i = 0; s.ok() && i < 1000; i++) {
    s = db->Get(rocksdb::ReadOptions(), "key" + std::to_string(i), &v);
  }
  db.reset();
  rocksdb::DestroyDB(dir, options);
  std::remove(dir.c_str());
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  std::printf("consumer_rocksdb: OK\n");
  return 0;
}
