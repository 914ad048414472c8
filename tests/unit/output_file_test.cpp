// Output files: written under a temporary name and put in place by
// commit(), never through another user's link, 0600; write errors kept
// with how many records reached the file.
#include "output/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "output/output.h"
#include "tests/unit/scratch_dir.h"
#include "trace/fxt_sink.h"
#include "trace/fxt_writer.h"

namespace mt {
namespace {

class OutputFileTest : public ChownTest {
 protected:
  static std::string error_of(const std::string &path,
                              OutputFile::Origin origin = OutputFile::Origin::CommandLine,
                              bool unsafe = false) {
    try {
      OutputFile::open(path, origin, unsafe, {"x.lua", 3});
      return "";
    } catch (const Error &e) {
      return e.located();
    }
  }
  static void write_text(const OutputFile &f, const std::string &text) {
    ASSERT_EQ(::write(f.fd(), text.data(), text.size()), (ssize_t)text.size());
  }
  size_t entries() const {
    auto it = std::filesystem::directory_iterator(dir_.path());
    return std::distance(it, std::filesystem::directory_iterator());
  }
  ScratchDir dir_;
};

TEST_F(OutputFileTest, AnExistingFileIsReplacedOnlyOnCommit) {
  std::string path = dir_.write("uring.fxt", "earlier");
  {
    OutputFile f = OutputFile::open(path);
    write_text(f, "new");
    EXPECT_EQ(read_text(path), "earlier");
    EXPECT_EQ(entries(), 2u);  // the temporary file beside it
    f.commit();
    EXPECT_EQ(read_text(path), "new");
  }
  EXPECT_EQ(mode_of(path), 0600u);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, WithoutCommitTheTemporaryFileIsRemovedAndTheTargetKept) {
  std::string path = dir_.write("uring.fxt", "earlier");
  {
    OutputFile f = OutputFile::open(path);
    write_text(f, "partial");
  }
  EXPECT_EQ(read_text(path), "earlier");
  EXPECT_EQ(entries(), 1u);
  { OutputFile f = OutputFile::open(dir_.file("new.fxt")); }
  EXPECT_FALSE(std::filesystem::exists(dir_.file("new.fxt")));
}

TEST_F(OutputFileTest, NamesOfNoFileAreRefusedBeforeAnythingIsMade) {
  EXPECT_EQ(error_of(""), "cannot write '': No such file or directory");
  EXPECT_EQ(error_of(dir_.path() + "/"), "cannot write " + dir_.path() + "/: Is a directory");
  EXPECT_EQ(error_of(dir_.path() + "/.."), "cannot write " + dir_.path() + "/..: Is a directory");
  EXPECT_EQ(error_of("", OutputFile::Origin::Script, true),
            "x.lua:3: cannot write '': No such file or directory");
  EXPECT_EQ(entries(), 0u);
}

TEST_F(OutputFileTest, FilesAre0600WhateverTheUmask) {
  mode_t old = umask(0);
  OutputFile f = OutputFile::open(dir_.file("t.fxt"));
  f.commit();
  umask(old);
  EXPECT_EQ(mode_of(dir_.file("t.fxt")), 0600u);
}

TEST_F(OutputFileTest, UnderSudoAFileInTheInvokingUsersDirectoryIsTheirs) {
  std::string theirs = dir_.mkdir("theirs");
  ASSERT_EQ(chown(theirs.c_str(), kOtherUser, kOtherUser), 0);
  setenv("SUDO_UID", "65534", 1);
  setenv("SUDO_GID", "65534", 1);
  OutputFile a = OutputFile::open(theirs + "/t.fxt");
  a.commit();
  OutputFile b = OutputFile::open(dir_.file("mine.fxt"));
  b.commit();
  unsetenv("SUDO_UID");
  unsetenv("SUDO_GID");
  struct stat st;
  ASSERT_EQ(stat((theirs + "/t.fxt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kOtherUser);
  ASSERT_EQ(stat(dir_.file("mine.fxt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

TEST_F(OutputFileTest, ALinkOfAnotherUserIsNotFollowed) {
  std::string link = dir_.file("out.fxt");
  ASSERT_EQ(symlink(dir_.file("victim").c_str(), link.c_str()), 0);
  ASSERT_EQ(lchown(link.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_EQ(error_of(link), "refusing to write " + link + ": " + link +
                                " is a symbolic link made by another user (owner nobody uid "
                                "65534, mode 0777); remove it or give another name");
  EXPECT_FALSE(std::filesystem::exists(dir_.file("victim")));
}

TEST_F(OutputFileTest, ALinkInADirectoryOthersCanWriteIsNotFollowed) {
  std::string open = dir_.mkdir("open", 0777);
  std::string link = open + "/out.fxt";
  ASSERT_EQ(symlink(dir_.file("victim").c_str(), link.c_str()), 0);
  EXPECT_EQ(error_of(link), "refusing to write " + link + ": " + link +
                                " is a symbolic link, and " + open +
                                " is writable by other users (owner root uid 0, mode 0777); "
                                "remove the link or name the file it points to");
}

TEST_F(OutputFileTest, ATrustedLinkIsFollowedAndTheFileItNamesReplaced) {
  std::string target = dir_.write("real.fxt", "earlier");
  std::string link = dir_.file("out.fxt");
  ASSERT_EQ(symlink("real.fxt", link.c_str()), 0);
  OutputFile f = OutputFile::open(link);
  write_text(f, "new");
  f.commit();
  EXPECT_EQ(read_text(target), "new");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
}

// The links on the way to the file are checked as the last: another
// user's link to a directory of root's, even reached through a trusted
// link, is not followed; a trusted one is.
TEST_F(OutputFileTest, ALinkOfAnotherUserOnTheWayIsNotFollowed) {
  std::string secret = dir_.mkdir("secret", 0700);
  std::string evil = dir_.file("evil");
  ASSERT_EQ(symlink(secret.c_str(), evil.c_str()), 0);
  ASSERT_EQ(lchown(evil.c_str(), kOtherUser, kOtherUser), 0);
  std::string refusal = ": " + evil +
                        " is a symbolic link made by another user (owner nobody uid 65534, mode "
                        "0777); remove it or give another name";
  EXPECT_EQ(error_of(evil + "/victim.fxt"), "refusing to write " + evil + "/victim.fxt" + refusal);
  std::string trusted = dir_.file("out.fxt");
  ASSERT_EQ(symlink("evil/victim.fxt", trusted.c_str()), 0);
  EXPECT_EQ(error_of(trusted), "refusing to write " + trusted + refusal);
  EXPECT_FALSE(std::filesystem::exists(secret + "/victim.fxt"));
  ASSERT_EQ(symlink("secret", dir_.file("via").c_str()), 0);
  OutputFile f = OutputFile::open(dir_.file("via") + "/./out.fxt");
  write_text(f, "new");
  f.commit();
  EXPECT_EQ(read_text(secret + "/out.fxt"), "new");
}

TEST_F(OutputFileTest, DevicesAreWrittenDirectlyNeverReplaced) {
  OutputFile f = OutputFile::open("/dev/null");
  write_text(f, "gone");
  f.commit();
  struct stat st;
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_NO_THROW(OutputFile::open("/dev/stdout"));
}

TEST_F(OutputFileTest, AFifoOfAnotherUserIsRefusedWithoutWaitingForAReader) {
  std::string fifo = dir_.file("t.fxt");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  ASSERT_EQ(chown(fifo.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_NE(error_of(fifo).find("belongs to another user"), std::string::npos);
}

TEST_F(OutputFileTest, AScriptNamesOnlyAPlainFileInTheWorkingDirectory) {
  for (std::string name : {"/etc/x", "../x.fxt", "a/b.fxt", ".", ".."})
    EXPECT_EQ(error_of(name, OutputFile::Origin::Script),
              "x.lua:3: fxt{file = \"" + name +
                  "\"}: a script may only name a file in the working directory; give -o FILE or "
                  "run with --unsafe");
  // With --unsafe a path, but never through a link, even one of root's.
  std::string real = dir_.mkdir("real");
  ASSERT_EQ(symlink(real.c_str(), dir_.file("ln").c_str()), 0);
  EXPECT_EQ(error_of(dir_.file("ln/t.fxt"), OutputFile::Origin::Script, true),
            "x.lua:3: refusing to write " + dir_.file("ln/t.fxt") + ": " + dir_.file("ln") +
                " is reached through a symbolic link; name the trace with -o");
  ASSERT_EQ(symlink("real", dir_.file("t.fxt").c_str()), 0);
  EXPECT_EQ(error_of(dir_.file("t.fxt"), OutputFile::Origin::Script, true),
            "x.lua:3: refusing to write " + dir_.file("t.fxt") + ": " + dir_.file("t.fxt") +
                " is a symbolic link (owner root uid 0, mode 0777); remove it, or name the trace "
                "with -o");
  EXPECT_EQ(error_of(dir_.file("u.fxt"), OutputFile::Origin::Script, true), "");
}

TEST_F(OutputFileTest, OutputCountsTheRecordsThatReachedAFullDevice) {
  Output out;
  out.open("/dev/full");
  out.write("one\n");
  out.write("two\n");
  EXPECT_FALSE(out.flush());
  out.write("three\n");
  EXPECT_TRUE(out.failed());
  EXPECT_EQ(out.failure(),
            "cannot write /dev/full: No space left on device (0 of 3 records reached it)");
}

TEST_F(OutputFileTest, OutputWritesThroughToAFile) {
  std::string path = dir_.file("out.txt");
  {
    Output out;
    out.open(path);
    out.write("one\n");
    EXPECT_TRUE(out.flush());
  }
  EXPECT_EQ(read_text(path), "one\n");
}

TEST_F(OutputFileTest, ATraceOnAFullDeviceFailsWithTheRecordsThatReachedIt) {
  FxtSink sink("/dev/full");
  sink.close();
  EXPECT_EQ(sink.error(), ENOSPC);
  EXPECT_EQ(sink.failure(),
            "cannot write /dev/full: No space left on device (0 of 2 records reached it)");
}

}  // namespace
}  // namespace mt

namespace mt {
namespace {

TEST(FxtWriterProgress, RecordsWithinABytePrefixAreTheWholeOnes) {
  std::FILE *f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  std::setvbuf(f, nullptr, _IONBF, 0);
  {
    FxtWriter w(f);
    for (int i = 0; i < 20000; i++)
      w.instant(1, 2, i, "cat", "name");
    w.flush();
    EXPECT_EQ(w.error(), 0);
    EXPECT_EQ(w.records_written(), w.records());
    EXPECT_EQ(w.records_within(w.bytes()), w.records());
    EXPECT_LT(w.records_within(w.bytes() - 1), w.records());
    EXPECT_GT(w.records_within(w.bytes() - 1), 0u);
    EXPECT_EQ(w.records_within(0), 0u);
  }
  std::fclose(f);
}

}  // namespace
}  // namespace mt
