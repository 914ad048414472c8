// The probe-kind table: one row per kind, in the enum's order, and the
// names scripts write parse to the kind of their row.
#include "kernel/probe_kinds.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "kernel/probe_name.h"

namespace mt {
namespace {

TEST(ProbeKinds, EveryKindHasItsOwnRow) {
  ASSERT_EQ(probe_kinds().size(), static_cast<size_t>(ProbeKind::End) + 1);
  for (size_t i = 0; i < probe_kinds().size(); i++)
    EXPECT_EQ(static_cast<size_t>(probe_kinds()[i].kind), i) << probe_kinds()[i].name;
}

// A name of each kind's form, after "KIND".
std::string target_of_form(TargetForm form) {
  switch (form) {
    case TargetForm::None: return "";
    case TargetForm::CategoryEvent: return ":sched:sched_switch";
    case TargetForm::Name: return ":vfs_read";
    case TargetForm::PathSymbol: return ":/bin/true:main";
    case TargetForm::PathProbe: return ":/bin/true:provider:name";
    case TargetForm::Period: return ":ms:10";
  }
  return "";
}

TEST(ProbeKinds, NamesAndAliasesParseToTheirKindAndPrintBack) {
  for (const ProbeKindInfo &k : probe_kinds()) {
    std::string text = k.name + target_of_form(k.target);
    ProbeName parsed = parse_probe_name(text);
    EXPECT_EQ(parsed.kind, k.kind) << text;
    EXPECT_EQ(parsed.to_string(), text);
    EXPECT_EQ(parsed.in_kernel(), k.runs == RunsAt::Kernel);
    for (const char *alias : k.alias)
      if (alias)
        EXPECT_EQ(parse_probe_name(alias + target_of_form(k.target)).kind, k.kind) << alias;
  }
  EXPECT_EQ(parse_probe_name("BEGIN").kind, ProbeKind::Begin);
}

// The traits of a row must fit together, so that each stage can follow
// them without asking which kind it has.
TEST(ProbeKinds, EachRowsTraitsFitTogether) {
  for (const ProbeKindInfo &k : probe_kinds()) {
    SCOPED_TRACE(k.name);
    bool in_kernel = k.runs == RunsAt::Kernel;
    EXPECT_EQ(in_kernel, *k.section != '\0');
    EXPECT_EQ(in_kernel, k.source != TargetSource::None);
    EXPECT_EQ(in_kernel, k.context != ProgramContext::None);
    EXPECT_EQ(k.target == TargetForm::None || k.target == TargetForm::Period, !in_kernel);
    // What the target names is where it is found.
    EXPECT_EQ(k.target == TargetForm::CategoryEvent, k.source == TargetSource::TracefsEvents);
    EXPECT_EQ(k.target == TargetForm::PathSymbol, k.source == TargetSource::Binary);
    EXPECT_EQ(k.target == TargetForm::PathProbe, k.source == TargetSource::UsdtNotes);
    EXPECT_EQ(k.user_memory,
              k.source == TargetSource::Binary || k.source == TargetSource::UsdtNotes);
    // A tracefs record is the context of tracefs events only; fexit's
    // return value follows the arguments of an argument array.
    EXPECT_EQ(k.context == ProgramContext::TracepointRecord,
              k.source == TargetSource::TracefsEvents);
    if (k.retval == ReturnValue::AfterArguments)
      EXPECT_EQ(k.context, ProgramContext::ArgumentArray);
    if (k.btf_typed)
      EXPECT_EQ(k.context, ProgramContext::ArgumentArray);
    // Only events are shared between probes; only what exists is listed.
    if (k.shares_event)
      EXPECT_TRUE(k.source == TargetSource::TracefsEvents ||
                  k.source == TargetSource::BtfRawTracepoints);
    if (k.listed != ListedFrom::Nothing)
      EXPECT_TRUE(in_kernel);
  }
}

TEST(ProbeKinds, AnUnknownKindListsEveryKind) {
  std::string error;
  try {
    parse_probe_name("nope:x");
  } catch (const Error &e) {
    error = e.what();
  }
  EXPECT_NE(error.find("(expected tracepoint, tp_btf, rawtracepoint, kprobe, kretprobe, fentry, "
                       "fexit, uprobe, uretprobe, usdt, interval, begin or end)"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace mt
