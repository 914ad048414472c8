// trusted_path: a file is loaded only if nobody but root and its trusted
// owners can change it or any directory above it.
#include "common/trusted_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "tests/unit/scratch_dir.h"

namespace mt {
namespace {

class TrustedPath : public ChownTest {
 protected:
  // The refusal when loading `path` as a script, or "" when it loads.
  std::string refusal(const std::string &path) {
    try {
      UniqueFd fd = open_trusted_file(path, script_owners());
      EXPECT_TRUE(fd);
      return "";
    } catch (const Error &e) {
      return e.what();
    }
  }
  ScratchDir dir_;
};

TEST_F(TrustedPath, LoadsAFileOfRootInDirectoriesOfRoot) {
  std::string file = dir_.write("m.lua", "return 1\n");
  EXPECT_EQ(refusal(file), "");
  UniqueFd fd = open_trusted_file(file, script_owners());
  EXPECT_EQ(read_whole_file(fd.get(), file), "return 1\n");
}

TEST_F(TrustedPath, RefusesADirectoryOthersCanWriteNamingItsOwnerModeAndFix) {
  std::string d = dir_.mkdir("m", 0777);
  std::string file = dir_.write("m/fmt.lua", "");
  EXPECT_EQ(refusal(file), "refusing to load " + file + ": " + d +
                               " is writable by other users (owner root uid 0, mode 0777); "
                               "chmod go-w " +
                               d + " or move the file");
  chmod(d.c_str(), 0775);
  EXPECT_NE(refusal(file).find("is writable by other users (owner root uid 0, mode 0775)"),
            std::string::npos);
}

TEST_F(TrustedPath, AcceptsAStickyDirectoryLikeTmp) {
  dir_.mkdir("t", 01777);
  EXPECT_EQ(refusal(dir_.write("t/a.lua", "")), "");
}

TEST_F(TrustedPath, RefusesADirectoryOfAnotherUser) {
  std::string d = dir_.mkdir("theirs");
  std::string file = dir_.write("theirs/a.lua", "");
  ASSERT_EQ(chown(d.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_EQ(refusal(file), "refusing to load " + file + ": " + d +
                               " belongs to another user (owner nobody uid 65534, mode 0755); "
                               "chown root " +
                               d + " or move the file");
}

TEST_F(TrustedPath, RefusesAFileOfAnotherUserOrWritableByOthers) {
  std::string file = dir_.write("a.lua", "");
  ASSERT_EQ(chown(file.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_EQ(refusal(file), "refusing to load " + file + ": " + file +
                               " belongs to another user (owner nobody uid 65534, mode 0644); "
                               "chown root " +
                               file + " or use a copy of your own");
  ASSERT_EQ(chown(file.c_str(), 0, 0), 0);
  chmod(file.c_str(), 0666);
  EXPECT_EQ(refusal(file), "refusing to load " + file + ": " + file +
                               " is writable by other users (owner root uid 0, mode 0666); "
                               "chmod go-w " +
                               file);
}

TEST_F(TrustedPath, RefusesAFifoWithoutWaitingForAWriter) {
  std::string fifo = dir_.file("f.lua");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(refusal(fifo).find(fifo + " is not a regular file"), std::string::npos);
  EXPECT_NE(refusal(dir_.path()).find(" is a directory"), std::string::npos);
}

TEST_F(TrustedPath, ChecksWhereALinkLeadsNotTheLink) {
  dir_.mkdir("open", 0777);
  std::string target = dir_.write("open/a.lua", "");
  std::string link = dir_.file("a.lua");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  EXPECT_NE(refusal(link).find(dir_.file("open") + " is writable by other users"),
            std::string::npos);
}

// A link is walked as written: the directory that holds it must be
// trustworthy, and so must its owner, wherever it leads.
TEST_F(TrustedPath, ALinkIsFollowedOnlyOutOfATrustedDirectoryAndFromATrustedOwner) {
  std::string target = dir_.write("a.lua", "");
  std::string open = dir_.mkdir("open", 0777);
  std::string planted = open + "/a.lua";
  ASSERT_EQ(symlink(target.c_str(), planted.c_str()), 0);
  EXPECT_EQ(refusal(planted), "refusing to load " + planted + ": " + open +
                                  " is writable by other users (owner root uid 0, mode 0777); "
                                  "chmod go-w " +
                                  open + " or move the file");
  // In a sticky directory (/tmp), only a link of a trusted owner.
  std::string sticky = dir_.mkdir("sticky", 01777);
  std::string theirs = sticky + "/theirs.lua", ours = sticky + "/ours.lua";
  ASSERT_EQ(symlink(target.c_str(), theirs.c_str()), 0);
  ASSERT_EQ(lchown(theirs.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_NE(refusal(theirs).find(theirs + " is a symbolic link of another user (owner nobody"),
            std::string::npos)
      << refusal(theirs);
  ASSERT_EQ(symlink(target.c_str(), ours.c_str()), 0);
  EXPECT_EQ(refusal(ours), "");
  // A link to a directory on the way, relative, and .. after it.
  dir_.mkdir("real");
  dir_.write("real/m.lua", "");
  ASSERT_EQ(symlink("real", dir_.file("via").c_str()), 0);
  EXPECT_EQ(refusal(dir_.file("via/../real/m.lua")), "");
  EXPECT_EQ(refusal(dir_.file("via/m.lua")), "");
}

TEST_F(TrustedPath, TrustsTheSudoUsersFilesWhenRootRunsUnderSudo) {
  std::string file = dir_.write("a.lua", "");
  ASSERT_EQ(chown(file.c_str(), kOtherUser, kOtherUser), 0);
  setenv("SUDO_UID", "65534", 1);
  setenv("SUDO_GID", "65534", 1);
  EXPECT_EQ(refusal(file), "");
  ASSERT_TRUE(sudo_user());
  EXPECT_EQ(sudo_user()->first, kOtherUser);
  unsetenv("SUDO_UID");
  unsetenv("SUDO_GID");
  EXPECT_NE(refusal(file), "");
}

TEST_F(TrustedPath, AMissingFileCannotBeRead) {
  EXPECT_THROW(open_trusted_file(dir_.file("none.lua"), script_owners()), Error);
}

}  // namespace
}  // namespace mt
