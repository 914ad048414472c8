// The front-end cache: kernel answers and generated C come back only for
// the engine, kernel and declaration they were kept for, whole.
#include "app/front_end_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "app/compile_step.h"
#include "common/declaration_fingerprint.h"
#include "common/error.h"
#include "script/script_params.h"
#include "tests/unit/scratch_dir.h"

namespace mt {
namespace {

class FrontEndCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write("engine", "engine build 1");
    write("btf", "kernel build 1");
    write("modules", "ext4 1234 0 - Live 0x0\nloop 42 0 - Live 0x0\n");
    write("notes", "build id 1");
    files_ = {dir_.file("engine"), dir_.file("btf"), dir_.file("modules")};
    files_.kernel_notes = dir_.file("notes");
    decl_.script_path = "t.lua";
    decl_.probes.resize(2);
    decl_.probes[0].alternatives = {"tracepoint:syscalls:sys_enter_getppid"};
    decl_.probes[1].id = 1;
    decl_.probes[1].alternatives = {"begin"};
    kept_.program.source = "/* C */ int x;";
    kept_.program.params_struct = "mt_params";
    kept_.program.naming_programs = {"mt_name_exec"};
    kept_.program.built_expressions[{"t.lua", 3}] = "pid > 7";
    GeneratedProbe p;
    p.program = p.attached_program = "mt_probe_0";
    p.record = "mt_record_0";
    p.probe_name = "tracepoint:syscalls:sys_enter_getppid";
    kept_.program.probes.push_back(p);
    kept_.user.push_back({1, {ProbeKind::Begin, "", "", "", 0}});
    kept_.notes = {"t.lua:1: used tracepoint"};
  }
  void write(const std::string &name, const std::string &text) {
    std::ofstream(dir_.file(name), std::ios::trunc) << text;
  }
  FrontEndCache cache() const { return FrontEndCache(dir_.file("cache"), true, files_); }
  ScratchDir dir_;
  IdentityFiles files_;
  Declaration decl_;
  FrontEndCache::Generated kept_;
};

TEST_F(FrontEndCacheTest, AGeneratedProgramComesBackWhole) {
  cache().store_generated(decl_, false, kept_);
  auto back = cache().generated(decl_, false);
  ASSERT_TRUE(back);
  EXPECT_EQ(FrontEndCache::encode(*back), FrontEndCache::encode(kept_));
  EXPECT_EQ(back->program.probes[0].name.kind, ProbeKind::Tracepoint);
  EXPECT_EQ(back->user[0].name.kind, ProbeKind::Begin);
  EXPECT_EQ(back->program.built_expressions.at({"t.lua", 3}), "pid > 7");
  EXPECT_FALSE(cache().generated(decl_, true));  // -p/-c generate other C
}

TEST_F(FrontEndCacheTest, AnotherDeclarationEngineOrKernelFindsNothing) {
  auto store = [&] {
    cache().store_generated(decl_, false, kept_);
    cache().store_answers({{"probe\nkprobe:x", {"0", "", "1", "a"}}});
  };
  store();
  Declaration other = decl_;
  other.probes[0].predicate.text = "pid == 1";
  EXPECT_FALSE(cache().generated(other, false));
  // Use counts change all the time; the modules loaded do not.
  write("modules", "ext4 1234 3 - Live 0x0\nloop 42 1 - Live 0x0\n");
  EXPECT_TRUE(cache().generated(decl_, false));
  EXPECT_EQ(cache().answers().size(), 1u);
  for (auto [file, text] : {std::pair{"engine", "engine build 22"},
                            {"btf", "kernel build 22"},
                            {"notes", "build id 22"},
                            {"modules", "ext4 1 0 - Live 0x0\nloop 42 0 - Live 0x0\nxfs 9 0\n"}}) {
    store();
    write(file, text);
    EXPECT_FALSE(cache().generated(decl_, false)) << file;
    EXPECT_TRUE(cache().answers().empty()) << file;
  }
}

TEST_F(FrontEndCacheTest, OffUnderNoCacheAndDamagedEntriesAreIgnored) {
  FrontEndCache off(dir_.file("cache"), false, files_);
  off.store_generated(decl_, false, kept_);
  EXPECT_FALSE(std::filesystem::exists(dir_.file("cache")));
  cache().store_generated(decl_, false, kept_);
  EXPECT_FALSE(off.generated(decl_, false));
  std::string bytes = FrontEndCache::encode(kept_);
  for (size_t cut : {size_t(0), size_t(1), bytes.size() / 2, bytes.size() - 1})
    EXPECT_THROW(FrontEndCache::decode(bytes.substr(0, cut)), Error) << cut;
  EXPECT_THROW(FrontEndCache::decode(bytes + "1:x"), Error);
  // Probes of a declaration that has fewer: not this declaration's.
  kept_.program.probes[0].decl_id = 5;
  cache().store_generated(decl_, false, kept_);
  EXPECT_FALSE(cache().generated(decl_, false));
}

TEST_F(FrontEndCacheTest, TheObjectExpectedIsKeptPerInvocationEngineAndKernel) {
  EXPECT_FALSE(cache().object_expected("ws.lua --extra 5"));
  cache().store_object_expected("ws.lua --extra 5", "0123abcd");
  cache().store_object_expected("ws.lua", "4567ef01");
  EXPECT_EQ(cache().object_expected("ws.lua --extra 5"), "0123abcd");
  EXPECT_EQ(cache().object_expected("ws.lua"), "4567ef01");
  cache().store_object_expected("ws.lua", "89abcdef");  // the script changed
  EXPECT_EQ(cache().object_expected("ws.lua"), "89abcdef");
  FrontEndCache off(dir_.file("cache"), false, files_);
  EXPECT_FALSE(off.object_expected("ws.lua"));
  // A key read back names a file: hex digits only.
  cache().store_object_expected("ws.lua", "../../etc/x");
  EXPECT_FALSE(cache().object_expected("ws.lua"));
  write("btf", "kernel build 22");
  EXPECT_FALSE(cache().object_expected("ws.lua"));
}

// The invocation names the object expected: each script, each argument
// apart, -p/-c alike and --unsafe count.
TEST(Invocation, EveryScriptArgumentAndSwitchCounts) {
  ScriptSource script{"ws.lua", "probe()", false, {}};
  auto of = [&](const Options &options, const std::vector<LuaScript::More> &more = {}) {
    return invocation_of(script, more, options);
  };
  Options plain, one, two, pid, command, unsafe;
  one.script_args = {"a b"};
  two.script_args = {"a", "b"};
  pid.pid = 7;
  command.command = "true";
  unsafe.unsafe = true;
  std::set<std::string> seen = {of(plain), of(one), of(two), of(pid), of(unsafe)};
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(of(pid), of(command));
  ScriptArgs args({});
  Options with_more = plain;
  with_more.more_scripts.push_back({"x.lua", {"--n", "1"}});
  std::string more = of(with_more, {{ScriptSource{"x.lua", "probe()", false, {}}, &args}});
  EXPECT_NE(more, of(plain));
  with_more.more_scripts[0].args = {"--n", "2"};
  EXPECT_NE(of(with_more, {{ScriptSource{"x.lua", "probe()", false, {}}, &args}}), more);
}

TEST_F(FrontEndCacheTest, AProbeOnAFileIsNeverKept) {
  decl_.probes[0].alternatives = {"uprobe:/bin/sh:main", "tracepoint:syscalls:sys_enter_getppid"};
  cache().store_generated(decl_, false, kept_);
  EXPECT_FALSE(cache().generated(decl_, false));
}

TEST(KernelAnswers, ReplayedAnswersAreUsedAndOnlyNewOnesAsked) {
  KernelAnswers answers;
  answers.replay({{"q1", {"yes"}}, {"q2", {"a", "b"}}});
  int asked = 0;
  auto ask = [&] {
    asked++;
    return KernelAnswers::Answer{"asked"};
  };
  auto one = [](const KernelAnswers::Answer &a) { return a.size() == 1; };
  EXPECT_EQ(answers.answer("q1", ask, one)[0], "yes");
  EXPECT_FALSE(answers.asked());
  EXPECT_EQ(answers.answer("q2", ask, one)[0], "asked");  // not of the shape asked for
  EXPECT_EQ(answers.answer("q3", ask, one)[0], "asked");
  EXPECT_EQ(asked, 2);
  EXPECT_TRUE(answers.asked());
  EXPECT_EQ(answers.all().at("q2"), KernelAnswers::Answer{"asked"});
  answers.answer("q4", ask, one, false);  // not the kernel's alone: not kept
  EXPECT_EQ(answers.all().count("q4"), 0u);
  EXPECT_NE(KernelAnswers::question("enum", {"a\nb", "c"}),
            KernelAnswers::question("enum", {"a", "b\nc"}));
}

// Every field of a declaration changes its fingerprint (a field added to a
// struct of declaration.h breaks the build of declaration_fingerprint.cpp
// until it is written there).
TEST(DeclarationFingerprint, EveryFieldCounts) {
  Declaration d;
  d.probes.resize(1);
  d.probes[0].captures.resize(1);
  d.probes[0].draws.resize(1);
  d.maps.resize(1);
  d.params.resize(1);
  d.latencies.resize(1);
  d.aggregations.resize(1);
  std::string base = declaration_fingerprint(d);
  auto differs = [&](auto change) {
    Declaration e = d;
    change(e);
    return declaration_fingerprint(e) != base;
  };
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].action.where.line = 9; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].guard.text = "args.id == 1"; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].captures[0].c_type = "u32"; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].captures[0].is_string = true; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].captures[0].string_size = 16; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].captures[0].stack = StackKind::User; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].captures[0].stack_depth = 5; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].draws[0].when = "w"; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].draws[0].value_names["op"] = {"nop"}; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.probes[0].has_handler = true; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.maps[0].value_fields = {{"a", "u64"}}; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.params[0].value.number = 5; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.latencies[0].stop_key.resize(1); }));
  EXPECT_TRUE(differs([](Declaration &e) { e.aggregations[0].lstep = 2; }));
  EXPECT_TRUE(differs([](Declaration &e) { e.trace_file = "x.fxt"; }));
  // Adjacent texts do not run together.
  Declaration ab = d, a_b = d;
  ab.probes[0].alternatives = {"ab", ""};
  a_b.probes[0].alternatives = {"a", "b"};
  EXPECT_NE(declaration_fingerprint(ab), declaration_fingerprint(a_b));
}

}  // namespace
}  // namespace mt
