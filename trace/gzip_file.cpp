// Gzips a FILE*'s writes on a worker thread, and reads plain or gzipped trace files back.
#include "trace/gzip_file.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.h"

namespace mt {
namespace {

// Chunks handed from the writing thread to the compressing one. At most
// kMaxQueued wait: a writer faster than deflate then waits, and the kernel
// buffers behind it fill (and count what they lose) rather than memory.
class GzipStream {
 public:
  GzipStream(std::FILE *out, GzipProgress *progress) : out_(out), progress_(progress) {
    std::memset(&z_, 0, sizeof(z_));
    // 15 + 16: a gzip header and trailer around the deflate stream.
    if (deflateInit2(&z_, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw Error("zlib: cannot start a gzip stream");
    thread_ = std::thread([this] { run(); });
  }

  ssize_t write(const char *data, size_t size) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return queue_.size() < kMaxQueued || failed_; });
    if (failed_) {
      errno = error_;
      return -1;
    }
    queue_.emplace_back(data, data + size);
    ready_.notify_one();
    return static_cast<ssize_t>(size);
  }

  // Finishes the stream and closes the file; 0, or EOF if anything failed.
  int close() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
      ready_.notify_one();
    }
    thread_.join();
    deflateEnd(&z_);
    bool ok = !failed_;
    errno = 0;
    if (std::fclose(out_) != 0 && ok) {
      ok = false;
      error_ = errno ? errno : EIO;
    }
    errno = error_;
    return ok ? 0 : EOF;
  }

 private:
  static constexpr size_t kMaxQueued = 16;  // of the writer's 64 KiB buffers: 1 MiB

  void run() {
    for (;;) {
      std::vector<char> chunk;
      bool last;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return !queue_.empty() || closing_; });
        last = queue_.empty();
        if (!last) {
          chunk = std::move(queue_.front());
          queue_.pop_front();
          room_.notify_one();
        }
      }
      errno = 0;
      // Each chunk flushed: what reached the file inflates without the rest.
      bool ok = deflate_out(chunk, last ? Z_FINISH : Z_SYNC_FLUSH);
      if (ok && progress_)
        progress_->bytes_written += chunk.size();
      if (!ok || last) {
        int error = errno ? errno : EIO;
        std::lock_guard lock(mutex_);
        failed_ |= !ok;
        if (!ok)
          error_ = error;
        room_.notify_all();
        return;
      }
    }
  }

  bool deflate_out(std::vector<char> &in, int flush) {
    z_.next_in = reinterpret_cast<Bytef *>(in.data());
    z_.avail_in = static_cast<uInt>(in.size());
    char out[1 << 16];
    int ret;
    do {
      z_.next_out = reinterpret_cast<Bytef *>(out);
      z_.avail_out = sizeof(out);
      ret = deflate(&z_, flush);
      if (ret == Z_STREAM_ERROR)
        return false;
      size_t produced = sizeof(out) - z_.avail_out;
      if (std::fwrite(out, 1, produced, out_) != produced)
        return false;
    } while (z_.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
    // A flushed block goes to the file at once: the tracer flushes its
    // writer every second, so a SIGKILLed trace inflates up to then.
    return flush == Z_NO_FLUSH || std::fflush(out_) == 0;
  }

  std::FILE *out_;
  GzipProgress *progress_;
  z_stream z_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<std::vector<char>> queue_;
  bool closing_ = false, failed_ = false;
  int error_ = 0;  // errno of the first failure
};

ssize_t cookie_write(void *cookie, const char *data, size_t size) {
  return static_cast<GzipStream *>(cookie)->write(data, size);
}

int cookie_close(void *cookie) {
  auto *stream = static_cast<GzipStream *>(cookie);
  int result = stream->close();
  delete stream;
  return result;
}

}  // namespace

bool is_gzip_path(std::string_view path) {
  return path.size() > 3 && path.substr(path.size() - 3) == ".gz";
}

std::FILE *open_gzip_file(const std::string &path) {
  std::FILE *out = std::fopen(path.c_str(), "wb");
  return out ? gzip_stream(out) : nullptr;
}

std::FILE *gzip_stream(std::FILE *out, GzipProgress *progress) {
  auto *stream = new GzipStream(out, progress);
  cookie_io_functions_t io{};
  io.write = cookie_write;
  io.close = cookie_close;
  std::FILE *f = fopencookie(stream, "w", io);
  if (f) {
    std::setvbuf(f, nullptr, _IONBF, 0);  // the writer hands over 64 KiB at a time
  } else {
    int saved = errno;
    stream->close();
    delete stream;
    errno = saved;
  }
  return f;
}

std::string gunzip_if_gzipped(std::string bytes) {
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f ||
      static_cast<unsigned char>(bytes[1]) != 0x8b)
    return bytes;
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK)
    throw Error("zlib: cannot start inflating");
  z.next_in = reinterpret_cast<Bytef *>(bytes.data());
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buf[1 << 16];
  int ret;
  do {
    z.next_out = reinterpret_cast<Bytef *>(buf);
    z.avail_out = sizeof(buf);
    ret = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    // Members written one after another make one stream of bytes.
    if (ret == Z_STREAM_END && z.avail_in > 0 && inflateReset(&z) == Z_OK)
      ret = Z_OK;
  } while (ret == Z_OK);
  inflateEnd(&z);
  if (ret != Z_STREAM_END)
    throw Error("damaged gzip stream (" + std::to_string(out.size()) +
                " bytes inflated before the damage)");
  return out;
}

struct TraceFileReader::Inflater {
  z_stream z{};
  char in[1 << 16];
};

TraceFileReader::TraceFileReader(const std::string &path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_)
    throw Error("cannot read " + path + ": " + std::strerror(errno));
  char magic[2];
  size_t n = read_raw(magic, 2);
  pending_.assign(magic, n);
  gzipped_ = n == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
             static_cast<unsigned char>(magic[1]) == 0x8b;
  if (!gzipped_)
    return;
  z_ = new Inflater;
  if (inflateInit2(&z_->z, 15 + 16) != Z_OK)
    throw Error("zlib: cannot start inflating");
  std::memcpy(z_->in, magic, 2);
  z_->z.next_in = reinterpret_cast<Bytef *>(z_->in);
  z_->z.avail_in = 2;
  pending_.clear();
}

TraceFileReader::~TraceFileReader() {
  if (z_) {
    inflateEnd(&z_->z);
    delete z_;
  }
  if (file_)
    std::fclose(file_);
}

size_t TraceFileReader::read_raw(char *buf, size_t size) {
  size_t n = std::fread(buf, 1, size, file_);
  if (n == 0 && std::ferror(file_))
    throw Error("cannot read " + path_ + ": " + std::strerror(errno));
  return n;
}

size_t TraceFileReader::read(char *buf, size_t size) {
  if (!gzipped_) {
    if (pending_.empty())
      return read_raw(buf, size);
    size_t n = std::min(size, pending_.size());
    std::memcpy(buf, pending_.data(), n);
    pending_.erase(0, n);
    return n;
  }
  z_stream &z = z_->z;
  while (!ended_) {
    if (z.avail_in == 0) {
      z.next_in = reinterpret_cast<Bytef *>(z_->in);
      z.avail_in = static_cast<uInt>(read_raw(z_->in, sizeof(z_->in)));
    }
    bool at_end_of_file = z.avail_in == 0;
    z.next_out = reinterpret_cast<Bytef *>(buf);
    z.avail_out = static_cast<uInt>(std::min<size_t>(size, 1 << 30));
    int ret = inflate(&z, Z_NO_FLUSH);
    size_t produced = reinterpret_cast<char *>(z.next_out) - buf;
    inflated_ += produced;
    if (ret == Z_STREAM_END) {
      // Members written one after another make one stream of bytes.
      if (z.avail_in == 0) {
        z.next_in = reinterpret_cast<Bytef *>(z_->in);
        z.avail_in = static_cast<uInt>(read_raw(z_->in, sizeof(z_->in)));
      }
      if (z.avail_in == 0 || inflateReset(&z) != Z_OK)
        ended_ = true;
    } else if (ret == Z_BUF_ERROR && at_end_of_file && produced == 0) {
      throw Error("the gzip stream ends early: the file is cut short (" +
                  std::to_string(inflated_) + " bytes inflated)");
    } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
      throw Error("damaged gzip stream (" + std::to_string(inflated_) +
                  " bytes inflated before the damage)");
    }
    if (produced > 0)
      return produced;
  }
  return 0;
}

}  // namespace mt
