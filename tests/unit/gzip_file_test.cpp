// Gzipped trace files: what goes through open_gzip_file() comes back whole
// from gunzip_if_gzipped(), whatever the size of the writes.
#include "trace/gzip_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.h"

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

// Everything a TraceFileReader gives, `chunk` bytes at a time, and the
// error it ended with ("" if none).
std::pair<std::string, std::string> read_through(const std::string &path, size_t chunk) {
  std::string out, error;
  try {
    TraceFileReader reader(path);
    std::string buf(chunk, '\0');
    for (size_t n; (n = reader.read(buf.data(), chunk)) > 0;)
      out.append(buf, 0, n);
  } catch (const Error &e) {
    error = e.what();
  }
  return {out, error};
}

std::string gzipped_file(const std::string &name, const std::string &text) {
  std::string path = temp_path(name);
  std::FILE *f = open_gzip_file(path);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return path;
}

TEST(TraceFileReader, ReadsPlainAndGzippedFilesInPieces) {
  std::string data = trace_like(300000);
  std::string plain = temp_path("plain.fxt");
  std::ofstream(plain, std::ios::binary) << data;
  std::string gz = gzipped_file("whole.fxt.gz", data);
  for (size_t chunk : {1, 7, 65536, 1 << 20}) {
    EXPECT_EQ(read_through(plain, chunk), std::make_pair(data, std::string()));
    EXPECT_EQ(read_through(gz, chunk), std::make_pair(data, std::string()));
  }
  std::string one = temp_path("one");
  std::ofstream(one) << "x";  // shorter than the gzip magic
  EXPECT_EQ(read_through(one, 4), std::make_pair(std::string("x"), std::string()));
  for (const auto &p : {plain, gz, one})
    std::remove(p.c_str());
}

TEST(TraceFileReader, MembersJoin) {
  std::string a = gzipped_file("a.gz", "first "), b = gzipped_file("b.gz", "second");
  std::string both = temp_path("both.gz");
  std::ofstream(both, std::ios::binary) << read_bytes(a) << read_bytes(b);
  EXPECT_EQ(read_through(both, 3), std::make_pair(std::string("first second"), std::string()));
  for (const auto &p : {a, b, both})
    std::remove(p.c_str());
}

// What a cut stream holds comes out before the error: a trace cut short
// shows its records.
TEST(TraceFileReader, ACutStreamGivesWhatItHoldsThenAnError) {
  std::string data = trace_like(200000);
  std::string gz = gzipped_file("cut.gz", data);
  std::string bytes = read_bytes(gz);
  std::ofstream(gz, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  auto [out, error] = read_through(gz, 4096);
  EXPECT_GT(out.size(), 50000u);
  EXPECT_EQ(out, data.substr(0, out.size()));
  EXPECT_EQ(error, "the gzip stream ends early: the file is cut short (" +
                       std::to_string(out.size()) + " bytes inflated)");
  bytes[bytes.size() / 2] ^= 0x55;  // damage in the middle
  std::ofstream(gz, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_EQ(read_through(gz, 4096).second.rfind("damaged gzip stream (", 0), 0u);
  std::remove(gz.c_str());
  EXPECT_EQ(read_through(temp_path("missing"), 4).second,
            "cannot read " + temp_path("missing") + ": No such file or directory");
}

}  // namespace
}  // namespace mt
