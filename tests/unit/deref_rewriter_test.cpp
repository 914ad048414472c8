// Pointer reads in kprobe-like programs become __mt_rd/__mt_deref/__mt_idx.
// The objects are only compiled: loading them needs a kernel with the
// traced types.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "compile_in_child.h"
#include "compiler/clang_compiler.h"

namespace mt {
namespace {

constexpr const char *kPrelude = R"(#include "mt_runtime.h"
#include "mt_pt_regs.h"
struct rw_inner {
  int x;
  int *p;
};
struct rw_outer {
  struct rw_inner *in;
  struct rw_inner val;
  int arr[4];
  int *ptr;
  struct rw_inner items[2];
  struct rw_outer *next;
  unsigned bits : 3;
  union {
    long u;
    struct {
      int anon_y;
    };
  };
} __attribute__((preserve_access_index));
#define PASS(x) (x)
#define MT_PROBE_READ bpf_probe_read_kernel
)";

// A kprobe program `f` with `o` pointing into the kernel and `s` to sum into.
std::string kprobe(const std::string &body, const std::string &name = "f") {
  return std::string(kPrelude) + "SEC(\"kprobe/foo\") int " + name +
         "(struct mt_pt_regs *__ctx) {\n"
         "  struct rw_outer *o = (void *)__ctx->di;\n"
         "  long s = 0;\n" +
         body + "\n  return s;\n}\n";
}

std::string describe(const CompileResult &result) {
  std::string text = result.rewritten_source + "\n";
  for (const auto &d : result.diagnostics)
    text += d.message + "\n";
  return text;
}

CompileResult compile(const std::string &source, std::set<std::string> functions = {"f"}) {
  CompileOptions options;
  options.rewrite_functions = std::move(functions);
  CompileResult result = testing::compile_in_child(source, options);
  EXPECT_TRUE(result.ok) << describe(result);
  EXPECT_FALSE(result.object.empty());
  return result;
}

#define EXPECT_HAS(result, text) \
  EXPECT_NE((result).rewritten_source.find(text), std::string::npos) << describe(result)

TEST(DerefRewriter, NestsArrowChains) {
  auto result = compile(kprobe("  s += o->in->x;\n  s += o->next->next->val.x;"));
  EXPECT_HAS(result, "s += __mt_rd(__mt_ld(o, in, struct rw_outer), x);");
  EXPECT_HAS(result,
             "s += __mt_ld(__mt_ld(__mt_ld(o, next, struct rw_outer), next, struct rw_outer), "
             "val.x, struct rw_outer);");
  EXPECT_TRUE(result.diagnostics.empty()) << describe(result);
}

// Numbers in kernel structs, and pointers only followed on, load directly
// where the kernel has bpf_rdonly_cast: a kfunc call instead of a helper's.
TEST(DerefRewriter, LoadsKernelNumbersThroughACastWhereTheKernelCan) {
  std::string source = kprobe("  s += o->next->val.x + o->in->x + (long)o->ptr;");
  source.replace(source.find("#define MT_PROBE_READ"), 0, "#define MT_DIRECT_LOADS 1\n");
  auto plain = compile(source);
  auto direct = compile("#define MT_HAVE_RDONLY_CAST 1\n" + source);
  EXPECT_HAS(direct, "__mt_ld(__mt_ld(o, next, struct rw_outer), val.x, struct rw_outer)");
  EXPECT_HAS(direct, "__mt_rd(__mt_ld(o, in, struct rw_outer), x)");  // rw_inner: not the kernel's
  EXPECT_HAS(direct, "(long)__mt_rd(o, ptr)");  // a pointer that goes on as a number
  EXPECT_NE(direct.object, plain.object);
  EXPECT_NE(std::string(direct.object.begin(), direct.object.end()).find("bpf_rdonly_cast"),
            std::string::npos);
}

// The generator marks the kernel structs it lays out exactly
// (MT_KERNEL_RECORD) instead of CO-RE's preserve_access_index: loaded
// directly all the same, cast by the id it lists.
TEST(DerefRewriter, LoadsThroughStructsMarkedAsTheKernelsToo) {
  std::string source = kprobe("  s += ((struct rw_marked *)o->in)->z;");
  source.replace(source.find("#define PASS(x)"), 0,
                 "struct rw_marked { long z; } __attribute__((annotate(MT_KERNEL_RECORD)));\n"
                 "#undef MT_KERNEL_TYPE_ID\n"
                 "#define MT_KERNEL_TYPE_ID(T) _Generic((T *)0, struct rw_marked *: 7)\n");
  source.replace(source.find("#define MT_PROBE_READ"), 0, "#define MT_DIRECT_LOADS 1\n");
  auto direct = compile("#define MT_HAVE_RDONLY_CAST 1\n" + source);
  EXPECT_HAS(direct, "__mt_ld(((struct rw_marked *)__mt_rd(o, in)), z, struct rw_marked)");
}

TEST(DerefRewriter, KeepsDotPathInOneRead) {
  auto result =
      compile(kprobe("  s += o->val.x;\n  struct rw_inner whole = o->val;\n  s += whole.x;"));
  EXPECT_HAS(result, "s += __mt_ld(o, val.x, struct rw_outer);");
  EXPECT_HAS(result, "struct rw_inner whole = __mt_rd(o, val);");
  EXPECT_HAS(result, "s += whole.x;");
}

TEST(DerefRewriter, ReadsArrayMembersInPath) {
  auto result =
      compile(kprobe("  s += o->arr[3];\n  s += o->items[1].x;\n  s += o->arr[o->val.x];"));
  EXPECT_HAS(result, "s += __mt_ld(o, arr[3], struct rw_outer);");
  EXPECT_HAS(result, "s += __mt_ld(o, items[1].x, struct rw_outer);");
  EXPECT_HAS(result, "s += __mt_rd(o, arr[__mt_ld(o, val.x, struct rw_outer)]);");
}

TEST(DerefRewriter, IndexesPointers) {
  auto result = compile(kprobe("  s += o->ptr[2];\n  s += o->in->p[o->val.x];"));
  EXPECT_HAS(result, "s += __mt_idx(__mt_rd(o, ptr), 2);");
  EXPECT_HAS(result,
             "s += __mt_idx(__mt_rd(__mt_ld(o, in, struct rw_outer), p), "
             "__mt_ld(o, val.x, struct rw_outer));");
}

TEST(DerefRewriter, Dereferences) {
  auto result = compile(kprobe(
      "  s += *o->ptr;\n  struct rw_inner copy = *o->in;\n  s += copy.x + *(int *)__ctx->si;\n"
      "  s += *o->arr;"));
  EXPECT_HAS(result, "s += __mt_deref(__mt_rd(o, ptr));");
  EXPECT_HAS(result, "struct rw_inner copy = __mt_deref(__mt_rd(o, in));");
  EXPECT_HAS(result, "s += copy.x + __mt_deref((int *)__ctx->si);");
  EXPECT_HAS(result, "s += __mt_deref(o->arr);");
}

TEST(DerefRewriter, ReadsOtherLvaluesByAddress) {
  auto result = compile(kprobe("  s += (*o).val.x;\n  s += o->ptr[1] + o->in[1].x;"));
  EXPECT_HAS(result, "s += __mt_deref(&(*o).val.x);");
  EXPECT_HAS(result, "__mt_deref(&__mt_rd(o, in)[1].x);");
}

TEST(DerefRewriter, LeavesAddressComputations) {
  auto result =
      compile(kprobe("  s += (long)&o->val;\n  s += (long)&o->val.x;\n  s += (long)&o->in->x;\n"
                     "  char buf[16];\n  bpf_probe_read_kernel_str(buf, sizeof(buf), o->arr);\n"
                     "  s += (long)&o->ptr[1];"));
  EXPECT_HAS(result, "s += (long)&o->val;");
  EXPECT_HAS(result, "s += (long)&o->val.x;");
  EXPECT_HAS(result, "s += (long)&__mt_rd(o, in)->x;");
  EXPECT_HAS(result, "bpf_probe_read_kernel_str(buf, sizeof(buf), o->arr);");
  EXPECT_HAS(result, "s += (long)&__mt_rd(o, ptr)[1];");
}

TEST(DerefRewriter, LeavesUnevaluatedOperands) {
  auto result =
      compile(kprobe("  s += sizeof(o->in->x) + sizeof(*o->ptr) + __alignof__(o->in->x);\n"
                     "  typeof(o->in->x) t = 1;\n  __typeof__(*o->ptr) u = 2;\n  s += t + u;"));
  EXPECT_HAS(result, "s += sizeof(o->in->x) + sizeof(*o->ptr) + __alignof__(o->in->x);");
  EXPECT_HAS(result, "typeof(o->in->x) t = 1;");
  EXPECT_HAS(result, "__typeof__(*o->ptr) u = 2;");
}

TEST(DerefRewriter, LeavesWrittenLvalues) {
  // Only the pointers loaded on the way to a written lvalue are reads.
  auto result =
      compile(kprobe("  o->val.x = 1;\n  o->arr[1] += 2;\n  o->val.x++;\n  o->in->x = 3;"));
  EXPECT_HAS(result, "o->val.x = 1;");
  EXPECT_HAS(result, "o->arr[1] += 2;");
  EXPECT_HAS(result, "o->val.x++;");
  EXPECT_HAS(result, "__mt_rd(o, in)->x = 3;");
}

TEST(DerefRewriter, ReadsAnonymousMembers) {
  auto result = compile(kprobe("  s += o->u + o->anon_y;"));
  EXPECT_HAS(result, "s += __mt_ld(o, u, struct rw_outer) + __mt_ld(o, anon_y, struct rw_outer);");
}

TEST(DerefRewriter, LeavesMacroArgumentsAndBitFields) {
  auto result = compile(kprobe("  s += PASS(o->in->x);\n  s += o->bits;\n  s += PASS(o)->val.x;"));
  EXPECT_HAS(result, "s += PASS(o->in->x);");
  EXPECT_HAS(result, "s += o->bits;");
  EXPECT_HAS(result, "s += __mt_ld(PASS(o), val.x, struct rw_outer);");
}

TEST(DerefRewriter, LeavesContextRecordAndMapValues) {
  // Shaped like generated tracepoint code: `args` is the context itself.
  std::string source = std::string(kPrelude) + R"(struct mt_args_0 {
  __u64 __common;
  struct rw_outer *o;
  int n;
  int vals[4];
  int *ip;
};
struct mt_rec_0 {
  __u32 __probe;
  long a;
};
SEC("tracepoint/a/b")
int f(struct mt_args_0 *__ctx) {
  if (!mt_is_target())
    return 0;
#define args (*__ctx)
#line 3 "script.lua"
  if (!(args.n > 1 && args.vals[2] && *args.ip && args.o->in->x))
    return 0;
#line 30 "<moontrace>"
  __u64 __submit;
  struct mt_rec_0 *__r = mt_reserve(0, sizeof(*__r), &__submit);
  if (!__r)
    return 0;
  __r->__probe = 0;
  __r->a = (args.o->val.x + args.ip[args.n]);
  __r->a += __r->__probe;
  __u32 key = 0;
  __u64 *lost = bpf_map_lookup_elem(&mt_lost, &key);
  if (lost)
    __r->a += *lost;
  bpf_ringbuf_submit(__r, 0);
  return 0;
}
#undef args
)";
  auto result = compile(source);
  EXPECT_HAS(result,
             "if (!(args.n > 1 && args.vals[2] && __mt_deref(args.ip) && "
             "__mt_rd(__mt_ld(args.o, in, struct rw_outer), x)))");
  EXPECT_HAS(result, "struct mt_rec_0 *__r = mt_reserve(0, sizeof(*__r), &__submit);");
  EXPECT_HAS(result, "__r->__probe = 0;");
  EXPECT_HAS(result,
             "__r->a = (__mt_ld(args.o, val.x, struct rw_outer) + __mt_idx(args.ip, args.n));");
  EXPECT_HAS(result, "__r->a += __r->__probe;");
  EXPECT_HAS(result, "__r->a += *lost;");
}

TEST(DerefRewriter, LoadsMapValuesFromMapPtrDirectly) {
  // map_ptr() is a statement expression: its result is still a map value.
  auto result = compile(kprobe(
      "  __u32 key = 0;\n"
      "  __auto_type v = ({ __u32 __k = key; (__u64 *)bpf_map_lookup_elem(&mt_lost, &__k); });\n"
      "  if (v)\n    s += *v + o->val.x;"));
  EXPECT_HAS(result, "s += *v + __mt_ld(o, val.x, struct rw_outer);");
}

TEST(DerefRewriter, LoadsThroughPointersToMapValueTypesDirectly) {
  // A lookup kept through a statement expression and a conditional (as
  // uring.lua finds a ring's state) is still typed as the map's value; a
  // struct named otherwise, at the same address, is read.
  auto result = compile(std::string(kPrelude) + R"(struct mt_map_rings_val {
  __u32 head;
};
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct mt_map_rings_val);
} rings SEC(".maps");
SEC("kprobe/foo") int f(struct mt_pt_regs *__ctx) {
  long s = 0;
  __auto_type state = ({ __u32 __k = 0; __typeof__(rings.value) __f = NULL, __e;
                         if ((__e = bpf_map_lookup_elem(&rings, &__k)) && __e->head) __f = __e;
                         __f ? __f : NULL; });
  struct rw_inner *other = (struct rw_inner *)state;
  if (state)
    s += state->head + other->x;
  return s;
}
)");
  EXPECT_HAS(result, "s += state->head + __mt_rd(other, x);");
}

// A fentry-shaped program: its arguments are typed and load directly. A
// pointer loaded from a kernel struct goes through __mt_walk (untrusted)
// where it is only read through, made a number, compared or recorded; kept
// as loaded where it may need to stay trusted: a helper's argument, a
// local, an address taken; numbers and macro arguments stay as written.
TEST(DerefRewriter, WalksPointersOfTypedArgumentsUntrustedOnlyWhereReadThrough) {
  std::string source = std::string(kPrelude) + R"(struct mt_rec_0 {
  struct rw_outer *next;
};
SEC("fentry/foo") int f(__u64 *__ctx) {
  struct { struct rw_outer *o; } args = {(typeof(args.o))__ctx[0]};
  long s = args.o->in->x + args.o->val.x;
  s += (long)args.o->next->next + (args.o->next == 0);
  s += ((struct rw_outer *)(args.o->next))->val.x;
  struct rw_outer *kept = args.o->next;
  const struct rw_inner *at = &args.o->next->val;
  s += bpf_probe_read_kernel(&s, 8, args.o->next) + PASS(args.o->next)->val.x;
  struct mt_rec_0 *__r = (void *)at;
  __r->next = args.o->next;
  return s + (long)kept;
}
)";
  CompileOptions options;
  options.typed_read_functions = {"f"};
  for (bool cast : {false, true}) {
    CompileResult result = testing::compile_in_child(
        (cast ? "#define MT_HAVE_RDONLY_CAST 1\n" : "") + source, options);
    ASSERT_TRUE(result.ok) << describe(result);
    EXPECT_HAS(result, "long s = __mt_walk(args.o, in, struct rw_outer)->x + args.o->val.x;");
    EXPECT_HAS(result,
               "s += (long)__mt_walk(__mt_walk(args.o, next, struct rw_outer), next, "
               "struct rw_outer) + (__mt_walk(args.o, next, struct rw_outer) == 0);");
    EXPECT_HAS(result,
               "s += ((struct rw_outer *)(__mt_walk(args.o, next, struct rw_outer)))->val.x;");
    EXPECT_HAS(result, "struct rw_outer *kept = args.o->next;");
    EXPECT_HAS(result, "const struct rw_inner *at = &args.o->next->val;");
    EXPECT_HAS(result,
               "s += bpf_probe_read_kernel(&s, 8, args.o->next) + PASS(args.o->next)->val.x;");
    EXPECT_HAS(result, "__r->next = __mt_walk(args.o, next, struct rw_outer);");
    EXPECT_EQ(std::string(result.object.begin(), result.object.end()).find("bpf_rdonly_cast") !=
                  std::string::npos,
              cast);
  }
}

TEST(DerefRewriter, ReadsThroughKprobeArgumentStruct) {
  // Shaped like generated kprobe code: `args` is a local built from registers.
  auto result = compile(
      kprobe("  struct { struct rw_outer *file; __u64 raw; } args = {(typeof(args.file))__ctx->di, "
             "__ctx->si};\n"
             "  s += args.file->in->x + *(int *)args.raw;"));
  EXPECT_HAS(result, "(typeof(args.file))__ctx->di, __ctx->si};");
  EXPECT_HAS(result,
             "s += __mt_rd(__mt_ld(args.file, in, struct rw_outer), x) + "
             "__mt_deref((int *)args.raw);");
}

TEST(DerefRewriter, LeavesOtherFunctions) {
  std::string source = kprobe("  s += o->in->x + *o->ptr;", "g");
  auto result = compile(source);
  EXPECT_EQ(result.rewritten_source, source);
}

}  // namespace
}  // namespace mt
