// Installs and restores stop-signal handlers and counts the stop requests they note.
#include "run/stop_signals.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

#include "common/stop_request.h"

namespace mt {
namespace {

// The signals whose dispositions moontrace changes, and what they were.
constexpr int kChangedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE};
struct sigaction g_inherited[NSIG];

volatile sig_atomic_t g_first_signal = 0;
volatile sig_atomic_t g_signal_count = 0;

void on_stop_signal(int sig) {
  if (!g_first_signal)
    g_first_signal = sig;
  g_signal_count = g_signal_count + 1;
  request_stop();  // a write blocked on a stalled reader gives up
}

// Interrupts the poll so that a -c command's exit stops tracing at once.
void on_child_signal(int) {}

void remember_inherited_signals() {
  static bool remembered = false;
  if (remembered)
    return;
  remembered = true;
  for (int sig : kChangedSignals)
    sigaction(sig, nullptr, &g_inherited[sig]);
}

}  // namespace

void ignore_sigpipe() {
  remember_inherited_signals();
  signal(SIGPIPE, SIG_IGN);
}

void install_stop_signal_handlers() {
  remember_inherited_signals();
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a signal must wake the poll
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // Under nohup a hangup is no stop. SIGINT is always one, even when a
    // shell started moontrace in the background with it ignored: scripts
    // stop a tracer with kill -INT.
    if (sig == SIGHUP && g_inherited[sig].sa_handler == SIG_IGN)
      continue;
    sigaction(sig, &sa, nullptr);
  }
  sa.sa_handler = on_child_signal;
  sigaction(SIGCHLD, &sa, nullptr);
}

void restore_inherited_signals() {
  for (int sig : kChangedSignals) {
    struct sigaction sa = g_inherited[sig];
    if (sa.sa_handler != SIG_IGN)
      sa.sa_handler = SIG_DFL;
    sa.sa_flags &= ~SA_SIGINFO;
    sigaction(sig, &sa, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

int stop_signal() {
  return g_first_signal;
}

int stop_signal_count() {
  return g_signal_count;
}

std::string signal_name(int sig) {
  const char *abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string signal_description(int sig) {
  const char *text = sigdescr_np(sig);
  return text ? text : "unknown signal";
}

void stop_if_signalled_before_tracing() {
  if (int sig = stop_signal())
    throw StoppedBeforeTracing{sig};
}

}  // namespace mt
