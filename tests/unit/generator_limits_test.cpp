// What the generator refuses and how it keeps keys and errors exact: the
// probes one tracepoint's program holds, names in keys, and where
// generated lines come from.
#include <gtest/gtest.h>

#include "codegen/c_generator.h"
#include "codegen/source_locator.h"
#include "common/error.h"
#include "stage_fixtures.h"

namespace mt {
namespace {

Declaration probes_on_complete(size_t n) {
  Declaration d = testing::complete_declaration("1", "args.res");
  for (size_t i = 1; i < n; i++) {
    d.probes.push_back(d.probes[0]);
    d.probes[i].id = static_cast<int>(i);
    d.probes[i].where.line = static_cast<int>(3 + i);
  }
  return d;
}

TEST(GeneratorLimits, AtMost64ProbesOnOneTracepoint) {
  testing::FakeKernel kernel;
  EXPECT_NO_THROW(testing::generate_on(probes_on_complete(kMaxProbesPerTracepoint), kernel));
  try {
    testing::generate_on(probes_on_complete(kMaxProbesPerTracepoint + 10), kernel);
    FAIL() << "65 probes shared one program";
  } catch (const Error &e) {
    EXPECT_EQ(e.where.line, static_cast<int>(3 + kMaxProbesPerTracepoint));  // the 65th
    EXPECT_EQ(std::string(e.what()).rfind("tracepoint:io_uring:io_uring_complete has 74 probes; "
                                          "at most 64 fit",
                                          0),
              0u)
        << e.what();
  }
}

// A kernel whose sched_switch has a char array, as the real one has.
class KernelWithNames : public testing::FakeKernel {
 public:
  std::optional<TraceFormat> tracepoint(const std::string &category,
                                        const std::string &event) override {
    if (event != "sched_switch")
      return FakeKernel::tracepoint(category, event);
    std::optional<TraceFormat> f =
        parse_trace_format("name: sched_switch\nID: 1\nformat:\n" MT_COMMON_FIELDS
                           "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n");
    f->category = category;
    return f;
  }
};

// Tracepoints copy whole arrays: a renamed task's name carries the tail of
// its old one after the NUL. In a key only the name counts.
TEST(GeneratorLimits, NamesInKeysStopAtTheirNul) {
  Declaration d;
  d.script_path = "test.lua";
  AggregationDecl a;
  a.name = "by_name";
  a.keys.push_back({"prev_comm", {"args.prev_comm", {"test.lua", 1, 0}}});
  d.aggregations.push_back(a);
  ProbeDecl p;
  p.alternatives = {"tracepoint:sched:sched_switch"};
  p.where = {"test.lua", 2, 0};
  p.aggregations = {0};
  p.captures.push_back({"prev_comm", {"args.prev_comm", {"test.lua", 2, 0}}});
  p.has_handler = true;
  d.probes.push_back(p);
  KernelWithNames kernel;
  GeneratedProgram g = testing::generate_on(d, kernel);
  EXPECT_NE(g.source.find("bpf_probe_read_kernel_str(__k.prev_comm, sizeof(__k.prev_comm), "
                          "args.prev_comm);"),
            std::string::npos)
      << g.source;
  // A record keeps the plain copy: its decoder stops at the NUL.
  EXPECT_NE(g.source.find("__builtin_memcpy(__r->prev_comm, args.prev_comm"), std::string::npos);
}

TEST(GeneratorLimits, GeneratedLinesNameTheirDeclaration) {
  Declaration d = probes_on_complete(2);
  d.probes[1].predicate = {"pid > 5 && x", {"test.lua", 4, 0}};  // built at run time
  testing::FakeKernel kernel;
  GeneratedProgram g = testing::generate_on(d, kernel);
  ASSERT_EQ(g.built_expressions.count({"test.lua", 4}), 1u);
  EXPECT_EQ(g.built_expressions.at({"test.lua", 4}), "pid > 5 && x");
  // The line of the second probe's own function belongs to it.
  size_t at = g.source.find("static __always_inline int mt_probe_1(");
  ASSERT_NE(at, std::string::npos);
  // Its generated line number, counting as the #line directives do.
  int line = 0;
  std::string file;
  for (size_t pos = 0; pos <= at;) {
    size_t end = g.source.find('\n', pos);
    std::string text = g.source.substr(pos, end - pos);
    if (text.rfind("#line ", 0) == 0) {
      line = std::stoi(text.substr(6)) - 1;  // the number of the next line
      file = text.substr(text.find('"') + 1);
      file.pop_back();
    } else {
      line++;
    }
    pos = end + 1;
    if (pos > at)
      break;
  }
  ASSERT_EQ(file, kGeneratedFileName);
  EXPECT_GT(line, kGeneratedBodyFirstLine);
  auto decl = declaration_at_generated_line(g.source, kGeneratedFileName, line);
  ASSERT_TRUE(decl);
  EXPECT_EQ(decl->file, "test.lua");
  EXPECT_EQ(decl->line, 4);
  EXPECT_FALSE(declaration_at_generated_line(g.source, kGeneratedFileName, 3));
}

}  // namespace
}  // namespace mt
