// The FXT writer: each record kind's bytes, string and thread tables, argument limits.
// Over 500 lines: one test per record kind and table rule, each with its expected bytes.
#include "trace/fxt_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trace/fxt_format.h"
#include "trace/fxt_reader.h"

namespace mt {

namespace {

// A FILE in memory; words(w) flushes the writer and returns the file.
class MemFile {
 public:
  MemFile() : f_(open_memstream(&data_, &size_)) {}
  ~MemFile() {
    std::fclose(f_);
    std::free(data_);
  }
  std::FILE *file() { return f_; }
  std::vector<uint64_t> words(FxtWriter &w) {
    w.flush();
    return words();
  }
  std::vector<uint64_t> words() {
    std::fflush(f_);
    EXPECT_EQ(size_ % 8, 0u);
    std::vector<uint64_t> out(size_ / 8);
    std::memcpy(out.data(), data_, out.size() * 8);
    return out;
  }

 private:
  char *data_ = nullptr;
  size_t size_ = 0;
  std::FILE *f_;
};

using fxt::kMagic;

uint64_t hdr(uint64_t type, uint64_t words) {
  return type | words << 4;
}

uint64_t string_record(uint64_t idx, uint64_t len, uint64_t words) {
  return hdr(2, words) | idx << 16 | len << 32;
}

uint64_t text_word(const char *s) {  // up to 8 bytes, zero-padded
  uint64_t w = 0;
  std::memcpy(&w, s, std::strlen(s));
  return w;
}

uint64_t event_header(uint64_t words, uint64_t type, uint64_t nargs, uint64_t thread, uint64_t cat,
                      uint64_t name) {
  return hdr(4, words) | type << 16 | nargs << 20 | thread << 24 | cat << 32 | name << 48;
}

// The words after the magic and the initialization record.
std::vector<uint64_t> body(const std::vector<uint64_t> &w) {
  return std::vector<uint64_t>(w.begin() + 3, w.end());
}

// Walks a stream like Perfetto's tokenizer: keeps the string and thread
// tables and resolves every event's refs when the event is read.
struct Walked {
  struct Event {
    int type = 0;
    uint64_t pid = 0, tid = 0;
    std::string category, name;
    std::vector<std::pair<std::string, uint64_t>> args;  // name, header
    std::vector<std::string> texts;                      // string argument values
  };
  std::vector<Event> events;
  size_t string_records = 0, thread_records = 0;
  std::map<std::pair<uint64_t, uint64_t>, size_t> thread_emitted;  // thread records by (pid, tid)
  std::map<std::string, size_t> string_emitted;                    // string records by text
};

Walked walk(const std::vector<uint64_t> &w) {
  Walked out;
  std::map<uint64_t, std::string> strings;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> threads;
  auto str = [&](uint64_t ref) -> std::string {
    if (ref == 0) {
      return "";
    }
    EXPECT_LT(ref, 0x8000u);
    auto it = strings.find(ref);
    EXPECT_NE(it, strings.end()) << "unset string ref " << ref;
    return it == strings.end() ? "<unset>" : it->second;
  };
  EXPECT_GE(w.size(), 3u);
  EXPECT_EQ(w[0], kMagic);
  size_t i = 1;
  while (i < w.size()) {
    uint64_t h = w[i];
    uint64_t type = h & 0xf, size = (h >> 4) & 0xfff;
    EXPECT_GT(size, 0u);
    EXPECT_LE(i + size, w.size());
    if (size == 0 || i + size > w.size()) {
      break;
    }
    if (type == 2) {
      uint64_t idx = (h >> 16) & 0x7fff, len = (h >> 32) & 0x7fff;
      EXPECT_GE(idx, 1u);
      EXPECT_EQ(size, 1 + (len + 7) / 8);
      strings[idx] = std::string(reinterpret_cast<const char *>(&w[i + 1]), len);
      out.string_records++;
      out.string_emitted[strings[idx]]++;
    } else if (type == 3) {
      uint64_t idx = (h >> 16) & 0xff;
      EXPECT_GE(idx, 1u);
      EXPECT_EQ(size, 3u);
      threads[idx] = {w[i + 1], w[i + 2]};
      out.thread_emitted[threads[idx]]++;
      out.thread_records++;
    } else if (type == 4) {
      Walked::Event e;
      e.type = int((h >> 16) & 0xf);
      uint64_t nargs = (h >> 20) & 0xf, thread = (h >> 24) & 0xff;
      EXPECT_TRUE(threads.count(thread)) << "unset thread ref " << thread;
      std::tie(e.pid, e.tid) = threads[thread];
      e.category = str((h >> 32) & 0xffff);
      e.name = str(h >> 48);
      size_t j = i + 2;
      for (uint64_t a = 0; a < nargs; a++) {
        uint64_t ah = w[j];
        e.args.emplace_back(str((ah >> 16) & 0xffff), ah);
        if ((ah & 0xf) == 6) {
          e.texts.push_back(str((ah >> 32) & 0xffff));
        }
        j += (ah >> 4) & 0xfff;
      }
      bool extra = e.type == 1 || e.type == 4 || e.type >= 8;
      EXPECT_EQ(j + (extra ? 1 : 0), i + size) << "event size";
      out.events.push_back(std::move(e));
    }
    i += size;
  }
  return out;
}

}  // namespace

TEST(FxtWriter, StartsWithMagicAndInitialization) {
  MemFile f;
  FxtWriter w(f.file());
  EXPECT_EQ(f.words(w), (std::vector<uint64_t>{kMagic, hdr(1, 2), 1000000000ull}));
  EXPECT_EQ(w.bytes(), 24u);
  EXPECT_EQ(w.records(), 2u);
}

TEST(FxtWriter, InternsStringsOnceWithPaddedRecords) {
  MemFile f;
  FxtWriter w(f.file());
  w.instant(1, 2, 100, "cat", "a_longer_name");
  w.instant(1, 2, 200, "cat", "a_longer_name");
  std::vector<uint64_t> expect = {
      string_record(1, 3, 2),
      text_word("cat"),
      string_record(2, 13, 3),
      text_word("a_longer"),
      text_word("_name"),
      hdr(3, 3) | 1 << 16,
      1,
      2,
      event_header(2, 0, 0, 1, 1, 2),
      100,
      event_header(2, 0, 0, 1, 1, 2),
      200,
  };
  EXPECT_EQ(body(f.words(w)), expect);
  EXPECT_EQ(w.records(), 2u + 5u);
  EXPECT_EQ(w.bytes(), (3 + expect.size()) * 8);
}

TEST(FxtWriter, EmptyStringsAreRefZeroAndLongOnesAreTruncated) {
  MemFile f;
  FxtWriter w(f.file());
  w.instant(1, 1, 5, "", "");
  std::string long_name(40000, 'x');
  w.instant(1, 1, 6, "", long_name);
  std::vector<uint64_t> words = body(f.words(w));
  ASSERT_EQ(words.size(), 3 + 2 + 1 + 32000 / 8 + 2u);
  EXPECT_EQ(words[3], event_header(2, 0, 0, 1, 0, 0));
  EXPECT_EQ(words[5], string_record(1, 32000, 1 + 32000 / 8));
  EXPECT_EQ(words[6 + 32000 / 8], event_header(2, 0, 0, 1, 0, 1));
  Walked walked = walk(f.words(w));
  ASSERT_EQ(walked.events.size(), 2u);
  EXPECT_EQ(walked.events[1].name, long_name.substr(0, 32000));
}

TEST(FxtWriter, InstantArgsUseInlineEncodingsWhenTheValueFits) {
  MemFile f;
  FxtWriter w(f.file());
  w.instant(7, 8, 1000, "c", "n",
            {FxtArg::integer("i", -5), FxtArg::uinteger("u", 7),
             FxtArg::integer("I", -(int64_t(1) << 40)), FxtArg::uinteger("U", uint64_t(1) << 40),
             FxtArg::pointer("p", 0x1234), FxtArg::koid("k", 42), FxtArg::string("s", "v"),
             FxtArg::boolean("b", true), FxtArg::string("e", "")});
  std::vector<uint64_t> words = body(f.words(w));
  // Strings: i u I U p k s v b e (args in order), then c and n; then thread.
  const char *names[] = {"i", "u", "I", "U", "p", "k", "s", "v", "b", "e", "c", "n"};
  size_t at = 0;
  for (uint64_t idx = 1; idx <= 12; idx++) {
    EXPECT_EQ(words[at++], string_record(idx, 1, 2));
    EXPECT_EQ(words[at++], text_word(names[idx - 1]));
  }
  EXPECT_EQ(words[at++], hdr(3, 3) | 1 << 16);
  EXPECT_EQ(words[at++], 7u);
  EXPECT_EQ(words[at++], 8u);
  std::vector<uint64_t> event = {
      event_header(2 + 13, 0, 9, 1, 11, 12),
      1000,
      hdr(1, 1) | 1 << 16 | uint64_t(uint32_t(-5)) << 32,
      hdr(2, 1) | 2 << 16 | uint64_t(7) << 32,
      hdr(3, 2) | 3 << 16,
      uint64_t(-(int64_t(1) << 40)),
      hdr(4, 2) | 4 << 16,
      uint64_t(1) << 40,
      hdr(7, 2) | 5 << 16,
      0x1234,
      hdr(8, 2) | 6 << 16,
      42,
      hdr(6, 1) | 7 << 16 | uint64_t(8) << 32,
      hdr(9, 1) | 9 << 16 | uint64_t(1) << 32,
      hdr(6, 1) | 10 << 16,
  };
  EXPECT_EQ(std::vector<uint64_t>(words.begin() + at, words.end()), event);
  EXPECT_EQ(w.dropped_args(), 0u);
}

TEST(FxtWriter, BoundaryValuesPickTheRightWidth) {
  MemFile f;
  FxtWriter w(f.file());
  w.instant(1, 1, 0, "", "",
            {FxtArg::integer("", INT32_MIN), FxtArg::integer("", INT32_MAX),
             FxtArg::integer("", int64_t(INT32_MAX) + 1), FxtArg::uinteger("", UINT32_MAX),
             FxtArg::uinteger("", uint64_t(UINT32_MAX) + 1)});
  std::vector<uint64_t> words = body(f.words(w));
  std::vector<uint64_t> event = {
      event_header(2 + 7, 0, 5, 1, 0, 0),      0,         hdr(1, 1) | uint64_t(0x80000000u) << 32,
      hdr(1, 1) | uint64_t(0x7fffffffu) << 32, hdr(3, 2), uint64_t(INT32_MAX) + 1,
      hdr(2, 1) | uint64_t(UINT32_MAX) << 32,  hdr(4, 2), uint64_t(UINT32_MAX) + 1,
  };
  EXPECT_EQ(std::vector<uint64_t>(words.begin() + 3, words.end()), event);
}

TEST(FxtWriter, DurationEvents) {
  MemFile f;
  FxtWriter w(f.file());
  w.begin(1, 2, 10, "c", "n");
  w.end(1, 2, 20, "c", "n");
  w.complete(1, 2, 30, 45, "c", "n", {FxtArg::uinteger("c", 3)});
  std::vector<uint64_t> words = body(f.words(w));
  std::vector<uint64_t> events(words.begin() + 7, words.end());
  std::vector<uint64_t> expect = {
      event_header(2, 2, 0, 1, 1, 2), 10, event_header(2, 3, 0, 1, 1, 2),          20,
      event_header(4, 4, 1, 1, 1, 2), 30, hdr(2, 1) | 1 << 16 | uint64_t(3) << 32, 45,
  };
  EXPECT_EQ(events, expect);
}

TEST(FxtWriter, CounterCarriesItsId) {
  MemFile f;
  FxtWriter w(f.file());
  w.counter(3, 4, 99, "c", "n", 77, {FxtArg::integer("a", 1), FxtArg::uinteger("b", 2)});
  std::vector<uint64_t> words = body(f.words(w));
  // Argument names are interned first, then the category and the name.
  std::vector<uint64_t> expect = {
      string_record(1, 1, 2),
      text_word("a"),
      string_record(2, 1, 2),
      text_word("b"),
      string_record(3, 1, 2),
      text_word("c"),
      string_record(4, 1, 2),
      text_word("n"),
      hdr(3, 3) | 1 << 16,
      3,
      4,
      event_header(5, 1, 2, 1, 3, 4),
      99,
      hdr(1, 1) | 1 << 16 | uint64_t(1) << 32,
      hdr(2, 1) | 2 << 16 | uint64_t(2) << 32,
      77,
  };
  EXPECT_EQ(words, expect);
}

TEST(FxtWriter, FlowsCarryTheirId) {
  MemFile f;
  FxtWriter w(f.file());
  w.flow(FxtFlow::Begin, 1, 2, 10, "c", "f", 0xabc);
  w.flow(FxtFlow::Step, 1, 2, 11, "c", "f", 0xabc);
  w.flow(FxtFlow::End, 1, 2, 12, "c", "f", 0xabc);
  std::vector<uint64_t> words = body(f.words(w));
  std::vector<uint64_t> events(words.begin() + 7, words.end());
  std::vector<uint64_t> expect = {
      event_header(3, 8, 0, 1, 1, 2),  10, 0xabc, event_header(3, 9, 0, 1, 1, 2), 11, 0xabc,
      event_header(3, 10, 0, 1, 1, 2), 12, 0xabc,
  };
  EXPECT_EQ(events, expect);
}

TEST(FxtWriter, KernelObjectsNameProcessesAndThreads) {
  MemFile f;
  FxtWriter w(f.file());
  w.process(100, "server");
  w.thread(100, 101, "worker");
  std::vector<uint64_t> expect = {
      string_record(1, 6, 2),
      text_word("server"),
      hdr(7, 2) | 1 << 16 | uint64_t(1) << 24,
      100,
      string_record(2, 6, 2),
      text_word("worker"),
      string_record(3, 7, 2),
      text_word("process"),
      hdr(7, 4) | 2 << 16 | uint64_t(2) << 24 | uint64_t(1) << 40,
      101,
      hdr(8, 2) | 3 << 16,
      100,
  };
  EXPECT_EQ(body(f.words(w)), expect);
}

TEST(FxtWriter, ArgumentsBeyondFifteenAreDroppedAndCounted) {
  MemFile f;
  FxtWriter w(f.file());
  std::vector<FxtArg> args;
  for (int i = 0; i < 17; i++) {
    args.push_back(FxtArg::integer("", i));
  }
  w.instant(1, 1, 0, "", "", args);
  w.instant(1, 1, 1, "", "", args);
  std::vector<uint64_t> words = body(f.words(w));
  ASSERT_EQ(words.size(), 3 + 2 * 17u);
  EXPECT_EQ(words[3], event_header(17, 0, 15, 1, 0, 0));
  EXPECT_EQ(words[5 + 14], hdr(1, 1) | uint64_t(14) << 32);
  EXPECT_EQ(w.dropped_args(), 4u);
}

TEST(FxtWriter, StringTableEvictionKeepsRefsRight) {
  MemFile f;
  FxtWriter w(f.file());
  std::vector<std::string> expect_names;
  // 40000 distinct names plus hot strings that stay referenced, and old
  // names coming back after they were evicted.
  for (int i = 0; i < 80000; i++) {
    std::string name = "name" + std::to_string(i < 40000 ? i : (i * 7919) % 40000);
    std::string argv = "value" + std::to_string(i % 50000);
    w.instant(1, 1, i, "hot", name, {FxtArg::string("arg", argv)});
    expect_names.push_back(name);
  }
  Walked walked = walk(f.words(w));
  ASSERT_EQ(walked.events.size(), expect_names.size());
  size_t wrong = 0;
  for (size_t i = 0; i < expect_names.size(); i++) {
    const Walked::Event &e = walked.events[i];
    wrong += e.name != expect_names[i] || e.category != "hot" || e.args.size() != 1 ||
             e.args[0].first != "arg";
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(walked.string_records, 32767u);
  EXPECT_LE(walked.string_records, 2 * 80000u + 2u);
  // The clock keeps strings in use: the hot ones are emitted once.
  EXPECT_EQ(walked.string_emitted["hot"], 1u);
  EXPECT_EQ(walked.string_emitted["arg"], 1u);
}

// Events built in place (start, arg_*, write) are the same bytes as the
// same events given as FxtArgs, their 16th argument on dropped likewise.
TEST(FxtWriter, EventsBuiltInPlaceMatchThoseGivenAsArgs) {
  auto write_both = [](bool in_place) {
    MemFile f;
    FxtWriter w(f.file());
    FxtRef cat = w.pin("cat"), name = w.pin("ev"), a = w.pin("a"), b = w.pin("b");
    FxtRef value = w.pin("named");
    for (uint64_t i = 0; i < 3; i++) {
      uint64_t end = 100 + i, id = 7;
      if (in_place) {
        FxtArgWords args;
        w.start(args);
        w.arg_int(args, a, -5);
        w.arg_int(args, b, -(int64_t(1) << 40));
        w.arg_uint(args, a, UINT32_MAX);
        w.arg_uint(args, b, uint64_t(UINT32_MAX) + 1);
        w.arg_pointer(args, a, 0xffff888100001000ull);
        w.arg_bool(args, b, true);
        w.arg_string(args, a, "text");
        w.arg_string(args, b, value);
        for (int k = 0; k < 9; k++)
          w.arg_uint(args, a, k);
        w.write(fxt::kComplete, 1, 2, 10 * i, cat, name, args, &end);
        w.write(fxt::kFlowBegin, w.thread(1, 2), 10 * i, cat, name, id);
      } else {
        std::vector<FxtArg> args = {FxtArg::integer("a", -5),
                                    FxtArg::integer("b", -(int64_t(1) << 40)),
                                    FxtArg::uinteger("a", UINT32_MAX),
                                    FxtArg::uinteger("b", uint64_t(UINT32_MAX) + 1),
                                    FxtArg::pointer("a", 0xffff888100001000ull),
                                    FxtArg::boolean("b", true),
                                    FxtArg::string("a", "text"),
                                    FxtArg::string("b", "named")};
        for (int k = 0; k < 9; k++)
          args.push_back(FxtArg::uinteger("a", k));
        w.complete(1, 2, 10 * i, end, "cat", "ev", args);
        w.flow(FxtFlow::Begin, 1, 2, 10 * i, "cat", "ev", id);
      }
    }
    EXPECT_EQ(w.dropped_args(), 6u);
    std::vector<uint64_t> words = f.words(w);
    // The events as read back: string and thread indices may differ.
    std::vector<std::string> events;
    for (const auto &r :
         read_fxt(std::string(reinterpret_cast<const char *>(words.data()), words.size() * 8))) {
      if (r.type != 4)
        continue;
      std::string e = std::to_string(r.event_type) + " " + std::to_string(r.ts) + " " +
                      std::to_string(r.pid) + "/" + std::to_string(r.tid) + " " + r.category + " " +
                      r.name + " " + std::to_string(r.extra);
      for (const auto &arg : r.args)
        e += " " + arg.name + ":" + std::to_string(arg.type) + "=" + std::to_string(arg.i) + "/" +
             std::to_string(arg.u) + "/" + arg.text;
      events.push_back(e);
    }
    return events;
  };
  std::vector<std::string> in_place = write_both(true), given = write_both(false);
  EXPECT_EQ(in_place, given);
  ASSERT_EQ(in_place.size(), 6u);
  EXPECT_NE(in_place[0].find(" b:6=0/0/named a:2=0/0/"), std::string::npos) << in_place[0];
}

// Short strings are found again without hashing their text: ones that
// differ only inside, or only in length, stay apart.
TEST(FxtWriter, ShortStringsThatDifferOnlyInsideStayApart) {
  MemFile f;
  FxtWriter w(f.file());
  std::vector<std::string> names;
  for (size_t n = 1; n <= 17; n++)
    for (char c : {'a', 'b'}) {
      std::string s(n, 'x');
      s[n / 2] = c;
      names.push_back(s);
      names.push_back(s + '\0');
    }
  for (int round = 0; round < 3; round++)
    for (const auto &name : names)
      w.instant(1, 1, 0, "c", name);
  Walked walked = walk(f.words(w));
  ASSERT_EQ(walked.events.size(), 3 * names.size());
  size_t wrong = 0;
  for (size_t i = 0; i < walked.events.size(); i++)
    wrong += walked.events[i].name != names[i % names.size()];
  EXPECT_EQ(wrong, 0u);
}

TEST(FxtWriter, StringArgValuesResolveAfterEviction) {
  MemFile f;
  FxtWriter w(f.file());
  for (int i = 0; i < 70000; i++) {
    w.instant(1, 1, i, "c", "n", {FxtArg::string("k", "v" + std::to_string(i))});
  }
  // Decode the value refs with the walker's view of the table.
  std::vector<uint64_t> words = f.words(w);
  std::map<uint64_t, std::string> strings;
  size_t i = 1, event = 0, wrong = 0;
  while (i < words.size()) {
    uint64_t h = words[i];
    uint64_t size = (h >> 4) & 0xfff;
    if ((h & 0xf) == 2) {
      strings[(h >> 16) & 0x7fff] =
          std::string(reinterpret_cast<const char *>(&words[i + 1]), (h >> 32) & 0x7fff);
    } else if ((h & 0xf) == 4) {
      uint64_t value_ref = (words[i + 2] >> 32) & 0xffff;
      wrong += strings[value_ref] != "v" + std::to_string(event++);
    }
    i += size;
  }
  EXPECT_EQ(event, 70000u);
  EXPECT_EQ(wrong, 0u);
}

TEST(FxtWriter, EvictionNeverTakesAStringOfTheRecordBeingBuilt) {
  MemFile f;
  FxtWriter w(f.file());
  // 30 new strings a record, over three times the table.
  for (int i = 0; i < 3500; i++) {
    std::vector<FxtArg> args;
    std::vector<std::string> keep;
    keep.reserve(30);
    for (int a = 0; a < 15; a++) {
      keep.push_back("k" + std::to_string(i) + "." + std::to_string(a));
      keep.push_back("v" + std::to_string(i) + "." + std::to_string(a));
      args.push_back(FxtArg::string(keep[keep.size() - 2], keep.back()));
    }
    w.instant(1, 1, i, "c" + std::to_string(i), "n" + std::to_string(i), args);
  }
  Walked walked = walk(f.words(w));
  ASSERT_EQ(walked.events.size(), 3500u);
  size_t wrong = 0;
  for (int i = 0; i < 3500; i++) {
    const Walked::Event &e = walked.events[i];
    wrong += e.category != "c" + std::to_string(i) || e.name != "n" + std::to_string(i);
    for (int a = 0; a < 15; a++) {
      std::string suffix = std::to_string(i) + "." + std::to_string(a);
      wrong += e.args[a].first != "k" + suffix || e.texts[a] != "v" + suffix;
    }
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(FxtWriter, EvictionSkipsTheStringsOfTheRecordBeingBuilt) {
  // A full table where every string but the first has been used again: the
  // next new string takes index 1, and the one after it, in the same record,
  // must not take index 1 again after a lap of the clock.
  MemFile f;
  FxtWriter w(f.file());
  for (int round = 0; round < 2; round++) {
    for (int i = round; i < 32767; i++) {
      w.instant(1, 1, 0, "", "s" + std::to_string(i));
    }
  }
  w.instant(1, 1, 1, "", "B", {FxtArg::uinteger("A", 1)});
  Walked walked = walk(f.words(w));
  ASSERT_EQ(walked.events.size(), 2 * 32767u);
  EXPECT_EQ(walked.events.back().name, "B");
  EXPECT_EQ(walked.events.back().args[0].first, "A");
}

// The bytes of a MemFile, as trace/fxt_reader reads them back.
std::vector<FxtRecord> read_back(MemFile &f, FxtWriter &w) {
  std::vector<uint64_t> words = f.words(w);
  return read_fxt(std::string(reinterpret_cast<const char *>(words.data()), words.size() * 8));
}

size_t string_records(const std::vector<FxtRecord> &records, const std::string &text) {
  size_t n = 0;
  for (const auto &r : records)
    n += r.type == 2 && r.name == text;
  return n;
}

TEST(FxtWriter, PinnedRefsNameEventsLikeTheirText) {
  MemFile f;
  FxtWriter w(f.file());
  FxtRef cat = w.pin("io_uring"), name = w.pin("submit"), arg = w.pin("user_data");
  EXPECT_EQ(w.pin("io_uring").id, cat.id);  // the same string, the same ref
  EXPECT_NE(name.id, cat.id);
  EXPECT_EQ(w.records(), 2u);  // pinning alone writes nothing
  FxtArg a = FxtArg::uinteger("", 7);
  a.name_ref = arg;
  w.instant(1, 2, 10, cat, name, {a, FxtArg::string("op", "READ")});
  w.begin(1, 2, 20, cat, name);
  w.end(1, 2, 30, cat, name);
  w.complete(1, 2, 40, 50, cat, name, {a});
  w.counter(1, 2, 60, cat, name, 3, {a});
  w.flow(FxtFlow::Begin, 1, 2, 70, cat, w.pin("flow"), 9);
  w.instant(1, 2, 80, "io_uring", "submit", {FxtArg::uinteger("user_data", 7)});
  w.instant(1, 2, 90, FxtRef{}, w.pin(""));  // no ref and "": the empty string
  auto records = read_back(f, w);
  std::vector<const FxtRecord *> events;
  for (const auto &r : records)
    if (r.type == 4)
      events.push_back(&r);
  ASSERT_EQ(events.size(), 8u);
  std::vector<int> types = {fxt::kInstant, fxt::kBegin,     fxt::kEnd,     fxt::kComplete,
                            fxt::kCounter, fxt::kFlowBegin, fxt::kInstant, fxt::kInstant};
  for (size_t i = 0; i < 7; i++) {
    EXPECT_EQ(events[i]->event_type, types[i]) << i;
    EXPECT_EQ(events[i]->category, "io_uring") << i;
    EXPECT_EQ(events[i]->name, i == 5 ? "flow" : "submit") << i;
    EXPECT_EQ(events[i]->pid, 1u);
    EXPECT_EQ(events[i]->tid, 2u);
  }
  ASSERT_EQ(events[0]->args.size(), 2u);
  EXPECT_EQ(events[0]->args[0].name, "user_data");
  EXPECT_EQ(events[0]->args[0].u, 7u);
  EXPECT_EQ(events[0]->args[1].name, "op");
  EXPECT_EQ(events[0]->args[1].text, "READ");
  EXPECT_EQ(events[3]->extra, 50u);
  EXPECT_EQ(events[4]->extra, 3u);
  EXPECT_EQ(events[5]->extra, 9u);
  EXPECT_EQ(events[6]->args[0].name, "user_data");  // by text, the pinned string's ref
  EXPECT_EQ(events[7]->category, "");
  EXPECT_EQ(events[7]->name, "");
  // Each string defined once, whether used pinned or by its text.
  EXPECT_EQ(string_records(records, "io_uring"), 1u);
  EXPECT_EQ(string_records(records, "submit"), 1u);
  EXPECT_EQ(string_records(records, "user_data"), 1u);
}

TEST(FxtWriter, PinnedRefsSurviveEvictionOfTheWholeTable) {
  MemFile f;
  FxtWriter w(f.file());
  FxtRef cat = w.pin("pinned-cat"), name = w.pin("pinned-name"), arg = w.pin("pinned-arg");
  FxtArg a = FxtArg::uinteger("", 1);
  a.name_ref = arg;
  w.instant(1, 1, 0, cat, name, {a});
  // Twice the table in other strings, each used twice so that the clock
  // gives them a second chance over the pinned ones, unused all along.
  for (int i = 0; i < 2 * 32767; i++) {
    std::string s = "s" + std::to_string(i);
    w.instant(1, 1, 1, s, s);
  }
  w.instant(1, 1, 2, cat, name, {a});
  auto records = read_back(f, w);  // throws on a ref to an unset string
  const FxtRecord *last = nullptr;
  size_t others = 0;
  for (const auto &r : records)
    if (r.type == 4) {
      if (r.ts == 1)
        others += r.name == r.category && r.name[0] == 's';
      last = &r;
    }
  EXPECT_EQ(others, 2 * 32767u);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->ts, 2u);
  EXPECT_EQ(last->category, "pinned-cat");
  EXPECT_EQ(last->name, "pinned-name");
  ASSERT_EQ(last->args.size(), 1u);
  EXPECT_EQ(last->args[0].name, "pinned-arg");
  // Never evicted, so never defined again.
  EXPECT_EQ(string_records(records, "pinned-cat"), 1u);
  EXPECT_EQ(string_records(records, "pinned-name"), 1u);
  EXPECT_EQ(string_records(records, "pinned-arg"), 1u);
}

TEST(FxtWriter, PinsBeyondTheKeptOnesStillResolve) {
  MemFile f;
  FxtWriter w(f.file());
  size_t n = FxtWriter::kMaxKept + 100;
  std::vector<FxtRef> refs;
  for (size_t i = 0; i < n; i++)
    refs.push_back(w.pin("p" + std::to_string(i)));
  for (size_t i = 0; i < n; i++)
    w.instant(1, 1, i, refs[i], refs[i]);
  for (int i = 0; i < 40000; i++) {  // evicts whatever is not kept
    std::string s = "s" + std::to_string(i);
    w.instant(1, 1, 0, s, s);
  }
  for (size_t i = 0; i < n; i++)
    w.instant(1, 1, i, refs[i], refs[i]);
  auto records = read_back(f, w);
  std::vector<std::string> names;
  for (const auto &r : records)
    if (r.type == 4 && r.name[0] == 'p') {
      EXPECT_EQ(r.category, r.name);
      names.push_back(r.name);
    }
  ASSERT_EQ(names.size(), 2 * n);
  size_t wrong = 0;
  for (size_t i = 0; i < 2 * n; i++)
    wrong += names[i] != "p" + std::to_string(i % n);
  EXPECT_EQ(wrong, 0u);
  // The kept ones are defined once; those beyond kMaxKept again after eviction.
  EXPECT_EQ(string_records(records, "p0"), 1u);
  EXPECT_EQ(string_records(records, "p" + std::to_string(n - 1)), 2u);
}

TEST(FxtWriter, ThreadTableEvictionKeepsRefsRight) {
  MemFile f;
  FxtWriter w(f.file());
  std::vector<std::pair<uint64_t, uint64_t>> expect;
  for (int i = 0; i < 5000; i++) {
    // A hot thread, and 600 others in a scrambled order.
    uint64_t pid = 1000 + (i * 37) % 600 / 10, tid = (i * 37) % 600 + 1;
    if (i % 3 == 0) {
      pid = 1;
      tid = 1;
    }
    w.begin(pid, tid, i, "c", "n");
    expect.emplace_back(pid, tid);
  }
  Walked walked = walk(f.words(w));
  ASSERT_EQ(walked.events.size(), expect.size());
  size_t wrong = 0;
  for (size_t i = 0; i < expect.size(); i++) {
    wrong += walked.events[i].pid != expect[i].first || walked.events[i].tid != expect[i].second;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(walked.thread_records, 600u);
  EXPECT_EQ(walked.thread_emitted[std::make_pair(uint64_t(1), uint64_t(1))], 1u);
}

TEST(FxtWriter, BufferedBytesReachTheFileOnFlush) {
  MemFile f;
  FxtWriter w(f.file());
  for (int i = 0; i < 20000; i++) {  // several 64 KiB buffers
    w.complete(1, 1, i, i + 1, "c", "n", {FxtArg::uinteger("x", i)});
  }
  std::vector<uint64_t> words = f.words(w);
  EXPECT_EQ(words.size() * 8, w.bytes());
  EXPECT_GT(w.bytes(), 3u * 65536);
  Walked walked = walk(words);
  EXPECT_EQ(walked.events.size(), 20000u);
  EXPECT_EQ(w.records(), 2 + 3 + 1 + 20000u);
}

TEST(FxtWriter, DestructorWritesWhatIsBuffered) {
  MemFile f;
  std::vector<uint64_t> words;
  {
    FxtWriter w(f.file());
    w.instant(1, 1, 1, "c", "n");
    words = f.words(w);
  }
  {
    FxtWriter w(f.file());
    w.instant(1, 1, 1, "c", "n");
  }
  std::vector<uint64_t> all = f.words();
  ASSERT_EQ(all.size(), 2 * words.size());
  EXPECT_EQ(std::vector<uint64_t>(all.begin() + words.size(), all.end()), words);
}

}  // namespace mt
