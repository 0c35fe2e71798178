// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// A Kafka Streams-shaped RocksDB state store with sstfilter's filters, from
// Java, on a RocksJava built with sstfilter as a build plugin
// (tools/rocksjava-test builds it and runs this). Nothing here names a C++
// class: the filter and the level listener come from option strings at
// the first open and from the OPTIONS file RocksDB wrote at the second.
//
//   java -Djava.library.path=<dir of librocksdbjni.so> \
//       -cp <rocksdbjni_classes.jar>:<classes> StateStore <db dir> [keys] [spec]
//
// The store is configured as Kafka Streams configures each of its state
// stores: universal compaction, 16 MB write buffers, a 50 MB LRU block
// cache, no compression; in place of its Bloom filter, the sstfilter spec
// (default ribbon:10:by_level) and the level listener. Exits 1 if a key
// written is not found, if a table was written without the filter, or if
// the filter never spared a read.

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.ConfigOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.OptionsUtil;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Statistics;
import org.rocksdb.TableProperties;
import org.rocksdb.TickerType;
import org.rocksdb.WriteOptions;

public final class StateStore {
  private static final int VALUE_BYTES = 100;

  // Key i of the store (16 bytes); absent(i) sorts between keys i and
  // i + 1, inside every table's key range, so that Gets ask the filters.
  private static byte[] key(final long i) {
    return String.format("k%015d", 2 * i).getBytes();
  }

  private static byte[] absent(final long i) {
    return String.format("k%015d", 2 * i + 1).getBytes();
  }

  private static byte[] value(final long i) {
    final byte[] v = new byte[VALUE_BYTES];
    for (int j = 0; j < v.length; j++) v[j] = (byte) (i * 31 + j);
    return v;
  }

  private static void fail(final String what) {
    System.err.println("StateStore: FAILED: " + what);
    System.exit(1);
  }

  // Waits until no flush or compaction runs (universal compaction may keep
  // "compaction-pending" set with nothing to do): 200 quiet polls.
  private static void waitIdle(final RocksDB db) throws Exception {
    int quiet = 0;
    for (int i = 0; i < 600_000 && quiet < 200; i++) {
      final long busy = db.getLongProperty("rocksdb.num-running-flushes")
          + db.getLongProperty("rocksdb.num-running-compactions")
          + db.getLongProperty("rocksdb.mem-table-flush-pending");
      quiet = busy == 0 ? quiet + 1 : 0;
      Thread.sleep(1);
    }
    if (quiet < 200) fail("flushes and compactions did not settle");
  }

  // Gets every key in [0, n): each must be there with its value. Then as
  // many keys never written, between them: none may be there.
  private static void checkKeys(final RocksDB db, final long n) throws RocksDBException {
    for (long i = 0; i < n; i++) {
      final byte[] got = db.get(key(i));
      if (got == null) fail("key " + i + " of " + n + " not found");
      if (!java.util.Arrays.equals(got, value(i))) fail("key " + i + " has another value");
    }
    for (long i = 0; i < n; i++) {
      if (db.get(absent(i)) != null) fail("absent key " + i + " found");
    }
  }

  // Every table of the database was written with an sstfilter filter: its
  // properties name the filter family ("sstfilter.ribbon"), which any
  // sstfilter policy reads.
  private static int checkTables(final RocksDB db) throws RocksDBException {
    int tables = 0;
    for (final TableProperties p : db.getPropertiesOfAllTables().values()) {
      if (!p.getFilterPolicyName().startsWith("sstfilter.")) {
        fail("a table has filter \"" + p.getFilterPolicyName() + "\", not sstfilter's");
      }
      tables++;
    }
    if (tables == 0) fail("no table written");
    return tables;
  }

  private static void report(final String phase, final RocksDB db, final Statistics stats,
      final int tables) throws RocksDBException {
    final long useful = stats.getTickerCount(TickerType.BLOOM_FILTER_USEFUL);
    final long positive = stats.getTickerCount(TickerType.BLOOM_FILTER_FULL_POSITIVE);
    final long truePositive = stats.getTickerCount(TickerType.BLOOM_FILTER_FULL_TRUE_POSITIVE);
    if (useful == 0) fail(phase + ": the filters spared no read");
    final long falsePositive = positive - truePositive;
    System.out.printf("%s: %d tables (%s in L0); of %d filter probes for keys a table does not"
            + " hold, %d false positives (%.3f%%)%n",
        phase, tables, db.getProperty("rocksdb.num-files-at-level0"), useful + falsePositive,
        falsePositive, 100.0 * falsePositive / (useful + falsePositive));
  }

  public static void main(final String[] args) throws Exception {
    if (args.length < 1 || args.length > 3) {
      System.err.println("usage: StateStore <db dir> [keys (1000000)] [spec (ribbon:10:by_level)]");
      System.exit(2);
    }
    final String path = args[0];
    final long n = args.length > 1 ? Long.parseLong(args[1]) : 1_000_000L;
    final String policy = "sstfilter." + (args.length > 2 ? args[2] : "ribbon:10:by_level");
    RocksDB.loadLibrary();

    // First open: option strings, as a Kafka Streams RocksDBConfigSetter or
    // a Flink option could give them.
    final Properties dbProps = new Properties();
    dbProps.setProperty("create_if_missing", "true");
    dbProps.setProperty("listeners", "{sstfilter.level_listener}");
    final Properties cfProps = new Properties();
    cfProps.setProperty("compaction_style", "kCompactionStyleUniversal");
    cfProps.setProperty("write_buffer_size", String.valueOf(16L << 20));
    cfProps.setProperty("compression", "kNoCompression");
    cfProps.setProperty("block_based_table_factory",
        "{filter_policy=" + policy + ";block_cache=" + (50L << 20) + "}");
    try (ConfigOptions config = new ConfigOptions();
         DBOptions dbOptions = DBOptions.getDBOptionsFromProps(config, dbProps);
         ColumnFamilyOptions cfOptions =
             ColumnFamilyOptions.getColumnFamilyOptionsFromProps(config, cfProps)) {
      if (dbOptions == null) fail("RocksDB refused the DB options " + dbProps);
      if (cfOptions == null) fail("RocksDB refused the column family options " + cfProps);
      try (Statistics stats = new Statistics()) {
        dbOptions.setStatistics(stats);
        final List<ColumnFamilyDescriptor> cfs = new ArrayList<>();
        cfs.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfOptions));
        final List<ColumnFamilyHandle> handles = new ArrayList<>();
        try (RocksDB db = RocksDB.open(dbOptions, path, cfs, handles);
             WriteOptions wo = new WriteOptions();
             FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
          for (long i = 0; i < n; i++) db.put(wo, key(i), value(i));
          db.flush(fo);
          waitIdle(db);
          checkKeys(db, n);
          report("option strings", db, stats, checkTables(db));
          for (final ColumnFamilyHandle h : handles) h.close();
        }
      }
    }

    // Second open: only the OPTIONS file RocksDB wrote names the filter and
    // the listener. Half as many keys again, then every key.
    try (ConfigOptions config = new ConfigOptions(); DBOptions dbOptions = new DBOptions();
         Statistics stats = new Statistics()) {
      final List<ColumnFamilyDescriptor> cfs = new ArrayList<>();
      OptionsUtil.loadLatestOptions(config, path, dbOptions, cfs);
      dbOptions.setStatistics(stats);
      final List<ColumnFamilyHandle> handles = new ArrayList<>();
      try (RocksDB db = RocksDB.open(dbOptions, path, cfs, handles);
           WriteOptions wo = new WriteOptions();
           FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
        final long more = n + n / 2;
        for (long i = n; i < more; i++) db.put(wo, key(i), value(i));
        db.flush(fo);
        waitIdle(db);
        checkKeys(db, more);
        report("OPTIONS file", db, stats, checkTables(db));
        for (final ColumnFamilyHandle h : handles) h.close();
      }
      for (final ColumnFamilyDescriptor d : cfs) d.getOptions().close();
    }
    System.out.println("StateStore: OK: every key found, every table filtered by " + policy);
  }
}
