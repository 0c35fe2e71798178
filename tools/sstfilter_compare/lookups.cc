// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "tools/sstfilter_compare/results.h"

namespace sstfilter {
namespace compare {

const PolicyRun* Report::FindRun(const std::string& engine,
                                 const std::string& label) const {
  for (const PolicyRun& r : runs) {
    if (r.engine == engine && r.label == label && !r.skipped) return &r;
  }
  return nullptr;
}

const PolicyRun* Report::Baseline(const std::string& engine) const {
  for (const std::string& b : baselines) {
    if (const PolicyRun* r = FindRun(engine, b)) return r;
  }
  return nullptr;
}

namespace {

// What one thread does in a phase; merged by RunPhase.
struct ThreadResult {
  IoCounters io;
  uint64_t ops = 0;
  uint64_t calls = 0;
  uint64_t found = 0;
  bool capped = false;
  std::vector<float> latencies_us;
  EngineCounters engine;
};

struct Shared {
  std::atomic<uint64_t> done{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  Status error;  // the first

  void Fail(const Status& e) {
    std::lock_guard<std::mutex> l(mu);
    if (error.ok()) error = e;
    stop = true;
  }
};

// A key to look up and what the database must answer.
struct Probe {
  uint64_t number = 0;
  bool present = false;
};

// Chooses the next key of `phase` into *key, and what it must answer.
Probe ChooseProbe(const KeySpace& keys, Phase phase,
                  const LookupOptions& options, Random64* rng,
                  std::string* key) {
  const uint64_t n = keys.num_keys();
  // Absent key numbers: anywhere from n up, far from overflow.
  const uint64_t absent_range = (uint64_t{1} << 62) - n;
  Probe p;
  switch (phase) {
    case Phase::kPresent:
      p = {rng->Uniform(n), true};
      break;
    case Phase::kAbsent:
      p = {n + rng->Uniform(absent_range), false};
      break;
    case Phase::kNeighbour:
      p = {rng->Uniform(n), false};
      keys.Neighbour(p.number, rng->Next(), key);
      return p;
    case Phase::kMultiGet:
      if (rng->Bernoulli(options.multiget_present)) {
        p = {rng->Uniform(n), true};
      } else {
        p = {n + rng->Uniform(absent_range), false};
      }
      break;
    case Phase::kMixed: {
      const bool absent = rng->Bernoulli(options.absent_share);
      const uint64_t i =
          options.zipf != nullptr ? options.zipf->Next(rng) : rng->Uniform(n);
      p = {absent ? n + i : i, !absent};
      break;
    }
  }
  keys.Key(p.number, key);
  return p;
}

// Checks the answers to the first m probes: every present key found with
// its value, no absent key found (else Corruption). Adds the keys found to
// *found_keys.
Status CheckAnswers(const KeySpace& keys, Phase phase,
                    const std::vector<Probe>& probes,
                    const std::vector<std::string>& values,
                    const std::vector<bool>& found, size_t m,
                    uint64_t* found_keys) {
  std::string expected;
  for (size_t k = 0; k < m; k++) {
    const Probe& p = probes[k];
    if (found[k] != p.present) {
      return Status::Corruption(std::string(p.present
                                                ? "a present key was not found "
                                                  "(a false negative?)"
                                                : "an absent key was found") +
                                " in phase " + PhaseName(phase) +
                                ", key number " + std::to_string(p.number));
    }
    if (p.present) {
      keys.Value(p.number, &expected);
      if (values[k] != expected) {
        return Status::Corruption("wrong value for key number " +
                                  std::to_string(p.number));
      }
      (*found_keys)++;
    }
  }
  return Status::OK();
}

void RunThread(Engine* engine, const KeySpace& keys, Phase phase,
               const LookupOptions& options, uint64_t quota, int thread,
               Clock::time_point deadline, Shared* shared, ThreadResult* out) {
  ThreadCounters() = &out->io;
  engine->ThreadBegin();
  Random64 rng(
      SplitMix64Finalizer(options.seed ^ (static_cast<uint64_t>(phase) + 1) *
                                             0x9e3779b97f4a7c15ULL) +
      static_cast<uint64_t>(thread));
  const size_t batch =
      phase == Phase::kMultiGet ? static_cast<size_t>(options.batch) : 1;
  std::vector<std::string> batch_keys(batch);
  std::vector<Probe> probes(batch);
  std::vector<std::string> values(batch);
  std::vector<bool> found(batch);
  out->latencies_us.reserve(std::min<uint64_t>(quota, 1 << 20));

  while (out->ops < quota && !shared->stop.load(std::memory_order_relaxed)) {
    const size_t m =
        static_cast<size_t>(std::min<uint64_t>(batch, quota - out->ops));
    for (size_t k = 0; k < m; k++) {
      probes[k] = ChooseProbe(keys, phase, options, &rng, &batch_keys[k]);
    }
    Status error;
    const Clock::time_point start = Clock::now();
    if (phase == Phase::kMultiGet) {
      batch_keys.resize(m);
      error = engine->MultiGet(batch_keys, &values, &found);
      batch_keys.resize(batch);
    } else {
      bool f = false;
      error = engine->Get(batch_keys[0], &values[0], &f);
      found[0] = f;
    }
    const Clock::time_point end = Clock::now();
    if (!error.ok()) {
      shared->Fail(error);
      break;
    }
    out->latencies_us.push_back(static_cast<float>(
        std::chrono::duration<double, std::micro>(end - start).count()));
    out->calls++;
    error = CheckAnswers(keys, phase, probes, values, found, m, &out->found);
    if (!error.ok()) {
      shared->Fail(error);
      break;
    }
    out->ops += m;
    shared->done.fetch_add(m, std::memory_order_relaxed);
    if (end > deadline) {
      out->capped = out->ops < quota;
      break;
    }
  }
  engine->ThreadEnd(&out->engine);
  ThreadCounters() = nullptr;
}

double Percentile(std::vector<float>* v, double q) {
  if (v->empty()) return 0;
  const size_t k = std::min(
      v->size() - 1, static_cast<size_t>(q * static_cast<double>(v->size())));
  std::nth_element(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(k),
                   v->end());
  return (*v)[k];
}

}  // namespace

Status RunPhase(Engine* engine, const KeySpace& keys, Phase phase,
                const LookupOptions& options,
                const std::function<void(uint64_t, uint64_t)>& progress,
                PhaseResult* out) {
  *out = PhaseResult();
  out->phase = phase;
  const int threads = std::max(1, options.threads);
  std::vector<ThreadResult> results(static_cast<size_t>(threads));
  Shared shared;
  engine->PhaseBegin();
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      options.max_seconds > 0
          ? start + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(options.max_seconds))
          : Clock::time_point::max();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; t++) {
    // Shares of --reads, the first threads taking the remainder.
    const uint64_t quota =
        options.reads / static_cast<uint64_t>(threads) +
        (static_cast<uint64_t>(t) <
                 options.reads % static_cast<uint64_t>(threads)
             ? 1
             : 0);
    workers.emplace_back(RunThread, engine, std::cref(keys), phase,
                         std::cref(options), quota, t, deadline, &shared,
                         &results[static_cast<size_t>(t)]);
  }
  // Report progress while the workers run.
  std::atomic<bool> finished{false};
  std::thread reporter([&] {
    while (!finished.load()) {
      progress(shared.done.load(), options.reads);
      for (int i = 0; i < 5 && !finished.load(); i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  });
  for (std::thread& w : workers) w.join();
  out->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  finished = true;
  reporter.join();
  progress(shared.done.load(), options.reads);
  engine->PhaseEnd(&out->engine);
  if (!shared.error.ok()) return shared.error;

  std::vector<float> latencies;
  for (ThreadResult& r : results) {
    out->io.Add(r.io);
    out->ops += r.ops;
    out->calls += r.calls;
    out->found += r.found;
    out->time_capped = out->time_capped || r.capped;
    latencies.insert(latencies.end(), r.latencies_us.begin(),
                     r.latencies_us.end());
    for (const auto& [name, value] : r.engine) out->engine[name] += value;
  }
  out->p50_us = Percentile(&latencies, 0.50);
  out->p99_us = Percentile(&latencies, 0.99);
  out->p999_us = Percentile(&latencies, 0.999);
  return Status::OK();
}

Zipf::Zipf(uint64_t n, double theta) : n_(n), theta_(theta) {
  for (uint64_t i = 1; i <= n; i++) {
    zeta_n_ += std::pow(static_cast<double>(i), -theta);
  }
  const double zeta_2 = 1 + std::pow(2.0, -theta);
  alpha_ = 1 / (1 - theta);
  eta_ = (1 - std::pow(2.0 / static_cast<double>(n), 1 - theta)) /
         (1 - zeta_2 / zeta_n_);
  half_pow_theta_ = std::pow(0.5, theta);
  // An odd multiplier near n * golden ratio, made coprime with n.
  multiplier_ =
      static_cast<uint64_t>(static_cast<double>(n) * 0.6180339887) | 1;
  while (std::gcd(multiplier_, n) != 1) multiplier_ += 2;
}

uint64_t Zipf::Next(Random64* rng) const {
  // A uniform double in [0, 1) from the top 53 bits.
  const double u = static_cast<double>(rng->Next() >> 11) * 0x1.0p-53;
  const double uz = u * zeta_n_;
  uint64_t rank;
  if (uz < 1) {
    rank = 0;
  } else if (uz < 1 + half_pow_theta_) {
    rank = 1;
  } else {
    rank = static_cast<uint64_t>(static_cast<double>(n_) *
                                 std::pow(eta_ * u - eta_ + 1, alpha_));
    rank = std::min(rank, n_ - 1);
  }
  return static_cast<uint64_t>(static_cast<unsigned __int128>(rank) *
                               multiplier_ % n_);
}

}  // namespace compare
}  // namespace sstfilter
