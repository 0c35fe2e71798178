// Copyright (c) the sstfilter authors. Licensed under the Apache License 2.0.

#include "sstfilter/spec.h"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "policy/kinds.h"

namespace sstfilter {
namespace {

std::string FormatNumber(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

Status Bad(std::string_view text, const std::string& why) {
  return Status::InvalidArgument("filter spec \"" + std::string(text) +
                                 "\": " + why);
}

}  // namespace

std::string FilterSpec::ToString() const {
  std::string s = FilterKindName(kind);
  s += ':';
  s += FormatNumber(bits_per_key);
  if (seed != 0) s += ":seed=" + std::to_string(seed);
  if (keyed) s += ":keyed";
  if (salt) s += ":salt";
  const FilterSpec defaults;
  if (by_level) s += ":by_level";
  if (size_ratio != defaults.size_ratio) {
    s += ":size_ratio=" + FormatNumber(size_ratio);
  }
  if (l0_files != defaults.l0_files) {
    s += ":l0_files=" + std::to_string(l0_files);
  }
  return s;
}

Status FilterSpec::Validate() const {
  const internal::KindRow* k = internal::FindKindRow(kind);
  if (k == nullptr || k->new_builder == nullptr) {
    return Status::InvalidArgument(
        std::string("filter kind \"") + FilterKindName(kind) +
        "\" has no builder; use " + internal::SpecKindList());
  }
  if (!(bits_per_key >= k->min_bits && bits_per_key <= k->max_bits)) {
    return Status::InvalidArgument(
        std::string(k->name) + " bits per key must be within [" +
        FormatNumber(k->min_bits) + ", " + FormatNumber(k->max_bits) +
        "], got " + FormatNumber(bits_per_key));
  }
  const FilterSpec defaults;
  if (!by_level &&
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

Status ParseFilterSpec(std::string_view text, FilterSpec* spec) {
  std::string_view rest = text;
  constexpr std::string_view kPrefix = kPolicyPrefix;
  if (rest.substr(0, kPrefix.size()) == kPrefix)
    rest.remove_prefix(kPrefix.size());

  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) {
    return Bad(text, "expected <kind>:<bits_per_key>, e.g. \"bloom:10\"");
  }
  const std::string_view kind_name = rest.substr(0, colon);
  rest.remove_prefix(colon + 1);

  FilterSpec out;
  const internal::KindRow* kind = internal::FindKindRow(kind_name);
  if (kind == nullptr || kind->new_builder == nullptr) {
    return Bad(text, "unknown filter kind \"" + std::string(kind_name) +
                         "\"; expected " + internal::SpecKindList());
  }
  out.kind = kind->kind;

  std::string_view bits = rest.substr(0, rest.find(':'));
  rest.remove_prefix(bits.size());
  double value = 0;
  // from_chars accepts no leading '+' or spaces; reject nan/inf by hand.
  auto res = std::from_chars(bits.data(), bits.data() + bits.size(), value,
                             std::chars_format::fixed);
  if (bits.empty() || res.ec != std::errc() ||
      res.ptr != bits.data() + bits.size() || !std::isfinite(value)) {
    return Bad(text, "bits per key \"" + std::string(bits) +
                         "\" is not a decimal number");
  }
  out.bits_per_key = value;

  // Options, each ":name" or ":name=value", at most once each.
  std::string seen;
  while (!rest.empty()) {
    rest.remove_prefix(1);  // ':'
    const std::string_view option = rest.substr(0, rest.find(':'));
    rest.remove_prefix(option.size());
    const size_t eq = option.find('=');
    const std::string_view name = option.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos
                                       ? std::string_view()
                                       : option.substr(eq + 1);
    if (seen.find("," + std::string(name) + ",") != std::string::npos) {
      return Bad(text, "option \"" + std::string(name) + "\" given twice");
    }
    seen += "," + std::string(name) + ",";
    auto whole = [&](auto* v) {
      auto r = std::from_chars(value.data(), value.data() + value.size(), *v);
      return !value.empty() && r.ec == std::errc() &&
             r.ptr == value.data() + value.size();
    };
    if (name == "by_level" && eq == std::string_view::npos) {
      out.by_level = true;
    } else if (name == "keyed" && eq == std::string_view::npos) {
      out.keyed = true;
    } else if (name == "salt" && eq == std::string_view::npos) {
      out.salt = true;
    } else if (name == "seed" && eq != std::string_view::npos) {
      if (!whole(&out.seed)) {
        return Bad(text, "seed \"" + std::string(value) +
                             "\" is not an unsigned 64-bit integer");
      }
    } else if (name == "l0_files" && eq != std::string_view::npos) {
      if (!whole(&out.l0_files)) {
        return Bad(text,
                   "l0_files \"" + std::string(value) + "\" is not an integer");
      }
    } else if (name == "size_ratio" && eq != std::string_view::npos) {
      auto r = std::from_chars(value.data(), value.data() + value.size(),
                               out.size_ratio, std::chars_format::fixed);
      if (value.empty() || r.ec != std::errc() ||
          r.ptr != value.data() + value.size() ||
          !std::isfinite(out.size_ratio)) {
        return Bad(text, "size_ratio \"" + std::string(value) +
                             "\" is not a decimal number");
      }
    } else {
      return Bad(text, "unknown option \"" + std::string(option) +
                           "\" after bits per key; expected seed=<n>, "
                           "keyed, salt, by_level, size_ratio=<x> or "
                           "l0_files=<n>");
    }
  }

  Status s = out.Validate();
  if (!s.ok()) return Bad(text, s.message());
  *spec = out;
  return Status::OK();
}

}  // namespace sstfilter
