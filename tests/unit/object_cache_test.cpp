// The object cache: objects come back only as stored, from a directory and
// files nobody but the effective user can change.
#include "compiler/object_cache.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <string>

#include "common/error.h"
#include "tests/unit/scratch_dir.h"

namespace mt {
namespace {

const std::vector<char> kObject = {0x7f, 'E', 'L', 'F', 1, 2, 3, 0, 4};
const std::string kKey = "0123456789abcdef0123456789abcdef";

class ObjectCacheTest : public ChownTest {
 protected:
  std::string error_of(const ObjectCache &cache) {
    try {
      cache.load(kKey);
      return "";
    } catch (const Error &e) {
      return e.what();
    }
  }
  ScratchDir dir_;
};

TEST_F(ObjectCacheTest, StoresInA0700DirectoryAnd0600ObjectsWhateverTheUmask) {
  std::string cache_dir = dir_.file("a/cache");
  ObjectCache cache(cache_dir);
  EXPECT_EQ(cache.load(kKey), std::nullopt);  // nothing yet, and nothing made
  EXPECT_FALSE(std::filesystem::exists(cache_dir));
  mode_t old = umask(0);
  cache.store(kKey, kObject);
  umask(old);
  EXPECT_EQ(mode_of(cache_dir), 0700u);
  EXPECT_EQ(mode_of(cache_dir + "/" + kKey + ".o"), 0600u);
  EXPECT_EQ(cache.load(kKey), kObject);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(cache_dir),
                          std::filesystem::directory_iterator()),
            1);  // no temporary file left
}

TEST_F(ObjectCacheTest, ADamagedOrAnotherKeysObjectIsNotLoaded) {
  ObjectCache cache(dir_.file("cache"));
  cache.store(kKey, kObject);
  std::string path = dir_.file("cache/" + kKey + ".o");
  std::string bytes = read_text(path);
  bytes.back() ^= 1;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_EQ(cache.load(kKey), std::nullopt);
  std::string other = "ffffffffffffffffffffffffffffffff";
  cache.store(other, kObject);
  std::filesystem::rename(dir_.file("cache/" + other + ".o"), path);
  EXPECT_EQ(cache.load(kKey), std::nullopt);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << std::string(kObject.begin(), kObject.end());  // an old, bare ELF
  EXPECT_EQ(cache.load(kKey), std::nullopt);
  cache.store(kKey, kObject);  // compiled again: replaced
  EXPECT_EQ(cache.load(kKey), kObject);
}

// The same C compiles to another object when other programs' pointer reads
// are rewritten, or rewritten another way: never the other's object.
TEST_F(ObjectCacheTest, KeyTellsHowPointerReadsAreRewritten) {
  CompileOptions none, probe_reads, typed_reads;
  probe_reads.rewrite_functions = {"mt_probe_0"};
  typed_reads.typed_read_functions = {"mt_probe_0"};
  std::set<std::string> keys = {ObjectCache::key_for("int x;", none),
                                ObjectCache::key_for("int x;", probe_reads),
                                ObjectCache::key_for("int x;", typed_reads)};
  EXPECT_EQ(keys.size(), 3u);
  EXPECT_EQ(ObjectCache::key_for("int x;", probe_reads),
            ObjectCache::key_for("int x;", probe_reads));
}

// Another build of the compiler library may compile the same C otherwise
// (its rewriter): never its object. A package's object was compiled when it
// was packed, so its key does not change.
TEST_F(ObjectCacheTest, KeyTellsTheCompilerLibrarysBuild) {
  std::string digest = ObjectCache::compiler_sources_digest(), other(64, '0');
  EXPECT_EQ(digest.size(), 64u);
  EXPECT_EQ(ObjectCache::key_for("int x;", {}, digest), ObjectCache::key_for("int x;"));
  EXPECT_NE(ObjectCache::key_for("int x;", {}, digest), ObjectCache::key_for("int x;", {}, other));
}

TEST_F(ObjectCacheTest, EncodingCarriesKeyAndDigest) {
  std::string bytes = ObjectCache::encode(kKey, kObject);
  EXPECT_EQ(ObjectCache::decode(kKey, bytes), kObject);
  EXPECT_EQ(ObjectCache::decode(kKey, bytes.substr(0, bytes.size() - 1)), std::nullopt);
  EXPECT_EQ(ObjectCache::decode("other", bytes), std::nullopt);
  EXPECT_EQ(ObjectCache::decode(kKey, ""), std::nullopt);
}

TEST_F(ObjectCacheTest, RefusesAnObjectOfAnotherUserOrWritableByOthers) {
  ObjectCache cache(dir_.file("cache"));
  cache.store(kKey, kObject);
  std::string path = dir_.file("cache/" + kKey + ".o");
  ASSERT_EQ(chown(path.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_EQ(error_of(cache), "refusing to load the cached object " + path + ": " + path +
                                 " belongs to another user (owner nobody uid 65534, mode 0600); "
                                 "remove it (it is compiled again)");
  ASSERT_EQ(chown(path.c_str(), 0, 0), 0);
  chmod(path.c_str(), 0666);
  EXPECT_NE(error_of(cache).find("is writable by other users (owner root uid 0, mode 0666)"),
            std::string::npos);
  unlink(path.c_str());
  ASSERT_EQ(symlink("/etc/passwd", path.c_str()), 0);
  EXPECT_NE(error_of(cache).find(path + " is a symbolic link"), std::string::npos);
}

TEST_F(ObjectCacheTest, RefusesADirectoryOthersCanWriteOrAnotherUsers) {
  std::string d = dir_.mkdir("cache", 0777);
  ObjectCache cache(d);
  EXPECT_EQ(error_of(cache), "refusing to use the object cache " + d + ": " + d +
                                 " is writable by other users (owner root uid 0, mode 0777); "
                                 "chmod 700 " +
                                 d);
  cache.store(kKey, kObject);  // quietly not stored
  EXPECT_FALSE(std::filesystem::exists(d + "/" + kKey + ".o"));
  chmod(d.c_str(), 01777);  // sticky: others could still plant objects
  EXPECT_NE(error_of(cache), "");
  chmod(d.c_str(), 0700);
  ASSERT_EQ(chown(d.c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_EQ(error_of(cache), "refusing to use the object cache " + d + ": " + d +
                                 " belongs to another user (owner nobody uid 65534, mode 0700); "
                                 "set MOONTRACE_CACHE to a directory of your own or run with "
                                 "--no-cache");
}

TEST_F(ObjectCacheTest, RefusesACacheBelowADirectoryOthersCanWrite) {
  std::string open = dir_.mkdir("open", 0777);
  ObjectCache cache(dir_.mkdir("open/cache", 0700));
  EXPECT_EQ(error_of(cache),
            "refusing to use the object cache " + open + "/cache: " + open +
                " is writable by other users (owner root uid 0, mode 0777); chmod go-w " + open +
                " or move the cache (MOONTRACE_CACHE)");
  // Not made yet, it is refused all the same: a first run must not store
  // where the next one refuses to load.
  ObjectCache later(open + "/later/cache");
  EXPECT_EQ(error_of(later),
            "refusing to use the object cache " + open + "/later/cache: " + open +
                " is writable by other users (owner root uid 0, mode 0777); chmod go-w " + open +
                " or move the cache (MOONTRACE_CACHE)");
  // Nor is anything made there by a store, through a link another user
  // could have put there.
  std::string elsewhere = dir_.mkdir("elsewhere", 0700);
  ASSERT_EQ(symlink(elsewhere.c_str(), (open + "/link").c_str()), 0);
  ObjectCache linked(open + "/link/planted/cache");
  linked.store(kKey, kObject);
  EXPECT_FALSE(std::filesystem::exists(elsewhere + "/planted"));
  later.store(kKey, kObject);
  EXPECT_FALSE(std::filesystem::exists(open + "/later"));
}

TEST_F(ObjectCacheTest, DefaultDirectoryIsInTheEffectiveUsersHomeNotHome) {
  auto saved = [](const char *name) {
    const char *v = getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto cache = saved("MOONTRACE_CACHE"), xdg = saved("XDG_CACHE_HOME"), home = saved("HOME");
  unsetenv("MOONTRACE_CACHE");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/someone-else", 1);  // as sudo may keep it
  struct passwd *pw = getpwuid(geteuid());
  ASSERT_NE(pw, nullptr);
  EXPECT_EQ(ObjectCache::default_directory(), std::string(pw->pw_dir) + "/.cache/moontrace");
  setenv("XDG_CACHE_HOME", "/x", 1);
  EXPECT_EQ(ObjectCache::default_directory(), "/x/moontrace");
  setenv("MOONTRACE_CACHE", "/y", 1);
  EXPECT_EQ(ObjectCache::default_directory(), "/y");
  auto restore = [](const char *name, const std::optional<std::string> &v) {
    if (v)
      setenv(name, v->c_str(), 1);
    else
      unsetenv(name);
  };
  restore("MOONTRACE_CACHE", cache);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

}  // namespace
}  // namespace mt
