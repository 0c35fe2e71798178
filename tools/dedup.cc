// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// `sstfilter dedup` needs the mutable filters (sstfilter/mutable.h), which
// this build does not have yet.

#include <cstdio>

#include "tools/commands.h"

namespace sstfilter {
namespace tool {

int Dedup(uint64_t, double, const std::string&) {
  std::fprintf(stderr,
               "sstfilter: dedup is not available: this build has no mutable "
               "filters (sstfilter/mutable.h)\n");
  return 1;
}

}  // namespace tool
}  // namespace sstfilter
