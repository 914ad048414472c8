// Catalogue: files another user could have planted or changed (scripts,
// modules, the object cache, links at output paths), where a script may
// write, and runs that fail before tracing (which must leave earlier
// output untouched) or while writing.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "tests/e2e/catalogue.h"

namespace e2e {
namespace {

constexpr uid_t kNobody = 65534;

// A script that compiles a program (so that the object cache is used)
// and stops at once.
const char *kProbeScript = "probe(\"tracepoint:syscalls:sys_enter_getppid\")\nexit()\n";

void must(bool ok, const std::string &what) {
  if (!ok)
    throw std::runtime_error(what + ": " + std::strerror(errno));
}

std::function<void(const std::string &)> make_dir(std::string name, mode_t mode, uid_t owner = 0) {
  return [=](const std::string &dir) {
    std::string p = dir + "/" + name;
    std::filesystem::create_directories(p);
    must(chmod(p.c_str(), mode) == 0, "chmod " + p);
    must(chown(p.c_str(), owner, owner) == 0, "chown " + p);
  };
}

std::function<void(const std::string &)> give(std::string name, uid_t owner, mode_t mode) {
  return [=](const std::string &dir) {
    std::string p = dir + "/" + name;
    must(chown(p.c_str(), owner, owner) == 0, "chown " + p);
    must(chmod(p.c_str(), mode) == 0, "chmod " + p);
  };
}

std::function<void(const std::string &)> link(std::string name, std::string target,
                                              uid_t owner = 0) {
  return [=](const std::string &dir) {
    std::string p = dir + "/" + name;
    must(symlink(target.c_str(), p.c_str()) == 0, "symlink " + p);
    must(lchown(p.c_str(), owner, owner) == 0, "lchown " + p);
  };
}

std::function<void(const std::string &)> fifo(std::string name, uid_t owner) {
  return [=](const std::string &dir) {
    std::string p = dir + "/" + name;
    must(mkfifo(p.c_str(), 0644) == 0, "mkfifo " + p);
    must(chown(p.c_str(), owner, owner) == 0, "chown " + p);
  };
}

const std::vector<Case> kCases = {
    // The object cache.
    {.name = "CacheDirectoryWritableByOthers",
     .files = {{"t.lua", kProbeScript}},
     .args = {"t.lua"},
     .error = "moontrace: refusing to use the object cache {dir}/cache: {dir}/cache is writable "
              "by other users (owner root uid 0, mode 0777); chmod 700 {dir}/cache",
     .env = {{"MOONTRACE_CACHE", "{dir}/cache"}},
     .setup = make_dir("cache", 0777)},
    {.name = "CacheDirectoryOfAnotherUser",
     .files = {{"t.lua", kProbeScript}},
     .args = {"t.lua"},
     .error = "moontrace: refusing to use the object cache {dir}/cache: {dir}/cache belongs to "
              "another user (owner nobody uid 65534, mode 0700); set MOONTRACE_CACHE to a "
              "directory of your own or run with --no-cache",
     .env = {{"MOONTRACE_CACHE", "{dir}/cache"}},
     .setup = make_dir("cache", 0700, kNobody)},
    {.name = "CacheBelowADirectoryOthersCanWrite",
     .files = {{"t.lua", kProbeScript}},
     .args = {"t.lua"},
     .error = "moontrace: refusing to use the object cache {dir}/cache-open/c: {dir}/cache-open "
              "is writable by other users (owner root uid 0, mode 0777); chmod go-w "
              "{dir}/cache-open or move the cache (MOONTRACE_CACHE)",
     .env = {{"MOONTRACE_CACHE", "{dir}/cache-open/c"}},
     .setup = make_dir("cache-open", 0777)},
    {.name = "CacheInStickyTmpLikeDirectoryIsStillRefusedWhenOpen",
     .files = {{"t.lua", kProbeScript}},
     .args = {"t.lua"},
     .error = "moontrace: refusing to use the object cache {dir}/cache: {dir}/cache is writable "
              "by other users (owner root uid 0, mode 1777); set MOONTRACE_CACHE to a directory of "
              "your own",
     .env = {{"MOONTRACE_CACHE", "{dir}/cache"}},
     .setup = make_dir("cache", 01777)},
    {.name = "XdgCacheHomeOfAnotherUser",
     .files = {{"t.lua", kProbeScript}},
     .args = {"t.lua"},
     .error = "moontrace: refusing to use the object cache {dir}/cache-xdg/moontrace: "
              "{dir}/cache-xdg belongs to another user (owner nobody uid 65534, mode 0755); "
              "chown root {dir}/cache-xdg or move the cache (MOONTRACE_CACHE)",
     .env = {{"MOONTRACE_CACHE", ""}, {"XDG_CACHE_HOME", "{dir}/cache-xdg"}},
     .setup =
         [](const std::string &dir) {
           make_dir("cache-xdg/moontrace", 0700)(dir);
           make_dir("cache-xdg", 0755, kNobody)(dir);
         }},

    // Scripts and modules.
    {.name = "ScriptOfAnotherUser",
     .files = {{"t.lua", "print(1)\n"}},
     .args = {"t.lua"},
     .error = "moontrace: refusing to load t.lua: {dir}/t.lua belongs to another user (owner "
              "nobody uid 65534, mode 0644); chown root {dir}/t.lua or use a copy of your own",
     .setup = give("t.lua", kNobody, 0644)},
    {.name = "ScriptWritableByItsGroup",
     .files = {{"t.lua", "print(1)\n"}},
     .args = {"t.lua"},
     .error = "moontrace: refusing to load t.lua: {dir}/t.lua is writable by other users (owner "
              "root uid 0, mode 0664); chmod go-w {dir}/t.lua",
     .setup = give("t.lua", 0, 0664)},
    {.name = "ScriptInADirectoryOthersCanWrite",
     .files = {{"shared/t.lua", "print(1)\n"}},
     .args = {"shared/t.lua"},
     .error = "moontrace: refusing to load shared/t.lua: {dir}/shared is writable by other users "
              "(owner root uid 0, mode 0777); chmod go-w {dir}/shared or move the file",
     .setup = give("shared", 0, 0777)},
    {.name = "ModuleNextToTheScriptOfAnotherUser",
     .files = {{"t.lua", "local x = 1\nrequire \"helper\"\n"}, {"helper.lua", "return {}\n"}},
     .args = {"t.lua"},
     .error = "moontrace: t.lua:2: refusing to load ./helper.lua: {dir}/helper.lua belongs to "
              "another user (owner nobody uid 65534, mode 0644); chown root {dir}/helper.lua or "
              "use a copy of your own",
     .setup = give("helper.lua", kNobody, 0644)},
    {.name = "ModuleWritableByOthers",
     .files = {{"t.lua", "require \"helper\"\n"}, {"helper.lua", "return {}\n"}},
     .args = {"t.lua"},
     .error = "moontrace: t.lua:1: refusing to load ./helper.lua: {dir}/helper.lua is writable "
              "by other users (owner root uid 0, mode 0666); chmod go-w {dir}/helper.lua",
     .setup = give("helper.lua", 0, 0666)},
    {.name = "ModuleThatIsAFifoDoesNotHang",
     .files = {{"t.lua", "require \"helper\"\n"}},
     .args = {"t.lua"},
     .error = "moontrace: t.lua:1: './helper.lua' is a FIFO, not a script file",
     .setup = fifo("helper.lua", kNobody),
     .timeout_s = 10},
    {.name = "ModuleInAWorldWritableMoontracePathDirectory",
     .files = {{"t.lua", "require \"fmt2\"\n"}, {"mods/fmt2.lua", "return {}\n"}},
     .args = {"t.lua"},
     .error = "moontrace: t.lua:1: refusing to load {dir}/mods/fmt2.lua: {dir}/mods is writable "
              "by other users (owner root uid 0, mode 0777); chmod go-w {dir}/mods or move the "
              "file",
     .env = {{"MOONTRACE_PATH", "{dir}/mods"}},
     .setup = give("mods", 0, 0777)},

    // Where a script may write.
    {.name = "FxtFileOutsideTheWorkingDirectory",
     .files = {{"t.lua", "fxt{ file = \"/etc/x.fxt\" }\n"}},
     .args = {"t.lua"},
     .error = "moontrace: t.lua:1: fxt{file = \"/etc/x.fxt\"}: a script may only name a file in "
              "the working directory; give -o FILE or run with --unsafe"},
    {.name = "FxtFileUpOneDirectory",
     .files = {{"t.lua", "\nfxt{ file = \"../x.fxt\" }\n"}},
     .args = {"t.lua"},
     .error = "moontrace: t.lua:2: fxt{file = \"../x.fxt\"}: a script may only name a file in "
              "the working directory; give -o FILE or run with --unsafe"},
    {.name = "FxtFileThatIsALinkEvenOfRoot",
     .files = {{"t.lua", "fxt{ file = \"uring.fxt.link\" }\n"}},
     .args = {"t.lua"},
     .error = "moontrace: t.lua:1: refusing to write uring.fxt.link: uring.fxt.link is a "
              "symbolic link (owner root uid 0, mode 0777); remove it, or name the trace with -o",
     .setup = link("uring.fxt.link", "out.txt")},
    {.name = "UringFxtThatIsALink",
     .args = {"uring"},
     .error = "moontrace: uring.lua:{uring_fxt_line}: refusing to write uring.fxt: uring.fxt is a "
              "symbolic "
              "link (owner root uid 0, mode 0777); remove it, or name the trace with -o",
     .setup =
         [](const std::string &dir) {
           must(unlink((dir + "/uring.fxt").c_str()) == 0, "unlink uring.fxt");
           link("uring.fxt", "out.txt")(dir);
         }},
    {.name = "FxtFileThroughALinkedDirectoryWithUnsafe",
     .files = {{"t.lua", "fxt{ file = \"ln/x.fxt\" }\n"}},
     .args = {"--unsafe", "t.lua"},
     .error = "moontrace: t.lua:1: refusing to write ln/x.fxt: ln is reached through a symbolic "
              "link; name the trace with -o",
     .setup = link("ln", "/tmp")},

    // Links and special files at -o.
    {.name = "OutputLinkOfAnotherUser",
     .files = {{"t.lua", "print(1)\n"}},
     .args = {"-o", "out.link", "t.lua"},
     .error = "moontrace: refusing to write out.link: out.link is a symbolic link made by another "
              "user (owner nobody uid 65534, mode 0777); remove it or give another name",
     .setup = link("out.link", "out.txt", kNobody)},
    {.name = "OutputLinkInADirectoryOthersCanWrite",
     .files = {{"t.lua", "print(1)\n"}},
     .args = {"-o", "open/out.link", "t.lua"},
     .error = "moontrace: refusing to write open/out.link: open/out.link is a symbolic link, and "
              "open is writable by other users (owner root uid 0, mode 0777); remove the link or "
              "name the file it points to",
     .setup =
         [](const std::string &dir) {
           make_dir("open", 0777)(dir);
           link("open/out.link", "../out.txt")(dir);
         }},
    {.name = "OutputFifoOfAnotherUser",
     .files = {{"t.lua", "print(1)\n"}},
     .args = {"-o", "pipe", "t.lua"},
     .error = "moontrace: refusing to write pipe: pipe belongs to another user (owner nobody uid "
              "65534, mode 0644); remove it or give another name",
     .setup = fifo("pipe", kNobody)},
    {.name = "OutputIsADirectory",
     .files = {{"t.lua", "print(1)\n"}, {"sub/keep", "x"}},
     .args = {"-o", "sub", "t.lua"},
     .error = "moontrace: cannot write sub: Is a directory"},
    {.name = "OutputInAMissingDirectory",
     .files = {{"t.lua", "print(1)\n"}},
     .args = {"-o", "nodir/out.txt", "t.lua"},
     .error = "moontrace: cannot write nodir/out.txt: No such file or directory"},

    // Runs that fail before tracing leave earlier output untouched.
    {.name = "UnknownScriptOptionKeepsUringFxt",
     .args = {"uring", "--bogus"},
     .error = "moontrace: unknown script option '--bogus' (see the script's --help)"},
    {.name = "EngineOptionAfterTheScriptKeepsUringFxt",
     .args = {"uring", "-o", "uring.fxt"},
     .error = "moontrace: unknown script option '-o' (see the script's --help)"},
    {.name = "CompileErrorKeepsTheOutputFile",
     .files = {{"t.lua",
                "fxt{}\nprobe(\"tracepoint:syscalls:sys_enter_getppid\", { filter = "
                "\"nosuch > 1\" })\n"}},
     .args = {"-o", "uring.fxt", "t.lua"},
     .error = "moontrace: t.lua:2:60: error: use of undeclared identifier 'nosuch'"},
    {.name = "CompileErrorKeepsTextOutput",
     .files = {{"t.lua",
                "probe(\"tracepoint:syscalls:sys_enter_getppid\", { filter = \"nosuch > "
                "1\" })\n"}},
     .args = {"-o", "out.txt", "t.lua"},
     .error = "moontrace: t.lua:1:60: error: use of undeclared identifier 'nosuch'"},

    {.name = "ACommandNotThereKeepsTheOutputFile",
     .args = {"-o", "uring.fxt", "-c", "nop_storm_typo 10", "uring"},
     .error = "moontrace: cannot run the -c command: nop_storm_typo: No such file or directory"},

    {.name = "VerifierRejectionKeepsTheOutputFile",
     .files = {{"t.lua",
                "probe(\"tp_btf:io_uring_complete\", {\n"
                "  capture = { bad = \"*((long *)args.ctx + 100000)\" },\n})\n"}},
     .args = {"-o", "uring.fxt", "t.lua"},
     .error = "moontrace: t.lua:1: the BPF verifier rejected the program for "
              "tp_btf:io_uring_complete: access beyond struct io_ring_ctx at off 800000 size 8 "
              "(run with -v for the kernel's log)"},

    // Write errors.
    {.name = "OutputToAFullDevice",
     .files = {{"t.lua",
                "probe(\"begin\", function() for i = 1, 20 do print(i) end exit() end)\n"}},
     .args = {"-o", "/dev/full", "t.lua"},
     .error = "moontrace: cannot write /dev/full: No space left on device (0 of 20 records "
              "reached it)"},
};

CATALOGUE(Files, kCases);

}  // namespace
}  // namespace e2e
