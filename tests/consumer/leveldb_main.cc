// Opens a LevelDB database (in memory) with an sstfilter policy through the
// installed package, writes and reads it back; exit 0 on success.
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/helpers/memenv.h>
#include <leveldb/options.h>
#include <sstfilter/leveldb.h>

#include <cstdio>
#include <memory>
#include <string>

int main() {
  std::unique_ptr<const leveldb::FilterPolicy> policy;
  leveldb::Status s = sstfilter::NewLevelDBFilterPolicy("bloom:10", &policy);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::unique_ptr<leveldb::Env> env(
      leveldb::NewMemEnv(leveldb::Env::Default()));
  leveldb::Options options;
  options.env = env.get();
  options.create_if_missing = true;
  options.filter_policy = policy.get();
  leveldb::DB* raw = nullptr;
  s = leveldb::DB::Open(options, "/consumer-db", &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  std::unique_ptr<leveldb::DB> db(raw);
  for (int i = 0; i < 1000; i++) {
    db->Put(leveldb::WriteOptions(), "key" + std::to_string(i), "v");
  }
  db->CompactRange(nullptr, nullptr);
  std::string v;
  for (int i = 0; i < 1000; i++) {
    if (!db->Get(leveldb::ReadOptions(), "key" + std::to_string(i), &v).ok()) {
      return 3;
    }
  }
  if (!db->Get(leveldb::ReadOptions(), "absent", &v).IsNotFound()) return 4;
  std::printf("consumer_leveldb: OK, filter policy %s\n", policy->Name());
  return 0;
}
