// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// A comparison's results as text tables (the terminal and results.txt),
// CSV (results.csv: one row per engine, policy and phase), JSON
// (results.json: everything, with the engines' own counters) and gnuplot
// charts (reads per absent Get and FPR against filter bits per key).

#ifndef SSTFILTER_TOOLS_COMPARE_REPORT_H_
#define SSTFILTER_TOOLS_COMPARE_REPORT_H_

#include <string>

#include "tools/sstfilter_compare/results.h"

namespace sstfilter {
namespace compare {

std::string FormatText(const Report& report);
std::string FormatCsv(const Report& report);
std::string FormatJson(const Report& report);

// The gnuplot script drawing reads.png and fpr.png from plot.dat, and the
// data file. Both are written into the results folder and run there.
std::string FormatPlotData(const Report& report);
std::string FormatPlotScript(const Report& report, const std::string& terminal);

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_REPORT_H_
