// Runs Clang on a thread of its own, and a big script in two parts at once.
#include "app/compile_job.h"

#include <sched.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "app/forked_child.h"
#include "codegen/program_parts.h"
#include "common/error.h"
#include "common/field_codec.h"
#include "compiler/object_linker.h"
#include "run/stop_signals.h"

namespace mt {

namespace {

// Below this much C in programs a second process saves little (iostack's
// 21 KB); uring's 84 KB take 700 ms to compile whole, 450 in two parts.
constexpr size_t kSplitProgramBytes = 48 * 1024;

// Clang runs on a thread of its own so that a stop signal is answered at
// once: nothing has been written yet, so the compile is abandoned and
// moontrace exits while it runs. So does the library's load, as long.
template <typename T>
T unless_stopped(std::function<T()> work) {
  struct Job {
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    T result{};
    std::exception_ptr error;
  };
  auto job = std::make_shared<Job>();
  std::thread worker([job, work = std::move(work)] {
    T result{};
    std::exception_ptr error;
    try {
      result = work();
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(job->mutex);
    job->result = std::move(result);
    job->error = error;
    job->done = true;
    job->finished.notify_one();
  });
  try {
    std::unique_lock lock(job->mutex);
    while (!job->finished.wait_for(lock, std::chrono::milliseconds(20), [&] { return job->done; }))
      stop_if_signalled_before_tracing();
  } catch (...) {
    worker.detach();  // a stop: the process goes without it
    throw;
  }
  // Finished: its exit (LLVM's thread-local teardown) must not race the
  // process's own, when moontrace exits soon after (pack, check).
  worker.join();
  if (job->error)
    std::rethrow_exception(job->error);
  return std::move(job->result);
}

// compile_bpf(); MOONTRACE_TEST_SLOW_COMPILE_MS makes it slow for the
// tests of a stop during it.
CompileResult compile(const std::string &source, const CompileOptions &options) {
  if (const char *ms = std::getenv("MOONTRACE_TEST_SLOW_COMPILE_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
  return compile_bpf(source, options);
}

CompileResult compile_on_a_thread(const std::string &source, const CompileOptions &options) {
  return unless_stopped<CompileResult>([source, options] { return compile(source, options); });
}

std::string encode(const CompileResult &r) {
  FieldWriter w;
  w.num(r.ok).str({r.object.data(), r.object.size()}).str(r.rewritten_source).str(r.failure);
  w.num(static_cast<int64_t>(r.diagnostics.size()));
  for (const auto &d : r.diagnostics)
    w.str(d.file).num(d.line).num(d.column).num(d.is_error).str(d.message);
  return w.bytes();
}

CompileResult decode(const std::string &bytes) {
  FieldReader r(bytes);
  CompileResult result;
  result.ok = r.num() != 0;
  std::string object = r.str();
  result.object.assign(object.begin(), object.end());
  result.rewritten_source = r.str();
  result.failure = r.str();
  for (int64_t n = r.num(); n > 0; n--) {
    CompileDiagnostic d;
    d.file = r.str();
    d.line = static_cast<int>(r.num());
    d.column = static_cast<int>(r.num());
    d.is_error = r.num() != 0;
    d.message = r.str();
    result.diagnostics.push_back(std::move(d));
  }
  if (!r.done())
    throw Error("trailing bytes");
  return result;
}

// A compile by a child forked now: this process may already have compiled.
class CompileInAChild {
 public:
  CompileInAChild(const std::string &source, const CompileOptions &options, bool dies = false)
      : child_([&] {
          if (dies)
            raise(SIGKILL);
          CompileResult result;
          try {
            result = compile(source, options);
          } catch (const std::exception &e) {
            result.failure = e.what();
          }
          return encode(result);
        }) {}

  // Its result; none when the child died or answered garbled.
  std::optional<CompileResult> result() {
    ForkedChild::Ended ended = child_.wait(stop_if_signalled_before_tracing);
    try {
      if (ended.status == 0)
        return decode(ended.output);
    } catch (const Error &) {
    }
    return std::nullopt;
  }

 private:
  ForkedChild child_;
};

// Whether a compile in two parts pays: enough C, and two CPUs to run them.
// MOONTRACE_TEST_SPLIT_COMPILE=1 (or 0) says so for the tests ("1, its
// child dies": the second part's child is killed as it starts).
bool worth_splitting(const ProgramParts &parts) {
  if (parts.defines[0].empty())
    return false;
  if (const char *forced = std::getenv("MOONTRACE_TEST_SPLIT_COMPILE"))
    return std::string(forced).starts_with("1");
  cpu_set_t cpus;
  return parts.program_bytes >= kSplitProgramBytes &&
         sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) >= 2;
}

}  // namespace

CompileResult compile_unless_stopped(const std::string &source, const CompileOptions &options,
                                     bool may_split, std::string *note) {
  ProgramParts parts = program_parts(source);
  if (!may_split || !worth_splitting(parts))
    return compile_on_a_thread(source, options);
  unless_stopped<bool>([] {
    load_compiler_library();  // once, for both processes
    return true;
  });
  CompileOptions first = options, second = options;
  first.defines.insert(first.defines.end(), parts.defines[0].begin(), parts.defines[0].end());
  second.defines.insert(second.defines.end(), parts.defines[1].begin(), parts.defines[1].end());
  // The second part by a child forked before this process compiles; no
  // child to be had, the whole here.
  std::unique_ptr<CompileInAChild> child;
  try {
    const char *test = std::getenv("MOONTRACE_TEST_SPLIT_COMPILE");
    child = std::make_unique<CompileInAChild>(source, second,
                                              test && std::string(test) == "1, its child dies");
  } catch (const Error &) {
    return compile_on_a_thread(source, options);
  }
  CompileResult mine = compile_on_a_thread(source, first);
  std::optional<CompileResult> theirs = child->result();
  if (!mine.ok) {
    // Errors in what both parts share are in both: each told once, and
    // those of the other part's programs too.
    auto same = [](const CompileDiagnostic &d) {
      return std::tuple(d.file, d.line, d.column, d.message);
    };
    std::set<std::tuple<std::string, int, int, std::string>> told;
    for (const auto &d : mine.diagnostics)
      told.insert(same(d));
    for (const auto &d : theirs ? theirs->diagnostics : std::vector<CompileDiagnostic>{})
      if (told.insert(same(d)).second)
        mine.diagnostics.push_back(d);
    return mine;
  }
  std::string why = "the process compiling half the programs died";
  if (theirs && !theirs->failure.empty())
    throw Error(theirs->failure);
  if (theirs && !theirs->ok)
    return *theirs;
  if (theirs) {
    try {
      // The first part first: it lists the kfuncs both call (mt_helpers.h).
      mine.object = link_bpf_objects({mine.object, theirs->object});
      if (note)
        *note = "compiled in two parts at once (" + std::to_string(parts.defines[1].size() - 1) +
                " and " + std::to_string(parts.defines[0].size() - 1) + " programs), linked";
      return mine;
    } catch (const Error &e) {
      why = e.what();
    }
  }
  // The parts made no object: the whole, by one more child.
  if (note)
    *note = "compiled whole after all (" + why + ")";
  std::optional<CompileResult> whole = CompileInAChild(source, options).result();
  if (!whole)
    throw Error("the process compiling the programs died");
  if (!whole->failure.empty())
    throw Error(whole->failure);
  return *whole;
}

}  // namespace mt
