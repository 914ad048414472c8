// Gzipped trace files: what goes through open_gzip_file() comes back whole
// from gunzip_if_gzipped(), whatever the size of the writes.
#include "runtime/gzip_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/error.h"

namespace mt {
namespace {

std::string read_bytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string temp_path(const std::string &name) {
  return ::testing::TempDir() + "/gzip_" + std::to_string(getpid()) + "_" + name;
}

// Bytes shaped like a trace: repeating records with a counter in them.
std::string trace_like(size_t size) {
  std::string s;
  for (uint64_t i = 0; s.size() < size; i++)
    s += "record " + std::to_string(i) + " io_uring submit user_data=" + std::to_string(i % 97) +
         "\n";
  s.resize(size);
  return s;
}

TEST(GzipFile, PathsEndingInGzAreGzipped) {
  EXPECT_TRUE(is_gzip_path("uring.fxt.gz"));
  EXPECT_FALSE(is_gzip_path("uring.fxt"));
  EXPECT_FALSE(is_gzip_path(".gz"));
  EXPECT_FALSE(is_gzip_path("gz"));
}

// More than the queue between the two threads holds, in writes of every
// size: the writer waits for the compressor, and nothing is lost.
TEST(GzipFile, WhatIsWrittenComesBackWhole) {
  std::string path = temp_path("whole.gz");
  std::string data = trace_like(24 << 20);
  std::FILE *f = open_gzip_file(path);
  ASSERT_NE(f, nullptr);
  for (size_t at = 0, n = 1; at < data.size(); at += n, n = n * 3 % 200000 + 1)
    ASSERT_EQ(std::fwrite(data.data() + at, 1, std::min(n, data.size() - at), f),
              std::min(n, data.size() - at));
  ASSERT_EQ(std::fclose(f), 0);
  std::string gz = read_bytes(path);
  std::remove(path.c_str());
  ASSERT_GT(gz.size(), 2u);
  EXPECT_EQ(gz.substr(0, 2), "\x1f\x8b");
  EXPECT_LT(gz.size(), data.size() / 4);
  EXPECT_EQ(gunzip_if_gzipped(gz), data);
}

TEST(GzipFile, AnEmptyFileIsAnEmptyStream) {
  std::string path = temp_path("empty.gz");
  std::FILE *f = open_gzip_file(path);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fclose(f), 0);
  std::string gz = read_bytes(path);
  std::remove(path.c_str());
  EXPECT_EQ(gz.substr(0, 2), "\x1f\x8b");
  EXPECT_EQ(gunzip_if_gzipped(gz), "");
}

TEST(GzipFile, UngzippedBytesPassAsTheyAre) {
  EXPECT_EQ(gunzip_if_gzipped("plain"), "plain");
  EXPECT_EQ(gunzip_if_gzipped(""), "");
  EXPECT_EQ(gunzip_if_gzipped("\x1f"), "\x1f");
}

// Members one after another (as `cat a.gz b.gz` makes) are one stream of
// bytes; a stream cut short is an error, not a shorter trace.
TEST(GzipFile, MembersJoinAndACutStreamIsAnError) {
  std::string gz[2];
  for (int i = 0; i < 2; i++) {
    std::string path = temp_path("member" + std::to_string(i) + ".gz");
    std::FILE *f = open_gzip_file(path);
    ASSERT_NE(f, nullptr);
    std::string part = i ? "second" : "first ";
    std::fwrite(part.data(), 1, part.size(), f);
    ASSERT_EQ(std::fclose(f), 0);
    gz[i] = read_bytes(path);
    std::remove(path.c_str());
  }
  EXPECT_EQ(gunzip_if_gzipped(gz[0] + gz[1]), "first second");
  EXPECT_THROW(gunzip_if_gzipped(gz[0].substr(0, gz[0].size() - 4)), Error);
}

TEST(GzipFile, UnwritablePathFails) {
  errno = 0;
  EXPECT_EQ(open_gzip_file("/nonexistent-dir/x.gz"), nullptr);
  EXPECT_EQ(errno, ENOENT);
}

}  // namespace
}  // namespace mt
