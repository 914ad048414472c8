// kstack and ustack from the script's word to the printed frames: parsing,
// generated C and its object's layout, kernel symbols, ELF facts, and the
// shapes stacks print in (bpftrace's rows, folded lines).
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>

#include "bpf_headers/mt_abi.h"
#include "common/error.h"
#include "common/unique_fd.h"
#include "compile_in_child.h"
#include "kernel/elf_file_facts.h"
#include "kernel/kernel_symbols.h"
#include "output/aggregation_format.h"
#include "run/record_decoder.h"
#include "stage_fixtures.h"

namespace mt {

namespace {

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

FieldValue stack(const std::string &text) {
  FieldValue v;
  v.kind = FieldKind::Stack;
  v.s = text;
  return v;
}

FieldValue name(const std::string &text) {
  FieldValue v;
  v.kind = FieldKind::String;
  v.s = text;
  return v;
}

AggregationRow counted(uint64_t count, std::vector<FieldValue> key) {
  AggregationRow r;
  r.key = std::move(key);
  r.count = count;
  return r;
}

}  // namespace

TEST(Stacks, CapturesNameTheKindAndDepth) {
  testing::LoadedScript l(R"lua(
    local c = count{ name = "c", by = { "kstack(5)", "comm" } }
    probe("tracepoint:io_uring:io_uring_complete", { aggregate = c, capture = { "ustack", u = "ustack(3)" } })
  )lua");
  l.script.declare();
  const Declaration &d = l.script.declaration();
  const Capture &k = d.aggregations[0].keys[0];
  EXPECT_EQ(k.name, "kstack");
  EXPECT_EQ(k.stack, StackKind::Kernel);
  EXPECT_EQ(k.stack_depth, 5);
  const auto &captures = d.probes[0].captures;
  ASSERT_EQ(captures.size(), 2u);
  EXPECT_EQ(captures[0].name, "ustack");
  EXPECT_EQ(captures[0].stack, StackKind::User);
  EXPECT_EQ(captures[0].stack_depth, MT_STACK_DEFAULT_DEPTH);
  EXPECT_EQ(captures[1].name, "u");
  EXPECT_EQ(captures[1].stack_depth, 3);
}

TEST(Stacks, ADepthOutOfRangeIsAnErrorAtItsLine) {
  for (const char *depth : {"0", "128", "x"}) {
    testing::LoadedScript l(std::string("\nprobe(\"tracepoint:io_uring:io_uring_complete\", "
                                        "{ capture = { \"kstack(") +
                            depth + ")\" } })\n");
    try {
      l.script.declare();
      ADD_FAILURE() << depth;
    } catch (const Error &e) {
      EXPECT_TRUE(has(e.what(), "t.lua:2:")) << e.what();
      EXPECT_TRUE(has(e.what(), "depth must be 1..127")) << e.what();
    }
  }
}

TEST(Stacks, EachKindAndDepthHasAMapAndTypedValuesTheDecoderKnows) {
  Declaration d = testing::complete_declaration("1", "args.res");
  Capture k{"k", {"kstack(5)", {"test.lua", 5, 0}}};
  k.stack = StackKind::Kernel;
  k.stack_depth = 5;
  Capture u{"u", {"ustack", {"test.lua", 5, 0}}};
  u.stack = StackKind::User;
  u.stack_depth = 7;
  d.probes[0].captures = {k, u};
  testing::FakeKernel kernel;
  GeneratedProgram generated = testing::generate_on(d, kernel);
  const std::string &c = generated.source;
  EXPECT_TRUE(has(c, "typedef __s64 mt_stack_k5_t;")) << c;
  EXPECT_TRUE(has(c, "typedef __u64 mt_stack_u7_t;")) << c;
  // Kernel stacks keep frames for the BPF ones the engine leaves out.
  EXPECT_TRUE(
      has(c, "__uint(value_size, " + std::to_string((5 + MT_STACK_KERNEL_EXTRA_FRAMES) * 8) + ");"))
      << c;
  EXPECT_TRUE(has(c, "__uint(value_size, " + std::to_string(7 * MT_STACK_BUILD_ID_FRAME_BYTES) +
                         ");\n  __uint(map_flags, BPF_F_STACK_BUILD_ID);"))
      << c;
  EXPECT_TRUE(has(c, "= bpf_get_stackid(__ctx, &mt_stack_k5, 0);")) << c;
  EXPECT_TRUE(has(c, "BPF_F_USER_STACK")) << c;
  // A process whose announcement (its name, for the stack's symbols) was
  // lost is announced with its next stack; its loss counts once.
  EXPECT_TRUE(has(c,
                  "  if (!r) {\n    bpf_map_update_elem(&mt_stack_processes, &pid, &again, "
                  "BPF_ANY);\n    return;\n  }\n"))
      << c;
  EXPECT_TRUE(has(c, "  if (state)\n    count_loss_as = MT_UNCOUNTED;\n")) << c;

  CompileResult result = testing::compile_in_child(c, {});
  ASSERT_TRUE(result.ok);
  LIBBPF_OPTS(bpf_object_open_opts, opts);
  struct bpf_object *obj = bpf_object__open_mem(result.object.data(), result.object.size(), &opts);
  ASSERT_TRUE(obj);
  auto layout = layout_from_btf(bpf_object__btf(obj), generated.probes[0].record);
  bpf_object__close(obj);
  ASSERT_TRUE(layout);
  ASSERT_EQ(layout->fields.size(), 2u);
  EXPECT_EQ(layout->fields[0].kind, FieldKind::Stack);
  EXPECT_EQ(layout->fields[0].stack_map, "mt_stack_k5");
  EXPECT_EQ(layout->fields[1].kind, FieldKind::Stack);
  EXPECT_EQ(layout->fields[1].stack_map, "mt_stack_u7");
}

TEST(Stacks, DecodedStacksShowWhatTheRunInstalls) {
  RecordLayout layout;
  layout.size = 8;
  RecordField f{"kstack", 0, 8, FieldKind::Stack};
  f.stack_map = "mt_stack_k3";
  layout.fields.push_back(f);
  uint64_t value = 42;
  EXPECT_EQ(format_record(layout, &value, 8), "kstack=\n        [stack 42]\n");
  set_stack_text([](const std::string &map, uint64_t v) {
    return "\n        " + map + "+" + std::to_string(v) + "\n";
  });
  EXPECT_EQ(format_record(layout, &value, 8), "kstack=\n        mt_stack_k3+42\n");
  EXPECT_EQ(record_json(layout, &value, 8), R"({"kstack":"\n        mt_stack_k3+42\n"})");
  set_stack_text(nullptr);
  EXPECT_EQ(stack_frames("\n        a+1\n        b\n"), (std::vector<std::string>{"a+1", "b"}));
}

TEST(Stacks, KernelSymbolsNameTheFunctionHoldingAnAddress) {
  KernelSymbols symbols = KernelSymbols::parse(
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 t helper\n"
      "ffffffff81000200 D some_data\n"
      "ffffffffc0000000 t mod_func\t[mymod]\n"
      "0000000000000000 T hidden\n");
  EXPECT_EQ(symbols.size(), 3u);  // functions only; hidden addresses left out
  EXPECT_EQ(symbols.frame(0xffffffff81000105), "helper+5");
  EXPECT_EQ(symbols.frame(0xffffffff81000200), "helper+256");  // data is not a function
  EXPECT_EQ(symbols.frame(0xffffffffc0000010), "mod_func+16");
  EXPECT_EQ(symbols.frame(0x1000), "0x1000");
}

TEST(Stacks, ElfFactsGiveTheBuildIdAndAddressesOfFileOffsets) {
  UniqueFd fd(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
  auto facts = read_elf_file_facts(fd.get());
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->build_id.size(), 40u);  // GNU's default: SHA-1
  ASSERT_FALSE(facts->loads.empty());
  const auto &first = facts->loads[0];
  EXPECT_EQ(facts->address_of(first.offset + 16), first.address + 16);
  EXPECT_FALSE(facts->address_of(~0ull));
  UniqueFd not_elf(open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC));
  EXPECT_FALSE(read_elf_file_facts(not_elf.get()));
}

TEST(Stacks, RowsKeyedByAStackPrintAsBpftracePrintsThem) {
  AggregationDecl d;
  d.name = "opens";
  d.kind = AggKind::Count;
  d.keys = {{"kstack", {"kstack", {}}}, {"comm", {"comm", {}}}};
  AggregationSnapshot snap;
  snap.decl = &d;
  snap.rows.push_back(counted(7, {stack("\n        leaf+1\n        root+2\n"), name("cat")}));
  snap.rows.push_back(counted(2, {stack("\n        other+3\n        root+2\n"), name("dd")}));
  EXPECT_EQ(aggregation_text(snap),
            "@opens:\n"
            "@opens[\n        other+3\n        root+2\n, dd]: 2\n"
            "@opens[\n        leaf+1\n        root+2\n, cat]: 7\n");
  // Folded: root first, offsets and ';' left out, for flame graphs.
  EXPECT_EQ(aggregation_folded(snap), "dd;root;other 2\ncat;root;leaf 7\n");
  // Only frames lose their offsets; nothing breaks a line or a frame.
  snap.rows = {counted(1, {stack("\n        a;b+1\n"), name("x+1\nfake 9")})};
  EXPECT_EQ(aggregation_folded(snap), "x+1 fake 9;a:b 1\n");
}

}  // namespace mt
