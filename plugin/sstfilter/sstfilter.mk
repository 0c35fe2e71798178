# sstfilter as a RocksDB build plugin (RocksDB's plugin/README.md): link
# this folder into a RocksDB source tree as plugin/sstfilter and build with
# ROCKSDB_PLUGINS=sstfilter (make or CMake). RocksDB then compiles sstfilter
# in and registers every "sstfilter.*" filter policy id and the level
# listener "sstfilter.level_listener" in its default object registry, so
# OPTIONS files name them with no code and no LD_PRELOAD (docs/ROCKSDB.md,
# "Building RocksDB with sstfilter").
#
# Both build systems read the two lines below: RocksDB's CMakeLists.txt
# matches the first text of this file of the form "SOURCES", blank, "=",
# blank (and so for "_FUNC"), so no comment may hold them; the Makefile
# reads all of it. Paths are relative to this folder. The one source
# includes sstfilter's own sources (sstfilter_plugin.cc), which the
# compiler finds through the include paths set here and in CMakeLists.txt.
sstfilter_SOURCES = sstfilter_plugin.cc
sstfilter_FUNC = sstfilter_register_rocksdb_plugin

# The sstfilter checkout holding this folder (symbolic links resolved):
# its root and include/ hold every header the sources include. xxHash is
# used header-only (Debian: libxxhash-dev).
sstfilter_ROOT := $(realpath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
sstfilter_CXXFLAGS = -I$(sstfilter_ROOT) -I$(sstfilter_ROOT)/include
