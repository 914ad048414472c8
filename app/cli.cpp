// Parses argv into Options, refusing bad or repeated values, and holds the --help text.
#include "app/cli.h"

#include <signal.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "common/embedded_files.h"
#include "common/error.h"
#include "run/child_process.h"
#include "run/process_tree.h"
#include "script/script_search.h"

namespace mt {

const char *usage_text() {
  return R"(usage: moontrace [ENGINE OPTIONS] SCRIPT [SCRIPT OPTIONS] [+ SCRIPT [SCRIPT OPTIONS]]...
       moontrace SCRIPT --help     what a script shows, its options and examples
       moontrace list              list the scripts there are by name
       moontrace dump FILE.fxt     print a trace (or FILE.fxt.gz) one record a line
                                   (--json: as JSON), up to where it is damaged
       moontrace pack [-o FILE.mtpkg] [--btf FILE|DIR]... SCRIPT [OPTIONS]
                                   bundle SCRIPT, the modules it requires and
                                   its BPF objects, compiled with OPTIONS for
                                   this kernel and each --btf one, into
                                   NAME.mtpkg here (or FILE), which runs as
                                   moontrace FILE.mtpkg OPTIONS without Clang
       moontrace [ENGINE OPTIONS] check [--btf FILE|DIR] SCRIPT [OPTIONS]
                                   say which probe of each list this kernel
                                   would use, compile, and load into the
                                   verifier without attaching; with --btf,
                                   for the kernel whose BTF that is (a copy
                                   of /sys/kernel/btf/vmlinux, or of the
                                   whole directory for its modules), without
                                   loading; exits 1 when a probe is missing
                                   or it does not compile or load

moontrace runs a Lua script that declares kernel probes, compiles them to
BPF in-process, attaches them and runs the script's handlers on the events.
SCRIPT is a Lua file (at most 16 MiB), or the name of a script on the
search path: MOONTRACE_PATH, ~/.config/moontrace/scripts,
/etc/moontrace/scripts, then the shipped ones (e.g. demo), or a package
made by pack (NAME.mtpkg), which needs no compiler. Scripts joined by '+'
run in one session and one trace (e.g. uring + blk.lua), each with its
own options.

Engine options (before SCRIPT):
  -c, --command CMD     run CMD once the probes are attached, trace only it
                        (and its children), and stop when it exits; under
                        sudo it runs as the invoking user; its failure is
                        reported and becomes the exit status; with -f json
                        its output goes to stderr; a stop that comes first
                        sends it SIGTERM, and SIGKILL half a second later
  -p, --pid PID         trace only process PID (and its children, running
                        or to come) and stop when it exits; with -c too, a
                        latency pair's stop and a flow's step or end are
                        kept in any task when the start or the flow's begin
                        was traced
      --cgroup DIR      trace only tasks in the cgroup v2 directory DIR and
                        below it (a container's cgroup, for one); with -p
                        or -c, only their tasks that are in DIR
  -o, --output FILE     write the script's output to FILE, 0600, in place of
                        an earlier FILE once tracing begins (a trace named
                        *.gz is gzipped as it is written)
  -f, --format FORMAT   text (default); json: one JSON object per line;
                        folded: aggregations as folded stacks, for flame
                        graphs (flamegraph.pl, speedscope)
  -l, --list [PATTERN]  list the probes this kernel has that match PATTERN
                        (a glob, e.g. 'io_uring:*'; 'uprobe:PATH:*' for
                        PATH's functions, 'usdt:PATH:*' for its USDT
                        probes); with -v (-lv) show each probe's
                        arguments and their types
      --duration SECS   stop after SECS seconds (at most a year)
  -v, --verbose         say which probes were chosen and attached, report
                        lost events per interval, show verifier logs
      --emit-c          print the generated C and exit (no root needed)
      --no-cache        use nothing cached: generate the C and compile it again
      --expect-digest SHA256
                        run the package only if its sha256 is this one
      --signers FILE    run the package only if NAME.mtpkg.sig, beside it,
                        is its signature by one of FILE's allowed signers
                        (ssh-keygen -Y sign -n moontrace; FILE as for
                        ssh-keygen -Y verify)
      --unsafe          give the script os, io, load, dofile and debug, let
                        fxt{file=} name a path outside the working
                        directory, and let its C call any BPF helper or
                        kfunc, define programs and maps, and use
                        preprocessor directives
  -h, --help            show this help
  -V, --version         show the version

Environment:
  MOONTRACE_PATH        directories (':'-separated) of scripts to run by
                        name and of modules for require; files there must
                        be changeable only by root, you or the sudo user
  MOONTRACE_CACHE       compiled-object cache, a 0700 directory of yours
                        (default $XDG_CACHE_HOME/moontrace, else
                        .cache/moontrace in your passwd home, not $HOME),
                        kept under 256 MB
  MOONTRACE_BUFFER_KB   size of each per-CPU event buffer, a power of two
                        from 64 (default: 64 MiB shared among the CPUs,
                        from 1024 to 8192 each)

Ctrl-C, SIGTERM or SIGHUP stops tracing within a second: buffered events
get half a second, end handlers one, output and traces are finished, and
lost events are reported on stderr. Options that take a value are given
once.

Exit status: 0 when tracing ran; 1 on an error; 128 + signal when stopped
before tracing began; with -c, the command's status when it failed (128 +
signal when a signal killed it).
)";
}

namespace {

constexpr const char *kPackUsage =
    "usage: moontrace [ENGINE OPTIONS] pack [-o FILE.mtpkg] [--btf FILE|DIR]... SCRIPT [OPTIONS]";
constexpr const char *kCheckUsage =
    "usage: moontrace [ENGINE OPTIONS] check [--btf FILE|DIR] SCRIPT [OPTIONS]";
constexpr double kLongestDuration = 365.0 * 24 * 3600;  // a year, in seconds

double parse_duration(const std::string &v) {
  char *end;
  double seconds = std::strtod(v.c_str(), &end);
  // NaN fails both comparisons; inf and huge values the second.
  if (v.empty() || *end || !(seconds > 0) || !(seconds <= kLongestDuration))
    throw Error("invalid duration '" + v +
                "' for --duration: expected seconds, more than 0 and at most 31536000 (a year)");
  return seconds;
}

}  // namespace

Options parse_command_line(int argc, char **argv) {
  Options o;
  int i = 1;
  // Options that take one value: given twice, which one was meant?
  std::set<std::string> given;
  auto once = [&](const std::string &flag, const std::string &short_flag) {
    if (!given.insert(short_flag).second)
      throw Error("option " + flag + " is given twice; give it once");
  };
  auto value = [&](const std::string &flag) -> std::string {
    if (i + 1 >= argc)
      throw Error("option " + flag + " needs a value");
    return argv[++i];
  };
  for (; i < argc; i++) {
    std::string a = argv[i];
    std::string inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      inline_value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_inline = true;
    }
    auto arg = [&]() { return has_inline ? inline_value : value(a); };
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "-V" || a == "--version") {
      o.version = true;
    } else if (a == "-v" || a == "--verbose") {
      o.verbose++;
    } else if (a == "-l" || a == "-lv" || a == "-vl" || a == "--list") {
      o.list_probes = true;
      o.verbose += a.size() == 3;
      if (i + 1 < argc && argv[i + 1][0] != '-')
        o.list_pattern = argv[++i];
    } else if (a == "-f" || a == "--format") {
      once(a, "-f");
      std::string v = arg();
      if (v != "text" && v != "json" && v != "folded")
        throw Error("invalid output format '" + v + "' for -f: expected text, json or folded");
      o.json = v == "json";
      o.folded = v == "folded";
    } else if (a == "-c" || a == "--command") {
      once(a, "-c");
      o.command = arg();
      if (split_command(o.command).empty())
        throw Error("option " + a + " needs a command to run, not '" + o.command + "'");
    } else if (a == "-p" || a == "--pid") {
      once(a, "-p");
      std::string v = arg();
      char *end;
      errno = 0;
      long pid = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || pid <= 0 || pid > INT_MAX || errno == ERANGE)
        throw Error("invalid pid '" + v + "' for -p");
      if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        throw Error("no process with pid " + v + " (-p)");
      // kill() finds threads too; the probes compare processes.
      if (int process = thread_group_of(static_cast<int>(pid)); process > 0 && process != pid)
        throw Error("-p " + v + " is a thread of process " + std::to_string(process) +
                    ": give the process's pid");
      o.pid = static_cast<int>(pid);
    } else if (a == "-o" || a == "--output") {
      once(a, "-o");
      o.output = arg();
      if (o.output.empty())
        throw Error("option " + a + " needs a file name");
    } else if (a == "--cgroup") {
      once(a, a);
      o.cgroup = cgroup_filter(arg());
    } else if (a == "--duration") {
      once(a, "--duration");
      o.duration = parse_duration(arg());
    } else if (a == "--expect-digest") {
      once(a, a);
      o.expect_digest = arg();
      bool hex = o.expect_digest.size() == 64;
      for (char c : o.expect_digest)
        hex = hex && std::isxdigit(static_cast<unsigned char>(c));
      if (!hex)
        throw Error("invalid digest '" + o.expect_digest +
                    "' for --expect-digest: expected the 64 hex digits sha256sum prints");
      for (auto &c : o.expect_digest)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (a == "--signers") {
      once(a, a);
      o.signers = arg();
      if (o.signers.empty())
        throw Error("option --signers needs a file of allowed signers");
    } else if (a == "--emit-c") {
      o.emit_c = true;
    } else if (a == "--no-cache") {
      o.no_cache = true;
    } else if (a == "--unsafe") {
      o.unsafe = true;
    } else if (a.size() > 1 && a[0] == '-') {
      throw Error("unknown option '" + a + "' (see moontrace --help)");
    } else {
      break;
    }
  }
  if (o.list_probes && i < argc)
    throw Error("-l takes one PATTERN; '" + std::string(argv[i]) + "' is extra");
  if (i < argc) {
    o.script = argv[i++];
    if (o.script == "list" && i == argc) {
      o.list_scripts = true;
      o.script.clear();
    }
    if (o.script == "dump") {
      for (; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--json")
          o.dump_json = true;
        else if (a[0] == '-' || !o.dump_file.empty())
          throw Error("usage: moontrace dump FILE.fxt [--json]");
        else
          o.dump_file = a;
      }
      if (o.dump_file.empty())
        throw Error("usage: moontrace dump FILE.fxt [--json]");
      o.script.clear();
    }
    if (o.script == "check") {
      o.check = true;
      o.script.clear();
      for (; i < argc && argv[i][0] == '-'; i++) {
        std::string a = argv[i], v;
        if (a == "--btf" && i + 1 < argc)
          v = argv[++i];
        else if (a.rfind("--btf=", 0) == 0)
          v = a.substr(6);
        else
          throw Error(std::string(kCheckUsage) + " (engine options such as -f go before check)");
        if (!o.check_btf.empty())
          throw Error("option --btf is given twice; give it once");
        if (v.empty())
          throw Error("option --btf needs a file or a directory");
        o.check_btf = v;
      }
      if (i == argc)
        throw Error(kCheckUsage);
      o.script = argv[i++];
      if (!o.command.empty() || o.pid || !o.output.empty() || o.duration > 0 || o.emit_c)
        throw Error(
            "check attaches nothing and runs nothing: -c, -p, -o, --duration and "
            "--emit-c do not go with it");
    }
    if (o.script == "pack") {
      o.pack = true;
      o.script.clear();
      for (; i < argc && argv[i][0] == '-'; i++) {
        std::string a = argv[i];
        if (a.rfind("--btf=", 0) == 0 && a.size() > 6) {
          o.pack_btf.push_back(a.substr(6));
        } else if ((a == "--btf" || a == "-o") && i + 1 < argc && argv[i + 1][0]) {
          if (a == "-o" && !o.output.empty())
            throw Error("option -o is given twice; give it once");
          (a == "-o" ? o.output : o.pack_btf.emplace_back()) = argv[++i];
        } else {
          throw Error(kPackUsage);
        }
      }
      if (i == argc)
        throw Error(kPackUsage);
      o.script = argv[i++];
      if (!o.command.empty() || o.pid || o.duration > 0 || o.emit_c)
        throw Error("pack runs nothing: -c, -p, --duration and --emit-c do not go with it");
    }
    for (; i < argc; i++) {
      std::string a = argv[i];
      if (a != "+") {
        (o.more_scripts.empty() ? o.script_args : o.more_scripts.back().args).push_back(a);
        continue;
      }
      if (o.script.empty() || i + 1 == argc)
        throw Error("'+' must be followed by a script: SCRIPT [OPTIONS] + SCRIPT [OPTIONS]");
      o.more_scripts.push_back({argv[++i], {}});
    }
  }
  if (!o.command.empty() && o.pid)
    throw Error("-c and -p cannot be combined");
  if (o.pack && !o.more_scripts.empty())
    throw Error("pack takes one script; '+' joins scripts only to run them");
  bool package = o.script.ends_with(".mtpkg");
  for (const auto &m : o.more_scripts)
    package = package || m.script.ends_with(".mtpkg");
  if (package && !o.more_scripts.empty())
    throw Error("a package runs alone: '+' does not join it with other scripts");
  if (!o.expect_digest.empty() && !o.script.ends_with(".mtpkg"))
    throw Error("--expect-digest pins a package: the script must be a .mtpkg file");
  if (!o.signers.empty() && !o.script.ends_with(".mtpkg"))
    throw Error("--signers checks a package's signature: the script must be a .mtpkg file");
  return o;
}

// TEXT with control characters shown as '?': names and descriptions come
// from files, which must not drive the terminal or fake lines.
static std::string printable(const std::string &text) {
  std::string out = text;
  for (auto &c : out)
    if ((unsigned char)c < 0x20 || c == 0x7f)
      c = '?';
  return out;
}

std::string scripts_text(const std::vector<FoundScript> &scripts) {
  std::string out, runs;  // runs: where the script that runs by the current name is
  for (size_t i = 0; i < scripts.size(); i++) {
    const FoundScript &f = scripts[i];
    std::string where = f.shipped ? "shipped" : f.path;
    bool hidden = i > 0 && scripts[i - 1].name == f.name;
    if (!hidden)
      runs = where;
    char line[512];
    std::snprintf(line, sizeof line, "%-12s %-8s ", printable(f.name).c_str(),
                  f.version.empty() ? "-" : printable(f.version).c_str());
    out += line + printable(f.description) + "  [" +
           printable(where + (hidden ? ", hidden by " + runs : "")) + "]\n";
  }
  return out;
}

}  // namespace mt
