// Packages: a team's script with a parameter and a module of theirs,
// packed here (moontrace pack), runs from its .mtpkg alone, where its
// directory is gone and where LLVM is not; pinned by --expect-digest; a
// package without the object a run needs, a damaged one, one others
// could change and one whose signature does not verify under --signers,
// are refused in one line. (The 6.1 VM runs one packed here
// with --btf for its kernel: vm_test.cpp.)
#include <sys/stat.h>

#include <filesystem>

#include "common/sha256.h"
#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2ePackage : public BpfTest {};

constexpr const char *kModule = R"(-- teamfmt: how team A words its counts
local fmt = {}
function fmt.completions(n, least) return string.format("%d completions of result >= %d", n, least) end
return fmt
)";

constexpr const char *kScript = R"(script{ name = "teamcount", version = "1.2.0",
         description = "io_uring completions of a result at least --least" }
local fmt = require "teamfmt"
local least = param("least", { type = "int", default = -4096, help = "smallest result counted" })
local seen = 0
probe("tracepoint:io_uring:io_uring_complete", { filter = "args.res >= param.least",
                                                 capture = { res = "args.res" } },
      function(ev) seen = seen + 1 end)
probe("end", function() print(fmt.completions(seen, least)) end)
)";

struct Packed {
  TempDir dir;
  std::string package, cache;
  Result pack;
};

// teamcount.lua and teamfmt.lua in a team directory, packed into
// team.mtpkg; the team directory is then removed.
void pack_team(Packed &p, std::vector<std::string> extra = {}) {
  std::string team = p.dir.path() / "team";
  std::filesystem::create_directory(team);
  p.dir.write("team/teamfmt.lua", kModule);
  std::string script = p.dir.write("team/teamcount.lua", kScript);
  p.package = p.dir.file("team.mtpkg");
  p.cache = p.dir.path() / "cache";
  mkdir(p.cache.c_str(), 0700);
  std::vector<std::string> args = {"pack", "-o", p.package};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(script);
  Command c = mt(args);
  c.env.push_back({"MOONTRACE_CACHE", p.cache});
  p.pack = run(c, 120s);
  std::filesystem::remove_all(team);
}

// moontrace ENGINE_OPTIONS -c true PACKAGE.
Result run_package(std::vector<std::string> engine_options, const std::string &package) {
  engine_options.insert(engine_options.end(), {"-c", "true", package});
  return run(mt(engine_options), 60s);
}

// uring_batches 4 4: 8 NOPs, each completing with result 0.
const std::string kBatches = workload("uring_batches") + " 4 4";

TEST_F(E2ePackage, ATeamsScriptRunsFromItsPackageWithItsModuleAndParameters) {
  Packed p;
  pack_team(p);
  ASSERT_EQ(p.pack.exit_code, 0) << p.pack;
  EXPECT_TRUE(contains(p.pack.out, "packed " + p.package + ": objects for 1 kernel")) << p.pack;
  EXPECT_TRUE(contains(p.pack.out, "1 module\nsha256 " + mt::sha256_hex(read_file(p.package))))
      << p.pack;
  auto all = run(mt({"-c", kBatches, p.package}), 60s);
  EXPECT_EQ(all.exit_code, 0) << all;
  EXPECT_TRUE(contains(all.out, "8 completions of result >= -4096")) << all;
  // A parameter the C reads at run time: the same object.
  auto none = run(mt({"-c", kBatches, p.package, "--least", "1"}), 60s);
  EXPECT_EQ(none.exit_code, 0) << none;
  EXPECT_TRUE(contains(none.out, "0 completions of result >= 1")) << none;
  // Its --help comes from the packaged script{}.
  auto help = run(mt({p.package, "--help"}));
  EXPECT_TRUE(contains(help.out, "io_uring completions of a result at least --least")) << help;
}

TEST_F(E2ePackage, APackageRunsWhereLlvmIsNot) {
  Packed p;
  pack_team(p);
  ASSERT_EQ(p.pack.exit_code, 0) << p.pack;
  TempDir empty;
  std::string cache = empty.path() / "cache";
  mkdir(cache.c_str(), 0700);
  auto r = without_llvm({"-c", kBatches, p.package}, cache);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "8 completions of result >= -4096")) << r;
  // uring packed with --rings 8 has no object for the default rings.
  Command c = mt({"pack", "-o", empty.file("u.mtpkg"), "uring", "--rings", "8"});
  c.env.push_back({"MOONTRACE_CACHE", cache});
  ASSERT_EQ(run(c, 120s).exit_code, 0);
  auto other =
      without_llvm({"-o", empty.file("u.fxt"), "-c", "true", empty.file("u.mtpkg")}, cache);
  EXPECT_TRUE(one_line_error(
      other, {empty.file("u.mtpkg") + " has no object for this kernel "
                                      "with these options (it was packed for Linux "}))
      << other;
  auto same = without_llvm(
      {"-o", empty.file("u.fxt"), "-c", "true", empty.file("u.mtpkg"), "--rings", "8"}, cache);
  EXPECT_EQ(same.exit_code, 0) << same;
}

TEST_F(E2ePackage, ExpectDigestPinsIt) {
  Packed p;
  pack_team(p);
  ASSERT_EQ(p.pack.exit_code, 0) << p.pack;
  std::string sum = mt::sha256_hex(read_file(p.package));
  auto pinned = run_package({"--expect-digest", sum}, p.package);
  EXPECT_EQ(pinned.exit_code, 0) << pinned;
  std::string other = std::string(64, '0');
  EXPECT_TRUE(one_line_error(run_package({"--expect-digest", other}, p.package),
                             {"refusing to run " + p.package + ": its sha256 is " + sum}));
  EXPECT_TRUE(one_line_error(run_package({"--expect-digest", "abc"}, p.package),
                             {"invalid digest 'abc' for --expect-digest"}));
  EXPECT_TRUE(one_line_error(run_package({"--expect-digest", sum}, "demo"),
                             {"--expect-digest pins a package"}));
}

// Signed with ssh-keygen -Y sign -n moontrace: runs under --signers when
// the signature is by an allowed signer and of these very bytes.
TEST_F(E2ePackage, SignersAllowItOnlyWhenItsSignatureVerifies) {
  Packed p;
  pack_team(p);
  ASSERT_EQ(p.pack.exit_code, 0) << p.pack;
  auto sh = [&](const std::string &command) {
    auto r = run({{"sh", "-c", command}, {}, false, p.dir.path().string()}, 60s);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r;
  };
  sh("ssh-keygen -q -t ed25519 -N '' -f a && ssh-keygen -q -t ed25519 -N '' -f b && "
     "echo \"team-a namespaces=\\\"moontrace\\\" $(cat a.pub)\" >signers && "
     "ssh-keygen -q -Y sign -f a -n moontrace team.mtpkg && cp team.mtpkg other.mtpkg && "
     "ssh-keygen -q -Y sign -f b -n moontrace other.mtpkg && cp team.mtpkg late.mtpkg && "
     "cp team.mtpkg.sig late.mtpkg.sig && echo >>late.mtpkg && cp team.mtpkg bare.mtpkg");
  std::string signers = p.dir.file("signers");
  auto signed_ok = run(mt({"--signers", signers, "-c", kBatches, p.package}), 60s);
  EXPECT_EQ(signed_ok.exit_code, 0) << signed_ok;
  EXPECT_TRUE(contains(signed_ok.out, "8 completions")) << signed_ok;
  std::string other = p.dir.file("other.mtpkg"), late = p.dir.file("late.mtpkg"),
              bare = p.dir.file("bare.mtpkg");
  EXPECT_TRUE(one_line_error(run_package({"--signers", signers}, other),
                             {"refusing to run " + other + ": " + other + ".sig is by no signer"}));
  EXPECT_TRUE(one_line_error(run_package({"--signers", signers}, late),
                             {"refusing to run " + late + ": its signature", "does not verify"}));
  EXPECT_TRUE(one_line_error(run_package({"--signers", signers}, bare),
                             {"refusing to run " + bare + ": --signers asks for its signature"}));
  EXPECT_TRUE(one_line_error(run_package({"--signers", signers}, "demo"),
                             {"--signers checks a package's signature"}));
}

TEST_F(E2ePackage, DamagedOrChangeableByOthersIsRefused) {
  Packed p;
  pack_team(p);
  ASSERT_EQ(p.pack.exit_code, 0) << p.pack;
  std::string bytes = read_file(p.package);
  std::string damaged = p.dir.file("damaged.mtpkg");
  std::string changed = bytes;
  changed[changed.size() / 2] ^= 1;
  p.dir.write("damaged.mtpkg", changed);
  EXPECT_TRUE(one_line_error(run_package({}, damaged),
                             {damaged + ": not a moontrace package, or a damaged one"}));
  p.dir.write("cut.mtpkg", bytes.substr(0, bytes.size() / 3));
  EXPECT_TRUE(one_line_error(run_package({}, p.dir.file("cut.mtpkg")),
                             {"not a moontrace package, or a damaged one"}));
  ASSERT_EQ(chmod(p.package.c_str(), 0666), 0);
  EXPECT_TRUE(
      one_line_error(run_package({}, p.package), {"refusing to load " + p.package, "writable by"}));
}

TEST_F(E2ePackage, BadPackUsesAreOneLine) {
  EXPECT_TRUE(one_line_error(run(mt({"pack"})), {"usage: moontrace [ENGINE OPTIONS] pack"}));
  EXPECT_TRUE(one_line_error(run(mt({"pack", "-x", "demo"})), {"pack [-o FILE.mtpkg]"}));
  EXPECT_TRUE(one_line_error(run(mt({"pack", "demo", "+", "uring"})), {"pack takes one script"}));
  EXPECT_TRUE(one_line_error(run(mt({"-c", "true", "pack", "demo"})), {"pack runs nothing"}));
  EXPECT_TRUE(one_line_error(run(mt({"pack", "-o", "demo.lua", "demo"})),
                             {"a package's name ends in .mtpkg"}));
  EXPECT_TRUE(one_line_error(run(mt({"pack", "x.mtpkg"})), {"pack takes a script, not a package"}));
  EXPECT_TRUE(
      one_line_error(run(mt({"x.mtpkg", "+", "demo"})), {"a package runs alone: '+' does not"}));
}

}  // namespace
}  // namespace e2e
