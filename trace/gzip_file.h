// Trace files compressed as they are written: a FILE* whose bytes become a
// gzip stream (zlib, fastest level) on a thread of its own, so that the
// reader draining the kernel's buffers does not wait for deflate. Perfetto
// opens a gzipped trace of any kind it reads. fclose() finishes the stream
// and waits for the thread; until then the file is not a complete gzip.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace mt {

// Whether `path` names a gzipped file (it ends in ".gz").
bool is_gzip_path(std::string_view path);

// Opens (creates or truncates) `path` for writing through gzip; nullptr
// with errno set if it cannot.
std::FILE *open_gzip_file(const std::string &path);
// How much of what went through a gzip stream is in its file: the bytes,
// before compression, whose compressed form was written. Each write is
// flushed (Z_SYNC_FLUSH), so a reader inflates them without the rest.
struct GzipProgress {
  std::atomic<uint64_t> bytes_written{0};
};

// The same over `out`, which it then owns (fclose closes both); write
// errors, the compressing thread's too, come back as the writes' errno.
// `progress`, if given, must outlive the stream.
std::FILE *gzip_stream(std::FILE *out, GzipProgress *progress = nullptr);

// The bytes of `bytes`, inflated if they are a gzip stream (magic 1f 8b),
// or as they are; throws mt::Error if the stream is damaged.
std::string gunzip_if_gzipped(std::string bytes);

// A file read from the start in pieces, inflated as it goes if it is a
// gzip stream (magic 1f 8b; members one after another are one stream), so
// that reading a trace of any size, or a gzip bomb, takes bounded memory.
class TraceFileReader {
 public:
  // Throws mt::Error "cannot read PATH: why" if the file cannot be opened.
  explicit TraceFileReader(const std::string &path);
  ~TraceFileReader();
  TraceFileReader(const TraceFileReader &) = delete;
  TraceFileReader &operator=(const TraceFileReader &) = delete;

  // Up to `size` bytes into `buf`; 0 at the end. Throws mt::Error when the
  // gzip stream is damaged or cut short, after every byte before that was
  // returned.
  size_t read(char *buf, size_t size);
  bool gzipped() const { return gzipped_; }

 private:
  size_t read_raw(char *buf, size_t size);

  std::FILE *file_ = nullptr;
  std::string path_;
  bool gzipped_ = false;
  bool ended_ = false;  // the gzip stream finished and no member follows
  struct Inflater;
  Inflater *z_ = nullptr;
  uint64_t inflated_ = 0;
  std::string pending_;  // bytes read to tell the format, not yet returned
};

}  // namespace mt
