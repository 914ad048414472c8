// Reading a tracefs format file: the event's own fields, and one clear
// error for a field that cannot be read.
#include "kernel/tracefs_format.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace mt {
namespace {

TEST(TracefsFormat, KeepsTheEventsOwnFields) {
  TraceFormat f = parse_trace_format(
      "name: io_uring_complete\nID: 7\nformat:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:void * ctx;\toffset:8;\tsize:8;\tsigned:0;\n"
      "\tfield:int res;\toffset:24;\tsize:4;\tsigned:1;\n");
  EXPECT_EQ(f.event, "io_uring_complete");
  ASSERT_EQ(f.fields.size(), 2u);
  ASSERT_TRUE(f.find("res"));
  EXPECT_EQ(f.find("res")->offset, 24);
  EXPECT_EQ(f.find("res")->size, 4);
  EXPECT_TRUE(f.find("res")->is_signed);
  EXPECT_FALSE(f.find("common_type"));
}

TEST(TracefsFormat, AFieldWithoutASizeIsAnError) {
  try {
    parse_trace_format("name: x\nformat:\n\tfield:int res;\toffset:24;\tsize:0;\tsigned:1;\n");
    ADD_FAILURE() << "a field without a size was taken";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "cannot parse tracepoint field: field:int res;\toffset:24;\tsize:0;\tsigned:1;");
  }
}

}  // namespace
}  // namespace mt
