// USDT notes read from a binary of ours (usdt_probes, built with sys/sdt.h),
// and argument types from sys/sdt.h's argument strings.
#include "kernel/usdt_notes.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace mt {
namespace {

TEST(UsdtNotes, ArgumentTypesComeFromSizeAndSign) {
  UsdtNote note;
  note.arguments = "-4@%edi 8@-16(%rbp) -1@$5 2@%ax 8";
  EXPECT_EQ(note.argument_types(),
            (std::vector<std::string>{"__s32", "__u64", "__s8", "__u16", "__u64"}));
  note.arguments = "";
  EXPECT_TRUE(note.argument_types().empty());
}

TEST(UsdtNotes, AreReadFromABinary) {
  auto notes = usdt_notes(MT_TESTS_BINARY_DIR "/usdt_probes");
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0].provider, "moontrace");
  EXPECT_EQ(notes[0].name, "tick");
  EXPECT_EQ(notes[0].argument_types(), (std::vector<std::string>{"__s64", "__s32"}));
  EXPECT_NE(notes[0].address, 0u);
  EXPECT_NE(notes[0].semaphore, 0u);
  EXPECT_EQ(notes[2].name, "guarded");
}

TEST(UsdtNotes, WhatIsNoElfFileIsAnError) {
  EXPECT_THROW(usdt_notes("/proc/self/cmdline"), Error);
  EXPECT_THROW(usdt_notes("/nonexistent"), Error);
  EXPECT_TRUE(usdt_notes("/proc/self/exe").empty());
}

}  // namespace
}  // namespace mt
