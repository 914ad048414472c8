// A package's bytes: what goes in comes back out, sha256 is sha256sum's,
// and damage of any kind is refused with the package's path.
#include "common/package_file.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/sha256.h"

namespace mt {
namespace {

Package sample() {
  Package p;
  p.script_name = "team.lua";
  p.script = "local f = require 'teamfmt'\nprobe('begin', function() end)\n";
  p.modules["teamfmt"] = "return {}\n";
  p.modules["team.util"] = "return { x = 1 }\n";
  p.objects["0123abcd"] = std::string(
      "\x7f"
      "ELF\0\n\nbinary",
      14);
  p.kernels = {"Linux 6.18 (packed there)", "the kernel of /btf/6.1"};
  return p;
}

TEST(PackageFile, WhatGoesInComesOut) {
  Package p = sample();
  Package back = decode_package(encode_package(p), "t.mtpkg");
  EXPECT_EQ(back.script_name, p.script_name);
  EXPECT_EQ(back.script, p.script);
  EXPECT_EQ(back.modules, p.modules);
  EXPECT_EQ(back.objects, p.objects);
  EXPECT_EQ(back.kernels, p.kernels);
}

TEST(PackageFile, Sha256IsSha256sums) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

std::string error_of(const std::string &bytes) {
  try {
    decode_package(bytes, "t.mtpkg");
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(PackageFile, EveryDamageIsRefused) {
  std::string good = encode_package(sample());
  // Every cut, and a flipped bit anywhere, is an error naming the file.
  for (size_t cut = 0; cut < good.size(); cut++)
    EXPECT_EQ(error_of(good.substr(0, cut)).rfind("t.mtpkg: not a moontrace package", 0), 0u)
        << "cut at " << cut;
  for (size_t at = 0; at < good.size(); at++) {
    std::string bad = good;
    bad[at] ^= 0x04;
    std::string error = error_of(bad);
    // A flip inside a name may still make a whole package, of other names.
    if (error.empty())
      continue;
    EXPECT_EQ(error.rfind("t.mtpkg: not a moontrace package", 0), 0u) << error;
  }
  EXPECT_NE(error_of(good + "x"), "");
  EXPECT_NE(error_of("moontrace package 1\nend\n"), "");  // no script
  EXPECT_NE(error_of("moontrace package 1\nscript a 99999999999999999999 x\n"), "");
  EXPECT_NE(error_of("moontrace package 1\nthing a 1 x\na\nend\n"), "");
}

}  // namespace
}  // namespace mt
