// The kernel side of the sandbox: which helpers a script's C may call, the
// scan of a compiled object for calls, its line info, and the refusals.
#include "compiler/tracing_policy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <regex>
#include <set>

#include "codegen/expression_policy.h"
#include "common/embedded_files.h"
#include "common/error.h"
#include "compile_in_child.h"
#include "compiler/bpf_elf.h"
#include "compiler/btf_line_info.h"
#include "compiler/helper_policy.h"
#include "compiler/instruction_scan.h"

namespace mt {

namespace {

// A program in the shape the engine generates: scaffolding under
// "<moontrace>", the script's statement under #line 7 of x.lua.
std::string program(const std::string &statement, const std::string &extra = "") {
  return "#include \"mt_helpers.h\"\n"
         "static __attribute__((noinline)) int twice(int x) { return 2 * x; }\n" +
         extra +
         "SEC(\"tracepoint/syscalls/sys_enter_getppid\")\n"
         "int mt_probe_0(void *ctx) {\n"
         "#line 7 \"x.lua\"\n" +
         statement +
         "\n"
         "#line 20 \"<moontrace>\"\n"
         "  return twice(bpf_get_smp_processor_id());\n"
         "}\n";
}

std::vector<char> compile(const std::string &source) {
  CompileResult r = testing::compile_in_child(source, {});
  EXPECT_TRUE(r.ok) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  return r.object;
}

std::string_view view(const std::vector<char> &object) {
  return {object.data(), object.size()};
}

struct Fixture {
  GeneratedProgram generated;
  Declaration decl;
  Fixture() {
    ProbeDecl probe;
    probe.where = {"x.lua", 3, 0};
    decl.script_path = "x.lua";
    decl.probes.push_back(probe);
    GeneratedProbe gp;
    gp.program = gp.attached_program = "mt_probe_0";
    gp.probe_name = "tracepoint:syscalls:sys_enter_getppid";
    generated.probes.push_back(gp);
    // Where the generated C puts it (program() does the same).
    generated.source =
        "SEC(\"tracepoint/syscalls/sys_enter_getppid\")\nint mt_probe_0(void *ctx) {}";
  }
};

std::string refusal(const std::vector<char> &object, bool uses_number_iterator = false) {
  Fixture f;
  f.generated.uses_number_iterator = uses_number_iterator;
  try {
    check_tracing_only(view(object), f.generated, f.decl);
  } catch (const Error &e) {
    return e.located();
  }
  return "";
}

}  // namespace

TEST(HelperPolicy, AllowsEveryHelperTheEngineHeadersDeclare) {
  std::regex declared(R"(\(void \*\)(\d+);)");
  int seen = 0;
  for (const auto &header : kBpfHeaders) {
    std::string text = header.content;
    for (std::sregex_iterator it(text.begin(), text.end(), declared), end; it != end; ++it) {
      EXPECT_TRUE(helper_allowed(std::stol((*it)[1]))) << header.name << ": " << (*it)[0];
      seen++;
    }
  }
  EXPECT_GT(seen, 15);
}

TEST(HelperPolicy, RefusesHelpersThatActOnTheSystem) {
  for (long id : {36L /* probe_write_user */, 58L /* override_return */, 109L /* send_signal */,
                  117L /* send_signal_thread */, 166L /* sys_bpf */, 168L /* sys_close */,
                  9L /* skb_store_bytes */, 6L /* trace_printk */, 177L /* trace_vprintk */, 0L,
                  -1L, 100000L})
    EXPECT_FALSE(helper_allowed(id)) << helper_name(id);
  EXPECT_EQ(helper_name(109), "bpf_send_signal");
  EXPECT_EQ(helper_name(36), "bpf_probe_write_user");
  EXPECT_EQ(helper_name(100000), "helper 100000");
  for (const auto &h : allowed_helpers())
    EXPECT_NE(std::string(h.reason), "") << h.id;
}

TEST(InstructionScan, FindsAHelperCalledByNumberAndItsScriptLine) {
  std::vector<char> object = compile(program("  ((long (*)(int))109)(9);"));
  ElfObject elf(view(object));
  std::vector<KernelCall> calls = scan_kernel_calls(elf);
  std::vector<long> helpers;
  const KernelCall *signal = nullptr;
  for (const auto &c : calls) {
    EXPECT_EQ(c.kind, KernelCall::Kind::Helper);  // the bpf-to-bpf call to twice() is no finding
    helpers.push_back(c.id);
    if (c.id == 109)
      signal = &c;
  }
  EXPECT_EQ(helpers, (std::vector<long>{109, 8}));
  ASSERT_TRUE(signal);
  EXPECT_EQ(signal->section, "tracepoint/syscalls/sys_enter_getppid");
  std::optional<SourceLine> line = BtfLineInfo(elf).find(signal->section, signal->offset);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->line, 7);
  EXPECT_TRUE(line->file == "x.lua" || line->file.ends_with("/x.lua")) << line->file;
}

TEST(InstructionScan, FindsHandMadeKfuncAndPseudoInstructions) {
  // call with src_reg 2 (BPF_PSEUDO_KFUNC_CALL), BTF id 7; a 64-bit load
  // with src_reg 1 (BPF_PSEUDO_MAP_FD), fd 5; a JMP32 call.
  std::vector<char> object = compile(program(
      "  asm volatile(\".byte 0x85, 0x20, 0, 0, 7, 0, 0, 0\");\n"
      "  asm volatile(\".byte 0x18, 0x11, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0\" ::: \"r1\");\n"
      "  asm volatile(\".byte 0x86, 0, 0, 0, 1, 0, 0, 0\");"));
  std::vector<KernelCall> calls = scan_kernel_calls(ElfObject(view(object)));
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].kind, KernelCall::Kind::Kfunc);
  EXPECT_EQ(calls[0].id, 7);
  EXPECT_EQ(calls[1].kind, KernelCall::Kind::HandMade);
  EXPECT_EQ(calls[1].id, 1);
  EXPECT_EQ(calls[2].kind, KernelCall::Kind::HandMade);
  EXPECT_EQ(calls[3].kind, KernelCall::Kind::Helper);
  EXPECT_EQ(calls[3].id, 8);
}

TEST(InstructionScan, FindsAKfuncCalledThroughAnExtern) {
  std::vector<char> object = compile(
      program("  bpf_rcu_read_lock();",
              "extern void bpf_rcu_read_lock(void) __attribute__((section(\".ksyms\")));\n"));
  std::vector<KernelCall> calls = scan_kernel_calls(ElfObject(view(object)));
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls[0].kind, KernelCall::Kind::Kfunc);
  EXPECT_EQ(calls[0].symbol, "bpf_rcu_read_lock");
  EXPECT_EQ(refusal(object),
            "x.lua:7: the kernel function bpf_rcu_read_lock (a kfunc) is not allowed in a script; "
            "it can only call tracing helpers (run with --unsafe to allow it)");
}

// mt_for's loops call the kernel's number iterator: three kfuncs that only
// count, which a script may call.
TEST(TracingPolicy, AllowsTheNumberIteratorOfALoop) {
  std::vector<char> object =
      compile("#define MT_HAVE_ITER_NUM 1\n" +
              program("  int sum = 0; mt_for(i, 0, 8) { if (i == 5) break; sum += i; }\n"
                      "  bpf_get_smp_processor_id(); (void)sum;",
                      "#include \"mt_loops.h\"\n"));
  std::set<std::string> kfuncs;
  for (const KernelCall &call : scan_kernel_calls(ElfObject(view(object))))
    if (call.kind == KernelCall::Kind::Kfunc)
      kfuncs.insert(call.symbol);
  EXPECT_EQ(kfuncs, (std::set<std::string>{"bpf_iter_num_new", "bpf_iter_num_next",
                                           "bpf_iter_num_destroy"}));
  EXPECT_EQ(refusal(object, true), "");
  // Not where the generator found a kernel that checks them soundly, even
  // if the C says otherwise (in a comment of the script's, say).
  EXPECT_EQ(refusal(object).rfind("x.lua:7: the kernel function bpf_iter_num_", 0), 0u)
      << refusal(object);
}

TEST(TracingPolicy, RefusesAForbiddenHelperAtItsScriptLine) {
  EXPECT_EQ(refusal(compile(program("  ((long (*)(int))109)(9);"))),
            "x.lua:7: bpf_send_signal (helper 109) is not allowed in a script; it can only trace "
            "(run with --unsafe to allow it)");
  EXPECT_EQ(refusal(compile(program("  bpf_probe_read_kernel(0, 0, 0);"))), "");
}

TEST(TracingPolicy, NamesTheProbeWhenNoScriptLineIsKnown) {
  // The call is attributed to the generated code, not to the script.
  std::vector<char> object = compile(
      program("#line 30 \"<moontrace>\"\n  ((long (*)(void *, __u32, __u64))36)(0, 0, 0);"));
  EXPECT_EQ(refusal(object),
            "x.lua:3: tracepoint:syscalls:sys_enter_getppid: bpf_probe_write_user (helper 36) is "
            "not allowed in a script; it can only trace (run with --unsafe to allow it)");
}

TEST(TracingPolicy, RefusesProgramsTheEngineDidNotGenerate) {
  std::vector<char> object =
      compile(program("  ;",
                      "SEC(\"tracepoint/syscalls/sys_enter_getpid\") int evil(void *ctx) {\n"
                      "#line 12 \"x.lua\"\n  return 0;\n}\n#line 40 \"<moontrace>\"\n"));
  EXPECT_EQ(refusal(object),
            "x.lua:12: the script's C defines a BPF program of its own, 'evil' in section "
            "\"tracepoint/syscalls/sys_enter_getpid\"; only moontrace's probes may load (run with "
            "--unsafe to allow it)");
}

TEST(TracingPolicy, RefusesAnEngineProgramMovedOutOfTracing) {
  std::string source = program("  ;");
  source.replace(source.find("tracepoint/syscalls/sys_enter_getppid"), 37, "lsm/file_open");
  EXPECT_EQ(refusal(compile(source)).substr(0, 70),
            "x.lua:3: tracepoint:syscalls:sys_enter_getppid: the script's C moves t");
}

TEST(TracingPolicy, DamagedObjectsAreErrorsNotCrashes) {
  std::vector<char> object = compile(program("  ((long (*)(int))109)(9);"));
  EXPECT_THROW(ElfObject(std::string_view("not an object")), Error);
  EXPECT_THROW(ElfObject(view(object).substr(0, 100)), Error);
  std::mt19937 random(12);
  for (int i = 0; i < 500; i++) {
    std::vector<char> damaged = object;
    for (int n = 0; n < 8; n++)
      damaged[random() % damaged.size()] = char(random());
    try {
      refusal(damaged);
    } catch (const Error &) {
    }
  }
}

// An object of the size of uring's (many probes, many calls) passes the
// scan; its cost is printed, not asserted (about 76 us here, unsanitized).
TEST(TracingPolicy, AnObjectOfUringsSizeWithAllowedHelpersPasses) {
  std::string body;
  for (int i = 0; i < 400; i++)
    body += "  if (bpf_get_prandom_u32() == " + std::to_string(i) + ") return " +
            std::to_string(i) + ";\n";
  std::vector<char> object = compile(program(body));
  Fixture f;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; i++)
    EXPECT_NO_THROW(check_tracing_only(view(object), f.generated, f.decl));
  auto each = (std::chrono::steady_clock::now() - start) / 100;
  std::fprintf(stderr, "[ measured ] one scan: %lld us\n",
               (long long)std::chrono::duration_cast<std::chrono::microseconds>(each).count());
}

TEST(LineGate, LineMayNameOnlyTheScriptsFiles) {
  CompileOptions options;
  options.line_files = {"x.lua"};
  std::string source = program("  int a = 1;\n#line 1 \"/etc/passwd\"\n  (void)a;");
  CompileResult r = testing::compile_in_child(source, options);
  ASSERT_FALSE(r.ok);
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_EQ(r.diagnostics[0].message,
            "x.lua:8:1: error: #line may not name the file '/etc/passwd'; a script's C cannot "
            "refer to other files");
  EXPECT_TRUE(testing::compile_in_child(program("  ;"), options).ok);
}

TEST(LineGate, TheCompilerSeesNoRealFiles) {
  for (const char *directive : {"#include \"/etc/passwd\"", "#embed \"/etc/passwd\""}) {
    std::string source = program(std::string("  char s[] = {\n") + directive + "\n  };");
    CompileResult r = testing::compile_in_child(source, {});
    ASSERT_FALSE(r.ok);
    bool not_found = false;
    for (const auto &d : r.diagnostics)
      not_found |= d.message.find("'/etc/passwd' file not found") != std::string::npos;
    EXPECT_TRUE(not_found) << directive;
  }
}

TEST(ExpressionPolicy, RefusesDirectivesAtTheirLine) {
  auto refused = [](const std::string &action) -> std::string {
    Declaration decl;
    ProbeDecl p;
    p.action = {action, {"x.lua", 4, 3}};
    decl.probes.push_back(p);
    try {
      check_no_directives(decl);
    } catch (const Error &e) {
      return e.located();
    }
    return "";
  };
  std::string tail =
      " is not allowed in a script's C; write expressions and statements (run with --unsafe to "
      "allow it)";
  EXPECT_EQ(refused("x = 1;\n  #include \"/etc/shadow\"\n"),
            "x.lua:5: a preprocessor directive (#include)" + tail);
  EXPECT_EQ(refused("a;\nb;\n%:define X 1"), "x.lua:6: a preprocessor directive (#define)" + tail);
  EXPECT_EQ(refused("# 1 \"/etc/shadow\""), "x.lua:4: a preprocessor directive (#1)" + tail);
  EXPECT_EQ(refused("x = 1; _Pragma(\"once\")"),
            "x.lua:4: a preprocessor directive (_Pragma)" + tail);
  // A # anywhere in the code: after a comment, or on a line continued.
  EXPECT_EQ(refused("1\n/**/ #error here\n"), "x.lua:5: a preprocessor directive (#error)" + tail);
  EXPECT_EQ(refused("x = 1; /* *\\\n/ #include <a.h>"),
            "x.lua:5: a preprocessor directive (#include)" + tail);
  EXPECT_EQ(refused("x = a # b;"), "x.lua:4: a preprocessor directive (#b)" + tail);
  EXPECT_EQ(refused("x = 1; _Pra\\\ngma(\"once\")"),
            "x.lua:4: a preprocessor directive (_Pragma)" + tail);
  // Not in comments, nor in string and character literals.
  EXPECT_EQ(refused("x = '#'; // #1\ny = \"#define\"; /* # */"), "");

  Declaration decl;
  MapDecl m;
  m.key_fields = {{"pid", "__u32\n#embed \"/etc/shadow\""}};
  m.where = {"x.lua", 9, 0};
  decl.maps.push_back(m);
  EXPECT_THROW(check_no_directives(decl), Error);
}

TEST(ExpressionPolicy, SourceFilesAreTheDeclarationsFiles) {
  Declaration decl;
  decl.script_path = "x.lua";
  ProbeDecl p;
  p.predicate = {"1", {"lib/mod.lua", 2, 1}};
  p.where = {"x.lua", 1, 0};
  decl.probes.push_back(p);
  EXPECT_EQ(source_files(decl), (std::set<std::string>{"lib/mod.lua", "x.lua"}));
}

// An object not compiled here (a package's) whose probe attaches
// elsewhere than its C says: refused, whatever the section.
TEST(TracingPolicy, RefusesAProgramMovedToAnotherSectionThanItsC) {
  std::string source = program("  return 0;");
  size_t at = source.find("sys_enter_getppid");
  source.replace(at, 17, "sys_enter_getpid");
  EXPECT_EQ(refusal(compile(source)),
            "x.lua:7: the object puts the program "
            "mt_probe_0 in section \"tracepoint/syscalls/sys_enter_getpid\", where the C it was "
            "compiled from has \"tracepoint/syscalls/sys_enter_getppid\" (run with --unsafe to "
            "allow it)");
}

}  // namespace mt
