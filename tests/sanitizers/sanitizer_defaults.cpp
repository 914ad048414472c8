// Default options of the sanitizers, compiled into every sanitized
// executable (MT_SANITIZE, MT_FUZZ) so that they hold however it is
// started: by ctest, by an e2e test that clears the environment, by hand.
// ASAN_OPTIONS, UBSAN_OPTIONS and LSAN_OPTIONS still override them.

extern "C" {

// Any report ends the process with a failure. abort_on_error: the exit is
// a SIGABRT, which the e2e tests cannot mistake for a clean error exit.
// MT_NO_LEAK_CHECK (the e2e test driver): LeakSanitizer's exit-time scan
// there now and then never ends (its tracer task dies and the process
// spins waiting for it; 2 of 112 e2e tests, never alone), and the driver's
// leaks are the tests' own. moontrace, which it runs, is checked.
const char *__asan_default_options() {
  return "halt_on_error=1:abort_on_error=1:strict_string_checks=1:"
         "detect_stack_use_after_return=1:check_initialization_order=1:"
#ifdef MT_NO_LEAK_CHECK
         "detect_leaks=0";
#else
         "detect_leaks=1";
#endif
}

const char *__ubsan_default_options() {
  return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}

// No leak suppressions: none were needed, not even for the uninstrumented
// LLVM and Clang that compile in-process.

}  // extern "C"
