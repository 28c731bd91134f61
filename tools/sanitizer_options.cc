// Default options of the sanitizer runtimes, linked into every sanitized executable (the tests,
// the CLI, the fuzzers): a finding exits 3, never 1, because 1 is what `vramfit check` and
// `vramfit fit` return for "will not fit" and a CLI test that expects 1 must not pass on a
// crash. ASAN_OPTIONS / UBSAN_OPTIONS in the environment still override these (the ctest
// presets set the same values). docs/testing.md lists them.
extern "C" {

__attribute__((visibility("default"), used)) const char* __asan_default_options() {
  return "exitcode=3:detect_leaks=1:abort_on_error=0";
}

__attribute__((visibility("default"), used)) const char* __ubsan_default_options() {
  return "exitcode=3:print_stacktrace=1:halt_on_error=1";
}

}  // extern "C"
