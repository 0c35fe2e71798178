// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/spec.h"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "policy/kinds.h"
#include "policy/spec_parse.h"

namespace sstfilter {
namespace {

using internal::FormatDecimal;
using internal::FormatNumber;
using internal::ParseDecimal;
using internal::ParseWhole;

Status Bad(std::string_view text, const std::string& why) {
  return internal::SpecError("filter spec", text, why);
}

}  // namespace

// The bits per key an auto spec may name: its candidates' widest range.
constexpr double kAutoMinBits = 1;
constexpr double kAutoMaxBits = 64;
constexpr std::string_view kAutoName = "auto";

namespace {

// auto's per-kind cost options, in the order ToString writes them.
using CostField = double FilterSpec::*;
struct CostOption {
  const char* name;
  CostField field;
};
constexpr CostOption kCostOptions[] = {
    {"bloom_query_ns", &FilterSpec::bloom_query_ns},
    {"bloom_build_ns", &FilterSpec::bloom_build_ns},
    {"blocked_bloom_query_ns", &FilterSpec::blocked_bloom_query_ns},
    {"blocked_bloom_build_ns", &FilterSpec::blocked_bloom_build_ns},
    {"ribbon_query_ns", &FilterSpec::ribbon_query_ns},
    {"ribbon_build_ns", &FilterSpec::ribbon_build_ns},
};

bool HasKindCosts(const FilterSpec& s) {
  for (const CostOption& c : kCostOptions) {
    if (s.*c.field != 0) return true;
  }
  return false;
}

}  // namespace

std::string FilterSpec::ToString() const {
  std::string s = auto_kind ? std::string(kAutoName) : FilterKindName(kind);
  s += ':';
  s += FormatDecimal(bits_per_key);
  if (seed != 0) s += ":seed=" + std::to_string(seed);
  if (keyed) s += ":keyed";
  if (salt) s += ":salt";
  const FilterSpec defaults;
  if (by_level) s += ":by_level";
  if (size_ratio != defaults.size_ratio) {
    s += ":size_ratio=" + FormatDecimal(size_ratio);
  }
  if (l0_files != defaults.l0_files) {
    s += ":l0_files=" + std::to_string(l0_files);
  }
  if (read_us != defaults.read_us) s += ":read_us=" + FormatDecimal(read_us);
  if (build_x != defaults.build_x) s += ":build_x=" + FormatDecimal(build_x);
  for (const CostOption& c : kCostOptions) {
    if (this->*c.field != 0) {
      s += std::string(":") + c.name + "=" + FormatDecimal(this->*c.field);
    }
  }
  return s;
}

Status FilterSpec::Validate() const {
  const FilterSpec defaults;
  const internal::KindRow* k = internal::FindKindRow(kind);
  if (auto_kind) {
    if (kind != defaults.kind) {
      return Status::InvalidArgument(
          "an auto spec chooses the kind of each filter; leave kind at " +
          std::string(FilterKindName(defaults.kind)));
    }
    if (by_level) {
      return Status::InvalidArgument(
          "auto plans over the tree already; drop by_level");
    }
    if (!(bits_per_key >= kAutoMinBits && bits_per_key <= kAutoMaxBits)) {
      return Status::InvalidArgument("auto bits per key must be within [" +
                                     FormatNumber(kAutoMinBits) + ", " +
                                     FormatNumber(kAutoMaxBits) + "], got " +
                                     FormatNumber(bits_per_key));
    }
    if (!(read_us >= 0 && read_us <= 1e6)) {
      return Status::InvalidArgument(
          "read_us must be within [0, 1000000] microseconds, got " +
          FormatNumber(read_us));
    }
    if (!(build_x >= 1 && build_x <= 1000)) {
      return Status::InvalidArgument("build_x must be within [1, 1000], got " +
                                     FormatNumber(build_x));
    }
    for (const CostOption& c : kCostOptions) {
      const double v = this->*c.field;
      if (!(v == 0 || (v > 0 && v <= 1e6))) {
        return Status::InvalidArgument(
            std::string(c.name) +
            " must be within (0, 1000000] nanoseconds (0: the default), got " +
            FormatNumber(v));
      }
    }
  } else {
    if (k == nullptr || k->new_builder == nullptr) {
      return Status::InvalidArgument(
          std::string("filter kind \"") + FilterKindName(kind) +
          "\" has no builder; use " + internal::SpecKindList() + ", or auto");
    }
    if (!(bits_per_key >= k->min_bits && bits_per_key <= k->max_bits)) {
      return Status::InvalidArgument(
          std::string(k->name) + " bits per key must be within [" +
          FormatNumber(k->min_bits) + ", " + FormatNumber(k->max_bits) +
          "], got " + FormatNumber(bits_per_key));
    }
    if (read_us != defaults.read_us || build_x != defaults.build_x ||
        HasKindCosts(*this)) {
      return Status::InvalidArgument(
          "read_us, build_x and the <kind>_query_ns and <kind>_build_ns "
          "costs are the costs an auto spec weighs; use auto:<bits>");
    }
  }
  if (!by_level && !auto_kind &&
      (size_ratio != defaults.size_ratio || l0_files != defaults.l0_files)) {
    return Status::InvalidArgument(
        "size_ratio and l0_files describe the tree of a by_level "
        "spec; add by_level");
  }
  if (salt && seed != 0) {
    return Status::InvalidArgument(
        "salt draws a seed for every filter; it excludes seed=" +
        std::to_string(seed));
  }
  if (!(size_ratio >= 2 && size_ratio <= 1000)) {
    return Status::InvalidArgument("size_ratio must be within [2, 1000], got " +
                                   FormatNumber(size_ratio));
  }
  if (l0_files < 1 || l0_files > 1000) {
    return Status::InvalidArgument("l0_files must be within [1, 1000], got " +
                                   std::to_string(l0_files));
  }
  return Status::OK();
}

namespace {

const CostOption* FindCostOption(std::string_view name) {
  for (const CostOption& c : kCostOptions) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// One option after the bits per key: ":name" or ":name=value". Returns ""
// or what is wrong with it.
std::string ParseOption(std::string_view option, FilterSpec* out) {
  const size_t eq = option.find('=');
  const std::string_view name = option.substr(0, eq);
  const bool has_value = eq != std::string_view::npos;
  const std::string_view value = has_value ? option.substr(eq + 1) : "";
  const std::string quoted = "\"" + std::string(value) + "\"";
  if (!has_value && name == "by_level") {
    out->by_level = true;
  } else if (!has_value && name == "keyed") {
    out->keyed = true;
  } else if (!has_value && name == "salt") {
    out->salt = true;
  } else if (has_value && name == "seed") {
    if (!ParseWhole(value, &out->seed)) {
      return "seed " + quoted + " is not an unsigned 64-bit integer";
    }
  } else if (has_value && name == "l0_files") {
    if (!ParseWhole(value, &out->l0_files)) {
      return "l0_files " + quoted + " is not an integer";
    }
  } else if (has_value && name == "size_ratio") {
    if (!ParseDecimal(value, &out->size_ratio)) {
      return "size_ratio " + quoted + " is not a decimal number";
    }
  } else if (has_value && name == "read_us") {
    if (!ParseDecimal(value, &out->read_us)) {
      return "read_us " + quoted + " is not a decimal number";
    }
  } else if (has_value && name == "build_x") {
    if (!ParseDecimal(value, &out->build_x)) {
      return "build_x " + quoted + " is not a decimal number";
    }
  } else if (const CostOption* c = FindCostOption(name);
             has_value && c != nullptr) {
    if (!ParseDecimal(value, &(out->*c->field))) {
      return std::string(c->name) + " " + quoted + " is not a decimal number";
    }
  } else {
    return "unknown option \"" + std::string(option) +
           "\" after bits per key; expected seed=<n>, keyed, salt, "
           "by_level, size_ratio=<x> or l0_files=<n>" +
           (out->auto_kind ? ", read_us=<x>, build_x=<x>, or "
                             "<kind>_query_ns=<x> or <kind>_build_ns=<x> for "
                             "bloom, blocked_bloom and ribbon"
                           : "");
  }
  return "";
}

}  // namespace

Status ParseFilterSpec(std::string_view text, FilterSpec* spec) {
  std::string_view rest = text;
  constexpr std::string_view kPrefix = kPolicyPrefix;
  if (rest.substr(0, kPrefix.size()) == kPrefix) {
    rest.remove_prefix(kPrefix.size());
  }
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) {
    return Bad(text, "expected <kind>:<bits_per_key>, e.g. \"bloom:10\"");
  }
  const std::string_view kind_name = rest.substr(0, colon);
  rest.remove_prefix(colon + 1);

  FilterSpec out;
  if (kind_name == kAutoName) {
    out.auto_kind = true;
  } else {
    const internal::KindRow* kind = internal::FindKindRow(kind_name);
    if (kind == nullptr || kind->new_builder == nullptr) {
      return Bad(text, "unknown filter kind \"" + std::string(kind_name) +
                           "\"; expected " + internal::SpecKindList() +
                           ", or auto");
    }
    out.kind = kind->kind;
  }

  const std::string_view bits = rest.substr(0, rest.find(':'));
  rest.remove_prefix(bits.size());
  if (!ParseDecimal(bits, &out.bits_per_key)) {
    return Bad(text, "bits per key \"" + std::string(bits) +
                         "\" is not a decimal number");
  }

  // Options, each ":name" or ":name=value", at most once each.
  internal::SpecOptions options(rest);
  std::string_view option;
  std::string repeated;
  while (options.Next(&option, &repeated)) {
    if (!repeated.empty()) {
      return Bad(text, "option \"" + repeated + "\" given twice");
    }
    const std::string why = ParseOption(option, &out);
    if (!why.empty()) return Bad(text, why);
  }

  Status s = out.Validate();
  if (!s.ok()) return Bad(text, s.message());
  *spec = out;
  return Status::OK();
}

}  // namespace sstfilter
