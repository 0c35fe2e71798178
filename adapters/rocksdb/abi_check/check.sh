#!/usr/bin/env bash
# adapters/rocksdb/abi_check/check.sh ROCKSDB_SOURCE_DIR...
#
# Checks adapters/rocksdb/rocksdb_abi.h against RocksDB's own
# table/block_based/filter_policy_internal.h in each RocksDB source tree
# given (a checkout or an extracted release of facebook/rocksdb; only
# include/ and table/block_based/filter_policy_internal.h are read):
# layout_probe.cc is compiled once with each header and the vtable slots
# they print must be the same. Then the adapter (rocksdb_policy.cc) must
# compile against the tree's public headers. Needs a C++20 compiler (CXX,
# default g++).
# Prints one verdict line per tree; exits non-zero if any differs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cxx=${CXX:-g++}
(($# > 0)) || { sed -n '2,13p' "$0"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
for src in "$@"; do
  src=$(cd "$src" && pwd)
  for side in rocksdb ours; do
    defs=()
    [[ $side == rocksdb ]] && defs=(-DSSTFILTER_PROBE_ROCKSDB)
    if ! "$cxx" -std=c++20 -w -I"$src/include" -I"$src" -I"$top" "${defs[@]}" \
      "$here/layout_probe.cc" -o "$tmp/$side" 2>"$tmp/$side.err"; then
      echo "abi_check: $src: the $side side does not compile:"
      head -5 "$tmp/$side.err"
      rc=1
      continue 2
    fi
    "$tmp/$side" >"$tmp/$side.txt"
  done
  version=$(head -1 "$tmp/rocksdb.txt")
  if ! "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -I"$src/include" \
    -I"$top/include" -I"$top" "$here/../rocksdb_policy.cc" 2>"$tmp/adapter.err"; then
    echo "abi_check: FAILED: $version ($src): the adapter does not compile:"
    head -20 "$tmp/adapter.err"
    rc=1
    continue
  fi
  if diff -u "$tmp/rocksdb.txt" "$tmp/ours.txt" >"$tmp/diff"; then
    slots=$(tail -n +2 "$tmp/ours.txt" | grep -vc absent)
    echo "abi_check: OK: $version ($src): $slots virtuals and both ends in the same slots; the adapter compiles"
  else
    echo "abi_check: DIFFERENT: $version ($src):"
    cat "$tmp/diff"
    rc=1
  fi
done
exit $rc
