#include "runtime/cli.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>

#include "compiler/error.h"

namespace mt {

const char *usage_text() {
  return R"(usage: moontrace [ENGINE OPTIONS] SCRIPT [SCRIPT OPTIONS]
       moontrace SCRIPT --help     show a script's options
       moontrace list              list the shipped scripts
       moontrace dump FILE.fxt     print a trace (or FILE.fxt.gz) one record a line
                                   (--json: as JSON), up to where it is damaged

moontrace runs a Lua script that declares kernel probes, compiles them to
BPF in-process, attaches them and runs the script's handlers on the events.
SCRIPT is a Lua file (at most 16 MiB), or the name of a shipped script
(e.g. demo).

Engine options (before SCRIPT):
  -c, --command CMD     run CMD once the probes are attached, trace only it
                        (and its children), and stop when it exits; under
                        sudo it runs as the invoking user
  -p, --pid PID         trace only process PID (and its children); with -c
                        too, a latency pair's stop is kept in any task when
                        its start was traced
  -o, --output FILE     write the script's output to FILE (a trace named
                        *.gz is gzipped as it is written)
  -f, --format FORMAT   text (default) or json: one JSON object per line
  -l, --list [PATTERN]  list the probes this kernel has that match PATTERN
                        (a glob, e.g. 'io_uring:*'); with -v (-lv) show
                        each probe's arguments and their types
      --duration SECS   stop after SECS seconds
  -v, --verbose         say which probes were chosen and attached, report
                        lost events per interval, show verifier logs
      --emit-c          print the generated C and exit (no root needed)
      --no-cache        compile even if a cached object exists
      --unsafe          give the script os, io, load, dofile and debug
  -h, --help            show this help
  -V, --version         show the version

Environment:
  MOONTRACE_PATH        extra directories (':'-separated) for require
  MOONTRACE_CACHE       compiled-object cache (default ~/.cache/moontrace)
  MOONTRACE_BUFFER_KB   size of each per-CPU event buffer (default 4096)

Ctrl-C or SIGTERM stops tracing; output is flushed and lost events are
reported on stderr.
)";
}

Options parse_command_line(int argc, char **argv) {
  Options o;
  int i = 1;
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
      std::string v = arg();
      if (v != "text" && v != "json")
        throw Error("invalid output format '" + v + "' for -f: expected text or json");
      o.json = v == "json";
    } else if (a == "-c" || a == "--command") {
      o.command = arg();
    } else if (a == "-p" || a == "--pid") {
      std::string v = arg();
      char *end;
      long pid = std::strtol(v.c_str(), &end, 10);
      if (*end || pid <= 0)
        throw Error("invalid pid '" + v + "' for -p");
      if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
        throw Error("no process with pid " + v + " (-p)");
      o.pid = static_cast<int>(pid);
    } else if (a == "-o" || a == "--output") {
      o.output = arg();
    } else if (a == "--duration") {
      std::string v = arg();
      char *end;
      o.duration = std::strtod(v.c_str(), &end);
      if (*end || o.duration <= 0)
        throw Error("invalid duration '" + v + "': expected seconds > 0");
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
    for (; i < argc; i++)
      o.script_args.push_back(argv[i]);
  }
  if (!o.command.empty() && o.pid)
    throw Error("-c and -p cannot be combined");
  return o;
}

}  // namespace mt
