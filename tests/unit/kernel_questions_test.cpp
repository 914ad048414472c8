// What a script may ask of the kernel while it declares itself (available,
// disk), and the BTF of loaded modules: the resolver finds a module's
// functions and the generator takes their types from the module's BTF.
#include <bpf/btf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>

#include "codegen/c_generator.h"
#include "common/error.h"
#include "kernel/kernel_btf.h"
#include "kernel/probe_resolver.h"
#include "stage_fixtures.h"

namespace mt {

namespace {

using Loaded = testing::LoadedScript;

// A kernel whose BTF has vfs_x(struct inode *inode) (an inode has i_ino,
// and i_private in an anonymous union) and whose module "extfs" has
// extfs_open(struct inode *inode, int flags) and struct extfs_sb; kprobes
// work, fentry does not, and one disk is there.
class ModuleKernel : public testing::FakeKernel {
 public:
  ModuleKernel() {
    struct btf *base = btf__new_empty();
    int ulong = btf__add_int(base, "unsigned long", 8, 0);
    int sint = btf__add_int(base, "int", 4, BTF_INT_SIGNED);
    int anonymous = btf__add_union(base, nullptr, 8);
    btf__add_field(base, "i_private", ulong, 0, 0);
    int inode = btf__add_struct(base, "inode", 16);
    btf__add_field(base, "i_ino", ulong, 0, 0);
    btf__add_field(base, nullptr, anonymous, 64, 0);
    int inode_ptr = btf__add_ptr(base, inode);
    int proto = btf__add_func_proto(base, sint);
    btf__add_func_param(base, "inode", inode_ptr);
    btf__add_func(base, "vfs_x", BTF_FUNC_GLOBAL, proto);
    btf__add_enum(base, "io_uring_op", 4);
    btf__add_enum_value(base, "IORING_OP_NOP", 0);
    btf__add_enum_value(base, "IORING_OP_READ", 22);
    vmlinux_ = std::make_unique<KernelBtf>(base);

    struct btf *split = btf__new_empty_split(base);
    int mproto = btf__add_func_proto(split, sint);
    btf__add_func_param(split, "inode", inode_ptr);
    btf__add_func_param(split, "flags", sint);
    btf__add_func(split, "extfs_open", BTF_FUNC_STATIC, mproto);
    btf__add_struct(split, "extfs_sb", 8);
    btf__add_field(split, "s_magic", ulong, 0, 0);
    btf__add_enum(split, "extfs_state", 4);
    btf__add_enum_value(split, "EXTFS_MOUNTED", 3);
    auto module = std::make_unique<KernelBtf>(split, "extfs");
    module_ = module.get();
    vmlinux_->add_module(std::move(module));

    struct btf *other = btf__new_empty_split(base);
    btf__add_func(other, "otherfs_open", BTF_FUNC_STATIC, proto);
    vmlinux_->add_module(std::make_unique<KernelBtf>(other, "otherfs"));
  }
  const KernelBtf *btf() override { return vmlinux_.get(); }
  bool has_kprobes() override { return true; }
  std::string block_device(const std::string &name) override {
    return name == "vdz" ? "254:16" : "";
  }

  std::unique_ptr<KernelBtf> vmlinux_;
  const KernelBtf *module_ = nullptr;
};

// A loaded script that asks `kernel`.
struct Asking : Loaded {
  Asking(const std::string &text, KernelFacts &kernel) : Loaded(text) {
    script.set_kernel_facts(&kernel);
  }
};

Declaration one_probe(const std::vector<std::string> &alternatives) {
  Declaration d;
  d.script_path = "m.lua";
  ProbeDecl p;
  p.alternatives = alternatives;
  p.where = {"m.lua", 1, 0};
  p.captures.push_back({"ino", {"args.inode->i_ino", {"m.lua", 1, 0}}});
  d.probes.push_back(p);
  return d;
}

}  // namespace

TEST(KernelQuestions, FirstAvailableSkipsWhatTheKernelLacks) {
  ModuleKernel kernel;
  std::vector<std::string> reasons;
  auto chosen = first_available({"fentry:vfs_x", "tracepoint:no:such", "kprobe:vfs_x"}, kernel,
                                true, reasons);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->index, 2u);
  EXPECT_EQ(chosen->name.kind, ProbeKind::Kprobe);
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[0], "fentry:vfs_x: refused");
  EXPECT_EQ(reasons[1], "tracepoint:no:such: no such tracepoint");
}

TEST(KernelQuestions, OnlyTheLastAlternativesKindIsLeftToTheKernelUnlessAsked) {
  ModuleKernel kernel;
  std::vector<std::string> reasons;
  EXPECT_TRUE(first_available({"fentry:vfs_x"}, kernel, false, reasons));
  EXPECT_FALSE(first_available({"fentry:vfs_x"}, kernel, true, reasons));
  EXPECT_THROW(first_available({"nonsense"}, kernel, true, reasons), Error);
}

TEST(KernelQuestions, AvailableGivesTheFirstAlternativeOrNilAndWhy) {
  ModuleKernel kernel;
  Asking l(R"(local a = available({ "fentry:vfs_x", "kprobe:vfs_x" })
assert(a == "kprobe:vfs_x", tostring(a))
assert(available("tracepoint:io_uring:io_uring_complete") == "tracepoint:io_uring:io_uring_complete")
local none, why = available({ "fentry:vfs_x", "kprobe:nothing" })
assert(none == nil)
assert(why == "fentry:vfs_x: refused; kprobe:nothing: no such function in the BTF of the kernel and its loaded modules", why)
)",
           kernel);
  l.script.declare();
  ASSERT_EQ(l.script.notes().size(), 3u);
  EXPECT_EQ(l.script.notes()[0],
            "t.lua:1: available: kprobe:vfs_x (skipped fentry:vfs_x: refused)");
  EXPECT_EQ(l.script.notes()[2].rfind("t.lua:4: available: none (skipped fentry:vfs_x", 0), 0u);
}

// arguments() names what args.NAME gives in the first alternative the
// kernel has, so a script can word its expressions for the kernel's version.
TEST(KernelQuestions, ArgumentsNameTheFirstAvailableAlternativesArguments) {
  ModuleKernel kernel;
  Asking l(R"(local a = arguments({ "fentry:vfs_x", "kprobe:extfs_open" })
assert(#a == 2 and a[1] == "inode" and a[2] == "flags", table.concat(a, ","))
local t = arguments("tracepoint:io_uring:io_uring_complete")
assert(t[1] == "ctx" and t[4] == "res" and #t == 8, table.concat(t, ","))
local none, why = arguments({ "kprobe:nothing" })
assert(none == nil and why:find("kprobe:nothing: no such function", 1, true), why)
)",
           kernel);
  EXPECT_NO_THROW(l.script.declare());
}

// has_field() tells a script which version of a kernel structure it has,
// members of anonymous unions and modules' structures included.
TEST(KernelQuestions, HasFieldLooksInsideAnonymousMembersAndModules) {
  ModuleKernel kernel;
  Asking l(R"(assert(has_field("struct inode", "i_ino") == true)
assert(has_field("struct inode", "i_private") == true)
assert(has_field("struct inode", "i_size") == false)
assert(has_field("union inode", "i_ino") == false)
assert(has_field("struct extfs_sb", "s_magic") == true)
assert(has_field("struct no_such", "x") == false)
)",
           kernel);
  EXPECT_NO_THROW(l.script.declare());
  ASSERT_EQ(l.script.notes().size(), 6u);
  EXPECT_EQ(l.script.notes()[0], "t.lua:1: has_field: struct inode i_ino: yes");
  Asking bad("\nhas_field('inode', 'i_ino')\n", kernel);
  try {
    bad.script.declare();
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(
        std::string(e.what()),
        "t.lua:2: bad argument #1 to 'has_field' (expected \"struct NAME\" or \"union NAME\")");
  }
}

// enum_value() gives a kernel's enumerator, vmlinux's or a module's, and
// nil where the kernel's BTF has none.
TEST(KernelQuestions, EnumValueReadsTheKernelsEnumsAndModules) {
  ModuleKernel kernel;
  Asking l(R"(assert(enum_value("io_uring_op", "IORING_OP_READ") == 22)
assert(enum_value("io_uring_op", "IORING_OP_NOP") == 0)
assert(enum_value("extfs_state", "EXTFS_MOUNTED") == 3)
assert(enum_value("io_uring_op", "IORING_OP_NONE") == nil)
assert(enum_value("no_such", "X") == nil)
)",
           kernel);
  EXPECT_NO_THROW(l.script.declare());
}

TEST(KernelQuestions, AvailableRefusesMalformedNamesAtTheScriptLine) {
  ModuleKernel kernel;
  Asking l("\navailable('kprobe')\n", kernel);
  try {
    l.script.declare();
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.lua:2: ", 0), 0u) << e.what();
  }
}

TEST(KernelQuestions, DiskGivesTheDeviceNumbers) {
  ModuleKernel kernel;
  Asking l(R"(local d = disk("/dev/vdz")
assert(d.name == "vdz" and d.major == 254 and d.minor == 16, d.name)
assert(d.dev == (254 << 20 | 16))
local none, why = disk("sdq")
assert(none == nil and why == "no such disk 'sdq'", why)
)",
           kernel);
  EXPECT_NO_THROW(l.script.declare());
}

TEST(KernelQuestions, NoticeStrftimeAndNcpus) {
  ModuleKernel kernel;
  Asking l(
      "notice('%s layer cannot be traced', 'vfs')\nassert(strftime():match('^%d%d:%d%d:%d%d$'))\n"
      "assert(strftime('%Y'):match('^%d%d%d%d$'))\n"
      "assert(ncpus() == " +
          std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + ")\n",
      kernel);
  l.script.declare();
  EXPECT_EQ(l.script.notices(), std::vector<std::string>{"t.lua: vfs layer cannot be traced"});
}

TEST(KernelQuestions, FindsFunctionsInModulesBtf) {
  ModuleKernel kernel;
  EXPECT_EQ(kernel.btf()->with_function("vfs_x"), kernel.btf());
  EXPECT_EQ(kernel.btf()->with_function("extfs_open"), kernel.module_);
  EXPECT_EQ(kernel.btf()->with_function("nothing"), nullptr);
  EXPECT_EQ(kernel.module_->module(), "extfs");
  EXPECT_EQ(kernel.module_->function_names(), std::vector<std::string>{"extfs_open"});
}

TEST(KernelQuestions, ProbesOnAModuleFunctionTakeTheModulesTypes) {
  ModuleKernel kernel;
  Declaration d = one_probe({"kprobe:extfs_open"});
  Resolution r = resolve_probes(d, kernel);
  ASSERT_EQ(r.probes.size(), 1u);
  EXPECT_EQ(r.probes[0].btf, kernel.module_);
  EXPECT_EQ(r.types, kernel.module_);
  ASSERT_EQ(r.probes[0].signature.params.size(), 2u);
  EXPECT_EQ(r.probes[0].signature.params[1].name, "flags");
  GeneratorInput in;
  in.decl = &d;
  in.resolution = &r;
  in.btf = r.types;
  GeneratedProgram p = generate_c(in);
  EXPECT_NE(p.source.find("struct inode *inode;"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("__u64 i_ino;"), std::string::npos) << p.source;

  // vmlinux's own functions keep vmlinux's BTF.
  Declaration v = one_probe({"kprobe:vfs_x"});
  EXPECT_EQ(resolve_probes(v, kernel).types, nullptr);
}

TEST(KernelQuestions, ProbesInTwoModulesAreRefused) {
  ModuleKernel kernel;
  Declaration d = one_probe({"kprobe:extfs_open"});
  d.probes.push_back(one_probe({"kprobe:otherfs_open"}).probes[0]);
  d.probes[1].id = 1;
  d.probes[1].where.line = 2;
  try {
    resolve_probes(d, kernel);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.located(),
              "m.lua:2: probes on functions of two modules (extfs, otherfs) in one script are not "
              "supported");
  }
}

}  // namespace mt
