// Builds a filter through the installed package and checks it; exit 0 on
// success.
#include <sstfilter/filter.h>
#include <sstfilter/spec.h>

#include <cstdio>
#include <memory>
#include <string>

int main() {
  sstfilter::FilterSpec spec;
  sstfilter::Status s = sstfilter::ParseFilterSpec("blocked_bloom:10", &spec);
  std::unique_ptr<sstfilter::FilterBuilder> builder;
  if (s.ok()) s = sstfilter::NewFilterBuilder(spec, &builder);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  for (int i = 0; i < 1000; i++) builder->AddKey("key" + std::to_string(i));
  std::string bytes;
  builder->Finish(&bytes);
  sstfilter::FilterReader reader = sstfilter::FilterReader::Open(bytes);
  for (int i = 0; i < 1000; i++) {
    if (!reader.MayMatch("key" + std::to_string(i))) return 2;
  }
  std::printf("consumer: OK, %zu filter bytes\n", bytes.size());
  return 0;
}
