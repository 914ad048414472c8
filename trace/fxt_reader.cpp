// Parses FXT records word by word and formats them as text or JSON lines.
#include "trace/fxt_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <utility>

#include "common/error.h"
#include "common/json_writer.h"
#include "trace/fxt_format.h"

namespace mt {
namespace {

using namespace fxt;

uint64_t field(uint64_t word, int lo, int hi) {
  int width = hi - lo + 1;
  uint64_t mask = width >= 64 ? ~0ULL : (1ULL << width) - 1;
  return (word >> lo) & mask;
}

bool is_inline(uint32_t ref) {
  return (ref & 0x8000) != 0;
}

[[noreturn]] void fail(uint64_t offset, const std::string &why) {
  throw Error("offset " + std::to_string(offset) + ": " + why);
}

// A window of whole words inside the record being read: all of it, or one
// argument.
struct Span {
  size_t pos, end;  // byte positions in the record
};

// Reads record by record from `source`, holding one record at a time: a
// record is at most 4095 words, so memory stays bounded whatever the trace.
class Reader {
 public:
  explicit Reader(const FxtByteSource &source) : source_(source) {}

  void run(const std::function<void(const FxtRecord &)> &each) {
    b_.resize(8);
    size_t got = pull(0, 8);
    if (got < 8 || load(0) != kMagic) {
      char buf[64];
      if (got < 8)
        std::snprintf(buf, sizeof(buf), "%zu bytes", got);
      else
        std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, load(0));
      fail(0, std::string("not an FXT trace: no magic word (") + buf + ")");
    }
    uint64_t pos = 8;
    for (;;) {
      rec_ = pos;
      b_.resize(8);
      got = pull(0, 8);
      if (got == 0)
        return;
      if (got < 8)
        fail(pos, "truncated record header (" + std::to_string(got) + " bytes left)");
      uint64_t header = load(0);
      size_t words = field(header, 4, 15);
      if (words == 0)
        fail(pos, "record of size 0");
      b_.resize(words * 8);
      got = 8 + pull(8, words * 8 - 8);
      if (got < words * 8)
        fail(pos, "record of " + std::to_string(words) + " words runs past the end of the trace (" +
                      std::to_string(got) + " bytes left)");
      Span s{8, words * 8};
      FxtRecord r;
      r.offset = pos;
      r.type = static_cast<int>(field(header, 0, 3));
      bool keep = true;
      switch (r.type) {
        case kInitRecord: r.ticks_per_second = word(s, "ticks per second"); break;
        case kStringRecord: keep = read_string_record(header, s, r); break;
        case kThreadRecord: keep = read_thread_record(header, s, r); break;
        case kEventRecord: read_event(header, s, r); break;
        case kKernelObjectRecord: read_kernel_object(header, s, r); break;
        default: keep = false;  // metadata, and types we do not read
      }
      pos += words * 8;
      if (keep)
        each(r);
    }
  }

 private:
  // Fills b_[at, at + n) from the source; how many bytes came before its end.
  size_t pull(size_t at, size_t n) {
    size_t got = 0;
    while (got < n) {
      size_t more = source_(b_.data() + at + got, n - got);
      if (more == 0)
        break;
      got += more;
    }
    return got;
  }

  uint64_t load(size_t pos) const {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
      v = (v << 8) | static_cast<unsigned char>(b_[pos + i]);
    return v;
  }

  // What is being read, for errors: "name", or "argument 2 name" inside
  // an argument. Built only when failing.
  std::string describe(const char *what) const {
    return arg_ ? "argument " + std::to_string(arg_) + " " + what : what;
  }

  uint64_t word(Span &s, const char *what) {
    if (s.end - s.pos < 8)
      fail(rec_, "record too short for its " + describe(what));
    uint64_t v = load(s.pos);
    s.pos += 8;
    return v;
  }

  std::string inline_string(Span &s, size_t len, const char *what) {
    size_t padded = (len + 7) / 8 * 8;
    if (s.end - s.pos < padded)
      fail(rec_, "record too short for its " + describe(what) + " (" + std::to_string(len) +
                     " bytes inline)");
    std::string text = b_.substr(s.pos, len);
    s.pos += padded;
    return text;
  }

  // A string ref: 0 the empty string, bit 15 set an inline string of
  // ref & 0x7fff bytes, otherwise an index in the string table.
  std::string string_ref(Span &s, uint32_t ref, const char *what) {
    if (ref == 0)
      return {};
    if (is_inline(ref))
      return inline_string(s, ref & 0x7fff, what);
    auto it = strings_.find(ref);
    if (it == strings_.end())
      fail(rec_, "string ref " + std::to_string(ref) + " (" + describe(what) + ") is not defined");
    return it->second;
  }

  bool read_string_record(uint64_t header, Span &s, FxtRecord &r) {
    r.index = static_cast<uint32_t>(field(header, 16, 30));
    r.name = inline_string(s, field(header, 32, 46), "string");
    if (r.index == 0)
      return false;  // index 0 is reserved: the empty string
    std::string &slot = strings_[r.index];
    string_bytes_ += r.name.size() - slot.size();
    // 32767 strings of 32 KiB would be 1 GiB: no trace of ours needs more
    // than a sliver of that, and reading must stay within bounded memory.
    if (string_bytes_ > kMaxStringTableBytes)
      fail(rec_, "the string table holds more than " + std::to_string(kMaxStringTableBytes >> 20) +
                     " MiB");
    slot = r.name;
    return true;
  }

  bool read_thread_record(uint64_t header, Span &s, FxtRecord &r) {
    r.index = static_cast<uint32_t>(field(header, 16, 23));
    r.pid = word(s, "process koid");
    r.tid = word(s, "thread koid");
    if (r.index == 0)
      return false;  // 0 means an inline thread; never defined
    threads_[r.index] = std::make_pair(r.pid, r.tid);
    return true;
  }

  void read_event(uint64_t header, Span &s, FxtRecord &r) {
    r.event_type = static_cast<int>(field(header, 16, 19));
    size_t nargs = field(header, 20, 23);
    uint32_t thread_ref = static_cast<uint32_t>(field(header, 24, 31));
    uint32_t category_ref = static_cast<uint32_t>(field(header, 32, 47));
    uint32_t name_ref = static_cast<uint32_t>(field(header, 48, 63));
    r.ts = word(s, "timestamp");
    if (thread_ref == 0) {
      r.pid = word(s, "inline process koid");
      r.tid = word(s, "inline thread koid");
    } else {
      auto &t = threads_[thread_ref];
      if (!t)
        fail(rec_, "thread ref " + std::to_string(thread_ref) + " is not defined");
      r.pid = t->first;
      r.tid = t->second;
    }
    r.category = string_ref(s, category_ref, "category");
    r.name = string_ref(s, name_ref, "name");
    read_args(s, nargs, r);
    switch (r.event_type) {
      case 1: r.extra = word(s, "counter id"); break;
      case 4: r.extra = word(s, "end time"); break;
      case 5:
      case 6:
      case 7: r.extra = word(s, "correlation id"); break;
      case 8:
      case 9:
      case 10: r.extra = word(s, "flow id"); break;
      default: break;
    }
  }

  void read_kernel_object(uint64_t header, Span &s, FxtRecord &r) {
    r.object_type = static_cast<int>(field(header, 16, 23));
    uint32_t name_ref = static_cast<uint32_t>(field(header, 24, 39));
    size_t nargs = field(header, 40, 43);
    r.koid = word(s, "koid");
    r.name = string_ref(s, name_ref, "name");
    read_args(s, nargs, r);
  }

  void read_args(Span &s, size_t nargs, FxtRecord &r) {
    if (nargs > kMaxArgs)
      fail(rec_, std::to_string(nargs) + " arguments, FXT allows at most 15");
    for (size_t n = 1; n <= nargs; n++) {
      arg_ = 0;
      if (s.end - s.pos < 8)
        fail(rec_, "record too short for its argument " + std::to_string(n));
      uint64_t header = load(s.pos);
      size_t words = field(header, 4, 15);
      if (words == 0)
        fail(rec_, "argument " + std::to_string(n) + " has size 0");
      if (words * 8 > s.end - s.pos)
        fail(rec_, "argument " + std::to_string(n) + " of " + std::to_string(words) +
                       " words runs past its record");
      arg_ = n;
      Span a{s.pos + 8, s.pos + words * 8};
      s.pos = a.end;
      FxtArgValue v;
      v.type = static_cast<int>(field(header, 0, 3));
      v.name = string_ref(a, static_cast<uint32_t>(field(header, 16, 31)), "name");
      switch (v.type) {
        case 1: v.i = static_cast<int32_t>(field(header, 32, 63)); break;
        case 2: v.u = field(header, 32, 63); break;
        case 3: v.i = static_cast<int64_t>(word(a, "value")); break;
        case 4:
        case 7:
        case 8: v.u = word(a, "value"); break;
        case 5: {
          uint64_t bits = word(a, "value");
          std::memcpy(&v.d, &bits, sizeof(bits));
          break;
        }
        case 6:
          v.text = string_ref(a, static_cast<uint32_t>(field(header, 32, 47)), "value");
          break;
        case 9: v.u = field(header, 32, 32); break;
        default: break;  // 0 null; unknown types keep their name only
      }
      r.args.push_back(std::move(v));
    }
    arg_ = 0;
  }

  const FxtByteSource &source_;
  std::string b_;     // the record being read
  uint64_t rec_ = 0;  // its offset in the trace
  size_t arg_ = 0;    // 1-based number of the argument being read, or 0
  static constexpr size_t kMaxStringTableBytes = size_t(64) << 20;
  std::unordered_map<uint32_t, std::string> strings_;
  size_t string_bytes_ = 0;  // of the texts in strings_
  std::array<std::optional<std::pair<uint64_t, uint64_t>>, 256> threads_;
};

const char *event_name(int type) {
  static const char *names[] = {"instant",    "counter",     "begin",         "end",
                                "complete",   "async_begin", "async_instant", "async_end",
                                "flow_begin", "flow_step",   "flow_end"};
  return type >= 0 && type <= 10 ? names[type] : nullptr;
}

std::string event_kind(int type) {
  const char *name = event_name(type);
  return name ? name : "event_type_" + std::to_string(type);
}

std::string object_kind(int type) {
  switch (type) {
    case 1: return "process";
    case 2: return "thread";
    default: return "type_" + std::to_string(type);
  }
}

// The name of the extra word of an event, or nullptr.
const char *extra_key(int event_type) {
  switch (event_type) {
    case 1: return "counter_id";
    case 4: return "end_ts";
    case 5:
    case 6:
    case 7: return "async_id";
    case 8:
    case 9:
    case 10: return "flow_id";
    default: return nullptr;
  }
}

std::string double_text(double d) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, res.ptr);
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return buf;
}

// The value as in text (strings quoted) and as JSON.
std::string arg_text(const FxtArgValue &a) {
  switch (a.type) {
    case 0: return "null";
    case 1:
    case 3: return std::to_string(a.i);
    case 2:
    case 4:
    case 8: return std::to_string(a.u);
    case 5: return double_text(a.d);
    case 6: return json_string(a.text);
    case 7: return hex(a.u);
    case 9: return a.u ? "true" : "false";
    default: return "?";
  }
}

std::string arg_json(const FxtArgValue &a) {
  switch (a.type) {
    case 5: return std::isfinite(a.d) ? double_text(a.d) : "null";
    case 7: return json_string(hex(a.u));
    case 1:
    case 2:
    case 3:
    case 4:
    case 6:
    case 8:
    case 9: return arg_text(a);
    default: return "null";
  }
}

std::string args_text(const std::vector<FxtArgValue> &args) {
  if (args.empty())
    return "";
  std::string out = " {";
  for (size_t i = 0; i < args.size(); i++) {
    if (i)
      out += ", ";
    out += args[i].name;
    out += '=';
    out += arg_text(args[i]);
  }
  return out + "}";
}

void args_json(const std::vector<FxtArgValue> &args, JsonWriter &json) {
  json.object();
  for (const FxtArgValue &arg : args)
    json.key(arg.name).raw(arg_json(arg));
  json.end();
}

}  // namespace

void read_fxt(const FxtByteSource &source, const std::function<void(const FxtRecord &)> &each) {
  Reader(source).run(each);
}

void read_fxt(const std::string &bytes, const std::function<void(const FxtRecord &)> &each) {
  size_t at = 0;
  FxtByteSource source = [&](char *buf, size_t size) {
    size_t n = std::min(size, bytes.size() - at);
    std::memcpy(buf, bytes.data() + at, n);
    at += n;
    return n;
  };
  read_fxt(source, each);
}

std::vector<FxtRecord> read_fxt(const std::string &bytes) {
  std::vector<FxtRecord> records;
  read_fxt(bytes, [&](const FxtRecord &r) { records.push_back(r); });
  return records;
}

std::string fxt_record_text(const FxtRecord &r) {
  switch (r.type) {
    case kInitRecord: return "init ticks_per_second=" + std::to_string(r.ticks_per_second);
    case kStringRecord: return "string " + std::to_string(r.index) + " " + json_string(r.name);
    case kThreadRecord:
      return "thread " + std::to_string(r.index) + " pid=" + std::to_string(r.pid) +
             " tid=" + std::to_string(r.tid);
    case kEventRecord: {
      std::string out = std::to_string(r.ts) + " " + event_kind(r.event_type) +
                        " pid=" + std::to_string(r.pid) + " tid=" + std::to_string(r.tid) + " " +
                        r.category + "/" + r.name;
      if (const char *key = extra_key(r.event_type))
        out += std::string(" ") + key + "=" + std::to_string(r.extra);
      return out + args_text(r.args);
    }
    case kKernelObjectRecord:
      return "kobj " + object_kind(r.object_type) + " koid=" + std::to_string(r.koid) +
             " name=" + json_string(r.name) + args_text(r.args);
    default: return "record type=" + std::to_string(r.type);
  }
}

std::string fxt_record_json(const FxtRecord &r) {
  JsonWriter json;
  json.object().key("offset").num(r.offset).key("type");
  switch (r.type) {
    case kInitRecord: json.str("init").key("ticks_per_second").num(r.ticks_per_second); break;
    case kStringRecord: json.str("string").key("index").num(r.index).key("text").str(r.name); break;
    case kThreadRecord:
      json.str("thread").key("index").num(r.index).key("pid").num(r.pid).key("tid").num(r.tid);
      break;
    case kEventRecord:
      json.str("event").key("event").str(event_kind(r.event_type)).key("ts").num(r.ts);
      json.key("pid").num(r.pid).key("tid").num(r.tid);
      json.key("category").str(r.category).key("name").str(r.name);
      if (const char *key = extra_key(r.event_type))
        json.key(key).num(r.extra);
      json.key("args");
      args_json(r.args, json);
      break;
    case kKernelObjectRecord:
      json.str("kobj").key("kind").str(object_kind(r.object_type)).key("koid").num(r.koid);
      json.key("name").str(r.name).key("args");
      args_json(r.args, json);
      break;
    default: json.num(r.type);
  }
  return json.end().text();
}

}  // namespace mt
