/* A C program using the installed C API; exit 0 on success. */
#include <sstfilter/c.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  sstfilter_builder* b = NULL;
  char* err = NULL;
  if (sstfilter_builder_create("blocked_bloom:10", &b, &err) != SSTFILTER_OK) {
    fprintf(stderr, "%s\n", err ? err : "out of memory");
    sstfilter_free(err);
    return 1;
  }
  char key[32];
  for (int i = 0; i < 1000; i++) {
    sstfilter_builder_add_key(b, key, (size_t)sprintf(key, "key%d", i), NULL);
  }
  char* bytes = NULL;
  size_t size = 0;
  if (sstfilter_builder_finish(b, &bytes, &size, NULL) != SSTFILTER_OK)
    return 2;
  sstfilter_builder_destroy(b);
  sstfilter_reader* r = NULL;
  if (sstfilter_reader_open(bytes, size, &r, NULL) != SSTFILTER_OK) return 3;
  for (int i = 0; i < 1000; i++) {
    if (!sstfilter_reader_may_match(r, key, (size_t)sprintf(key, "key%d", i)))
      return 4;
  }
  sstfilter_reader_destroy(r);
  sstfilter_free(bytes);
  printf("c consumer: OK, %zu filter bytes\n", size);
  return 0;
}
