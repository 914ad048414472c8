// Catalogue: what a script's C may make the kernel do without --unsafe.
// Every case is refused before anything is attached, at the script line.
#include "tests/e2e/catalogue.h"

namespace e2e {
namespace {

// x.lua with one probe whose `field` (action, filter...) is `c` on line 3.
std::map<std::string, std::string> probe_with(const std::string &field, const std::string &c,
                                              const std::string &tail = "") {
  return {{"x.lua", "-- x.lua\nprobe(\"tracepoint:syscalls:sys_enter_getppid\", {\n  " + field +
                        " = [[" + c + "]],\n})\n" + tail}};
}

std::string refused(int line, const std::string &what) {
  return "moontrace: x.lua:" + std::to_string(line) + ": " + what +
         " (run with --unsafe to allow it)";
}

const std::string kOnlyTraces = " is not allowed in a script; it can only trace";
const std::string kNoDirective =
    " is not allowed in a script's C; write expressions and statements";

// Ends the engine's function so that the C after it stands at file scope,
// and opens a function that swallows the rest.
std::string at_file_scope(const std::string &c) {
  return "return 0; }\n" + c + "\nstatic __attribute__((unused)) int rest(void) {";
}

const std::vector<Case> kCases = {
    {.name = "SendSignalByNumber",
     .files = probe_with("action", "((long (*)(int))109)(0);"),
     .args = {"x.lua"},
     .error = refused(3, "bpf_send_signal (helper 109)" + kOnlyTraces)},
    {.name = "ProbeWriteUserInAFilter",
     .files = probe_with("filter", "((long (*)(void *, const void *, __u32))36)(0, 0, 0) == 0"),
     .args = {"x.lua"},
     .error = refused(3, "bpf_probe_write_user (helper 36)" + kOnlyTraces)},
    {.name = "OverrideReturnInACapture",
     .files = {{"x.lua",
                "-- x.lua\nprobe(\"tracepoint:syscalls:sys_enter_getppid\", {\n"
                "  capture = { r = \"((long (*)(void *, __u64))58)(0, 0)\" },\n})\n"}},
     .args = {"x.lua"},
     .error = refused(3, "bpf_override_return (helper 58)" + kOnlyTraces)},
    {.name = "SysBpfThroughAVariable",
     .files = probe_with("action", "long (*f)(int, void *, __u32) = (void *)166; f(0, 0, 0);"),
     .args = {"x.lua"},
     .error = refused(3, "bpf_sys_bpf (helper 166)" + kOnlyTraces)},
    {.name = "SendSignalThreadInALatencyAction",
     .files = {{"x.lua",
                "-- x.lua\nlatency{ start = \"tracepoint:syscalls:sys_enter_getppid\",\n"
                "  stop = \"tracepoint:syscalls:sys_exit_getppid\", key = \"tid\",\n"
                "  stop_action = [[((long (*)(int))117)(0);]], into = count{ name = \"n\" } }\n"}},
     .args = {"x.lua"},
     .error = refused(4, "bpf_send_signal_thread (helper 117)" + kOnlyTraces)},
    {.name = "HelperWithoutAName",
     .files = probe_with("action", "((long (*)(void))250)();"),
     .args = {"x.lua"},
     .error = refused(3, "BPF helper 250" + kOnlyTraces)},
    {.name = "HelperCalledFromInlineAsm",
     .files = probe_with("action",
                         "asm volatile(\"r1 = 0; call 109\" ::: \"r0\", \"r1\", \"r2\", "
                         "\"r3\", \"r4\", \"r5\");"),
     .args = {"x.lua"},
     .error = refused(3, "bpf_send_signal (helper 109)" + kOnlyTraces)},
    {.name = "HandMadeMapLoad",
     .files = probe_with("action",
                         "asm volatile(\".byte 0x18, 0x11, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, "
                         "0, 0, 0, 0\" ::: \"r1\");"),
     .args = {"x.lua"},
     .error = refused(3, "a hand-made BPF instruction (src_reg 1) is not allowed in a script")},
    {.name = "HandMadeKfuncCall",
     .files = probe_with("action", "asm volatile(\".byte 0x85, 0x20, 0, 0, 7, 0, 0, 0\");"),
     .args = {"x.lua"},
     .error = refused(3,
                      "a call of kernel function BTF id 7 (a kfunc) is not allowed in a script; it "
                      "can only call tracing helpers")},
    {.name = "KfuncThroughAnExtern",
     .files = probe_with("action",
                         "extern void bpf_rcu_read_lock(void) "
                         "__attribute__((section(\".ksyms\"))); bpf_rcu_read_lock();"),
     .args = {"x.lua"},
     .error = refused(3,
                      "the kernel function bpf_rcu_read_lock (a kfunc) is not allowed in a script; "
                      "it can only call tracing helpers")},
    {.name = "ProgramOfItsOwn",
     .files = probe_with(
         "action",
         at_file_scope("SEC(\"tracepoint/syscalls/sys_enter_getpid\") int evil(void *c) { "
                       "return 0; }")),
     .args = {"x.lua"},
     .error =
         refused(4,
                 "the script's C defines a BPF program of its own, 'evil' in section "
                 "\"tracepoint/syscalls/sys_enter_getpid\"; only moontrace's probes may load")},
    {.name = "PinnedMap",
     .files = probe_with("action", at_file_scope("struct { __uint(type, BPF_MAP_TYPE_HASH); "
                                                 "__uint(max_entries, 1); __type(key, int); "
                                                 "__type(value, int); __uint(pinning, 1); } "
                                                 "kept SEC(\".maps\");")),
     .args = {"x.lua"},
     .error = "moontrace: the script's C pins the map kept at /sys/fs/bpf/kept; maps may not be "
              "pinned (run with --unsafe to allow it)"},
    {.name = "SocketMap",
     .files = probe_with("action", at_file_scope("struct { __uint(type, 18); __uint(max_entries, "
                                                 "1); __type(key, int); __type(value, int); } "
                                                 "socks SEC(\".maps\");")),
     .args = {"x.lua"},
     .error = "moontrace: the script's C declares the map socks of type sockhash, which tracing "
              "does not use (run with --unsafe to allow it)"},
    {.name = "IncludeOfASecret",
     .files = probe_with("action", "int x = 1;\n#include \"/etc/shadow\"\n"),
     .args = {"x.lua"},
     .error = refused(4, "a preprocessor directive (#include)" + kNoDirective)},
    {.name = "EmbedOfASecret",
     .files = probe_with("action", "char s[] = {\n  #embed \"/etc/shadow\"\n};"),
     .args = {"x.lua"},
     .error = refused(4, "a preprocessor directive (#embed)" + kNoDirective)},
    {.name = "LineNamingAnotherFile",
     .files = probe_with("action", "\n#line 1 \"/etc/shadow\"\nint x = 1;"),
     .args = {"x.lua"},
     .error = refused(4, "a preprocessor directive (#line)" + kNoDirective)},
    {.name = "DigraphDirective",
     .files = probe_with("filter", "1\n %:include \"/etc/shadow\"\n"),
     .args = {"x.lua"},
     .error = refused(4, "a preprocessor directive (#include)" + kNoDirective)},
    {.name = "PragmaOperator",
     .files = probe_with("filter",
                         "1 _Pragma(\"clang attribute push (__attribute__((section("
                         "\\\"lsm/file_open\\\"))), apply_to = function)\")"),
     .args = {"x.lua"},
     .error = refused(3, "a preprocessor directive (_Pragma)" + kNoDirective)},
    {.name = "DirectiveInAMapKeyType",
     .files = {{"x.lua",
                "-- x.lua\nlocal m = map{ name = \"m\",\n"
                "  key = { pid = \"__u32\\n#include \\\"/etc/shadow\\\"\" } }\n"
                "probe(\"tracepoint:syscalls:sys_enter_getppid\", "
                "{ action = \"map_set(m, map_key(m, pid), 1);\" })\n"}},
     .args = {"x.lua"},
     .error = refused(3, "a preprocessor directive (#include)" + kNoDirective)},
    {.name = "TracingHelpersByNumberLoad",
     .files = probe_with("action", "((__u64 (*)(void))35)(); ((__u64 (*)(void))5)();"),
     .args = {"--duration", "0.2", "x.lua"},
     .error = "",
     .exit_code = 0},
};

CATALOGUE(Kernelside, kCases);

}  // namespace
}  // namespace e2e
