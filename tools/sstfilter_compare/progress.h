// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.
//
// A progress line on stderr for every long step. On a terminal one line is
// rewritten in place ('\r'); anywhere else (CI logs, pipes) plain lines are
// appended: one when a step ends, and one every 10 s while it runs, so logs
// stay short and readable without terminal control codes.

#ifndef SSTFILTER_TOOLS_COMPARE_PROGRESS_H_
#define SSTFILTER_TOOLS_COMPARE_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace sstfilter {
namespace compare {

class Progress {
 public:
  // `enabled`: print at all. `tty`: rewrite the line in place.
  Progress(bool enabled, bool tty) : enabled_(enabled), tty_(tty) {}

  void Begin(const std::string& label) {
    label_ = label;
    start_ = last_ = Clock::now();
    width_ = 0;
    if (enabled_ && tty_) Show(label_ + " ...");
  }

  // Throttled: a terminal line at most 5 times a second, a log line every
  // 10 seconds.
  void Update(uint64_t done, uint64_t total) {
    if (!enabled_) return;
    const Clock::time_point now = Clock::now();
    const double since = Seconds(now - last_);
    if (since < (tty_ ? 0.2 : 10.0)) return;
    last_ = now;
    char buf[128];
    std::snprintf(
        buf, sizeof(buf), " %llu/%llu (%.0f%%) %.1fs",
        static_cast<unsigned long long>(done),
        static_cast<unsigned long long>(total),
        total ? 100.0 * static_cast<double>(done) / static_cast<double>(total)
              : 0.0,
        Seconds(now - start_));
    if (tty_) {
      Show(label_ + buf);
    } else {
      std::fprintf(stderr, "%s%s\n", label_.c_str(), buf);
    }
  }

  void End(const std::string& summary) {
    if (!enabled_) return;
    char buf[64];
    std::snprintf(buf, sizeof(buf), " %.1fs", Seconds(Clock::now() - start_));
    const std::string line =
        label_ + buf + (summary.empty() ? "" : ": ") + summary;
    if (tty_) {
      Show(line);
      std::fputc('\n', stderr);
      width_ = 0;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

  // A message of its own, between steps.
  void Note(const std::string& text) {
    if (enabled_) std::fprintf(stderr, "%s\n", text.c_str());
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double Seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
  }
  // Rewrites the terminal line, padding over a longer previous one.
  void Show(const std::string& line) {
    std::string padded = line;
    if (padded.size() < width_) padded.append(width_ - padded.size(), ' ');
    width_ = line.size();
    std::fprintf(stderr, "\r%s", padded.c_str());
    std::fflush(stderr);
  }

  const bool enabled_;
  const bool tty_;
  std::string label_;
  Clock::time_point start_, last_;
  size_t width_ = 0;
};

}  // namespace compare
}  // namespace sstfilter

#endif  // SSTFILTER_TOOLS_COMPARE_PROGRESS_H_
