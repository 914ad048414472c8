// The FXT reader on hand-built word sequences (every record kind, inline
// strings and threads, every malformed case), and the Perfetto rules of
// tests/fxt_validator.h, each broken once.
// Over 500 lines: one test per record kind and per malformed case, words built by hand.
#include "trace/fxt_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "tests/fxt_validator.h"
#include "tests/fxt_words.h"
#include "trace/fxt_writer.h"

namespace {

using mt::FxtArgValue;
using mt::FxtRecord;
using mt::read_fxt;
using mt::testing::perfetto_problems;

// ---- a tiny FXT word builder (more in tests/fxt_words.h) ----

using namespace mt::testing;

Words init(uint64_t ticks = 1000000000) {
  return record(1, 0, {ticks});
}
Words string_record(uint64_t index, const std::string &s) {
  return record(2, index << 16 | static_cast<uint64_t>(s.size()) << 32, padded(s));
}
Words thread_record(uint64_t index, uint64_t pid, uint64_t tid) {
  return record(3, index << 16, {pid, tid});
}

// An argument: header bits 32-63 `high`, then `body` (inline name first).
Words arg(uint64_t type, uint64_t name_ref, uint64_t high, const Words &body = {}) {
  return Words{header(type, 1 + body.size(), name_ref << 16 | high << 32)} + body;
}

// An event record, by default an instant at 100 on thread ref 1 named by
// string refs 1 and 2.
struct Ev {
  uint64_t type_ = 0;
  uint64_t thread_ref_ = 1, category_ref_ = 1, name_ref_ = 2;
  uint64_t ts_ = 100;
  Words after_ts_;  // inline thread, inline category and name
  std::vector<Words> args_;
  Words extra_;  // counter id, end time, flow id

  Ev &type(uint64_t v) {
    type_ = v;
    return *this;
  }
  Ev &thread_ref(uint64_t v) {
    thread_ref_ = v;
    return *this;
  }
  Ev &category_ref(uint64_t v) {
    category_ref_ = v;
    return *this;
  }
  Ev &name_ref(uint64_t v) {
    name_ref_ = v;
    return *this;
  }
  Ev &ts(uint64_t v) {
    ts_ = v;
    return *this;
  }
  Ev &after_ts(Words v) {
    after_ts_ = std::move(v);
    return *this;
  }
  Ev &args(std::vector<Words> v) {
    args_ = std::move(v);
    return *this;
  }
  Ev &extra(Words v) {
    extra_ = std::move(v);
    return *this;
  }
};

Words event(const Ev &e) {
  Words body = Words{e.ts_} + e.after_ts_;
  for (const auto &a : e.args_)
    body = body + a;
  body = body + e.extra_;
  return record(4,
                e.type_ << 16 | e.args_.size() << 20 | e.thread_ref_ << 24 | e.category_ref_ << 32 |
                    e.name_ref_ << 48,
                body);
}

Words kobj(uint64_t object_type, uint64_t name_ref, uint64_t koid, const Words &inline_name,
           const std::vector<Words> &args) {
  Words body = Words{koid} + inline_name;
  for (const auto &a : args)
    body = body + a;
  return record(7, object_type << 16 | name_ref << 24 | args.size() << 40, body);
}

// Magic, init, strings 1 "cat" and 2 "name", thread 1 = pid 10 tid 11.
Words preamble() {
  return Words{kMagic} + init() + string_record(1, "cat") + string_record(2, "name") +
         thread_record(1, 10, 11);
}

// The records of `w` other than string and thread records.
std::vector<FxtRecord> read_shown(const Words &w) {
  std::vector<FxtRecord> out;
  for (auto &r : read_fxt(bytes(w)))
    if (r.type != 2 && r.type != 3)
      out.push_back(r);
  return out;
}

std::string error_of(const Words &w) {
  try {
    read_fxt(bytes(w));
  } catch (const mt::Error &e) {
    return e.what();
  }
  return "(no error)";
}

// ---- the reader ----

TEST(FxtReader, MagicAloneIsAnEmptyTrace) {
  EXPECT_TRUE(read_fxt(bytes({kMagic})).empty());
}

TEST(FxtReader, RejectsAMissingOrWrongMagicWord) {
  EXPECT_EQ(error_of({}), "offset 0: not an FXT trace: no magic word (0 bytes)");
  EXPECT_EQ(error_of({0x1234}), "offset 0: not an FXT trace: no magic word (0x0000000000001234)");
  EXPECT_EQ(error_of(init()), "offset 0: not an FXT trace: no magic word (0x0000000000000021)");
}

TEST(FxtReader, InitializationRecord) {
  auto r = read_fxt(bytes(Words{kMagic} + init(1000)));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type, 1);
  EXPECT_EQ(r[0].offset, 8u);
  EXPECT_EQ(r[0].ticks_per_second, 1000u);
  EXPECT_EQ(mt::fxt_record_text(r[0]), "init ticks_per_second=1000");
  EXPECT_EQ(mt::fxt_record_json(r[0]), R"({"offset":8,"type":"init","ticks_per_second":1000})");
}

TEST(FxtReader, StringRecordsFillTheTableAndLaterOnesReplace) {
  auto w = preamble() + event(Ev()) + string_record(2, "renamed") + event(Ev().ts(200));
  auto all = read_fxt(bytes(w));
  ASSERT_EQ(all.size(), 7u);
  EXPECT_EQ(all[1].type, 2);
  EXPECT_EQ(all[1].index, 1u);
  EXPECT_EQ(all[1].name, "cat");
  EXPECT_EQ(mt::fxt_record_text(all[1]), R"(string 1 "cat")");
  EXPECT_EQ(mt::fxt_record_json(all[1]), R"({"offset":24,"type":"string","index":1,"text":"cat"})");
  EXPECT_EQ(all[4].name, "name");
  EXPECT_EQ(all[5].name, "renamed");
  EXPECT_EQ(all[6].name, "renamed");
  EXPECT_EQ(all[6].category, "cat");
  // A string of exactly 8 bytes takes one word; string ref 0 is "".
  auto r = read_shown(preamble() + string_record(3, "12345678") +
                      event(Ev().category_ref(0).name_ref(3)));
  EXPECT_EQ(r.back().category, "");
  EXPECT_EQ(r.back().name, "12345678");
}

TEST(FxtReader, ThreadRefsAndInlineThreads) {
  auto w = preamble() + thread_record(7, 20, 21) + event(Ev().thread_ref(7)) +
           event(Ev().thread_ref(0).after_ts({30, 31}));
  auto all = read_fxt(bytes(w));
  ASSERT_EQ(all.size(), 7u);
  EXPECT_EQ(mt::fxt_record_text(all[4]), "thread 7 pid=20 tid=21");
  EXPECT_EQ(mt::fxt_record_json(all[4]),
            R"({"offset":80,"type":"thread","index":7,"pid":20,"tid":21})");
  EXPECT_EQ(all[5].pid, 20u);
  EXPECT_EQ(all[5].tid, 21u);
  EXPECT_EQ(all[6].pid, 30u);
  EXPECT_EQ(all[6].tid, 31u);
}

TEST(FxtReader, InlineStringsEverywhere) {
  auto w = preamble() +
           event(Ev().thread_ref(0)
                     .category_ref(inl("io_uring"))
                     .name_ref(inl("submit_sqe"))
                     .after_ts(Words{10, 11} + padded("io_uring") + padded("submit_sqe"))
                     .args({arg(6, inl("op"), inl("READV"), padded("op") + padded("READV")),
                            arg(6, 1, 2), arg(2, inl("a_long_name"), 5, padded("a_long_name"))}));
  auto r = read_shown(w);
  ASSERT_EQ(r.size(), 2u);
  const auto &e = r[1];
  EXPECT_EQ(e.category, "io_uring");
  EXPECT_EQ(e.name, "submit_sqe");
  ASSERT_EQ(e.args.size(), 3u);
  EXPECT_EQ(e.args[0].name, "op");
  EXPECT_EQ(e.args[0].text, "READV");
  EXPECT_EQ(e.args[1].name, "cat");
  EXPECT_EQ(e.args[1].text, "name");
  EXPECT_EQ(e.args[2].name, "a_long_name");
  EXPECT_EQ(e.args[2].u, 5u);
  EXPECT_EQ(mt::fxt_record_text(e), R"(100 instant pid=10 tid=11 io_uring/submit_sqe )"
                                    R"({op="READV", cat="name", a_long_name=5})");
}

TEST(FxtReader, EveryArgumentType) {
  double d = -2.5;
  uint64_t dbits;
  std::memcpy(&dbits, &d, 8);
  auto w = preamble() + event(Ev().args({
                            arg(1, inl("i32"), 0xfffffffbu, padded("i32")),
                            arg(2, inl("u32"), 0xfffffffbu, padded("u32")),
                            arg(3, inl("i64"), 0, padded("i64") + Words{uint64_t(-7)}),
                            arg(4, inl("u64"), 0, padded("u64") + Words{uint64_t(-7)}),
                            arg(5, inl("dbl"), 0, padded("dbl") + Words{dbits}),
                            arg(6, inl("str"), inl("a\"b"), padded("str") + padded("a\"b")),
                            arg(7, inl("ptr"), 0, padded("ptr") + Words{0xffff8881deadULL}),
                            arg(8, inl("koid"), 0, padded("koid") + Words{42}),
                            arg(9, inl("yes"), 1, padded("yes")),
                            arg(9, inl("no"), 0, padded("no")),
                            arg(0, inl("nil"), 0, padded("nil")),
                        }));
  auto r = read_shown(w);
  ASSERT_EQ(r.size(), 2u);
  const auto &a = r[1].args;
  ASSERT_EQ(a.size(), 11u);
  EXPECT_EQ(a[0].type, 1);
  EXPECT_EQ(a[0].i, -5);
  EXPECT_EQ(a[1].u, 0xfffffffbu);
  EXPECT_EQ(a[2].i, -7);
  EXPECT_EQ(a[3].u, uint64_t(-7));
  EXPECT_EQ(a[4].d, -2.5);
  EXPECT_EQ(a[5].text, "a\"b");
  EXPECT_EQ(a[6].u, 0xffff8881deadULL);
  EXPECT_EQ(a[7].u, 42u);
  EXPECT_EQ(a[8].u, 1u);
  EXPECT_EQ(a[9].u, 0u);
  EXPECT_EQ(a[10].type, 0);
  EXPECT_EQ(mt::fxt_record_text(r[1]),
            "100 instant pid=10 tid=11 cat/name {i32=-5, u32=4294967291, i64=-7, "
            "u64=18446744073709551609, dbl=-2.5, str=\"a\\\"b\", ptr=0xffff8881dead, koid=42, "
            "yes=true, no=false, nil=null}");
  EXPECT_EQ(mt::fxt_record_json(r[1]),
            R"({"offset":80,"type":"event","event":"instant","ts":100,"pid":10,"tid":11,)"
            R"("category":"cat","name":"name","args":{"i32":-5,"u32":4294967291,"i64":-7,)"
            R"("u64":18446744073709551609,"dbl":-2.5,"str":"a\"b","ptr":"0xffff8881dead",)"
            R"("koid":42,"yes":true,"no":false,"nil":null}})");
}

TEST(FxtReader, EventTypesAndTheirTrailingWords) {
  auto w = preamble() + event(Ev().type(1).args({arg(2, 2, 3)}).extra({9})) + event(Ev().type(2)) +
           event(Ev().type(3).ts(150)) + event(Ev().type(4).extra({300})) +
           event(Ev().type(5).extra({6})) + event(Ev().type(8).extra({77})) +
           event(Ev().type(9).extra({77})) + event(Ev().type(10).extra({77}));
  auto r = read_shown(w);
  ASSERT_EQ(r.size(), 9u);
  std::vector<std::string> text;
  for (const auto &e : r)
    text.push_back(mt::fxt_record_text(e));
  EXPECT_EQ(text, (std::vector<std::string>{
                      "init ticks_per_second=1000000000",
                      "100 counter pid=10 tid=11 cat/name counter_id=9 {name=3}",
                      "100 begin pid=10 tid=11 cat/name",
                      "150 end pid=10 tid=11 cat/name",
                      "100 complete pid=10 tid=11 cat/name end_ts=300",
                      "100 async_begin pid=10 tid=11 cat/name async_id=6",
                      "100 flow_begin pid=10 tid=11 cat/name flow_id=77",
                      "100 flow_step pid=10 tid=11 cat/name flow_id=77",
                      "100 flow_end pid=10 tid=11 cat/name flow_id=77",
                  }));
  EXPECT_EQ(r[1].extra, 9u);
  EXPECT_EQ(r[4].extra, 300u);
  EXPECT_EQ(mt::fxt_record_json(r[4]),
            R"({"offset":144,"type":"event","event":"complete","ts":100,"pid":10,"tid":11,)"
            R"("category":"cat","name":"name","end_ts":300,"args":{}})");
  EXPECT_EQ(mt::fxt_record_json(r[1]),
            R"({"offset":80,"type":"event","event":"counter","ts":100,"pid":10,"tid":11,)"
            R"("category":"cat","name":"name","counter_id":9,"args":{"name":3}})");
  EXPECT_NE(mt::fxt_record_json(r[6]).find(R"("event":"flow_begin")"), std::string::npos);
  EXPECT_NE(mt::fxt_record_json(r[6]).find(R"("flow_id":77,)"), std::string::npos);
}

TEST(FxtReader, KernelObjects) {
  auto w = preamble() + kobj(1, inl("nop_storm"), 10, padded("nop_storm"), {}) +
           kobj(2, 2, 11, {}, {arg(8, inl("process"), 0, padded("process") + Words{10})});
  auto r = read_shown(w);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[1].type, 7);
  EXPECT_EQ(r[1].object_type, 1);
  EXPECT_EQ(r[1].koid, 10u);
  EXPECT_EQ(r[1].name, "nop_storm");
  EXPECT_EQ(mt::fxt_record_text(r[1]), R"(kobj process koid=10 name="nop_storm")");
  EXPECT_EQ(mt::fxt_record_text(r[2]), R"(kobj thread koid=11 name="name" {process=10})");
  EXPECT_EQ(mt::fxt_record_json(r[2]),
            R"({"offset":112,"type":"kobj","kind":"thread","koid":11,"name":"name",)"
            R"("args":{"process":10}})");
}

TEST(FxtReader, SkipsMetadataAndUnknownRecordsBySize) {
  auto w = Words{kMagic} + record(0, 1 << 16, {1, 2}) + init() + record(5, 0, {1, 2, 3}) +
           record(15, 0, {}) + record(8, 0, {4});
  auto r = read_fxt(bytes(w));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type, 1);
  EXPECT_EQ(r[0].offset, 32u);
}

// From a source, whatever the size of its pieces: the same records, and
// the same errors at the same offsets.
TEST(FxtReader, ReadsFromASourceInPiecesOfAnySize) {
  auto whole = bytes(preamble() + event(Ev()) + event(Ev()) + Words{header(4, 3), 100});
  std::vector<int> expected;
  std::string expected_error;
  try {
    read_fxt(whole, [&](const FxtRecord &r) { expected.push_back(static_cast<int>(r.offset)); });
  } catch (const mt::Error &e) {
    expected_error = e.what();
  }
  ASSERT_EQ(expected_error,
            "offset " + std::to_string(whole.size() - 16) +
                ": record of 3 words runs past the end of the trace (16 bytes left)");
  for (size_t piece : {1, 3, 8, 4096}) {
    size_t at = 0;
    mt::FxtByteSource source = [&](char *buf, size_t size) {
      size_t n = std::min({size, piece, whole.size() - at});
      std::memcpy(buf, whole.data() + at, n);
      at += n;
      return n;
    };
    std::vector<int> seen;
    std::string error;
    try {
      read_fxt(source, [&](const FxtRecord &r) { seen.push_back(static_cast<int>(r.offset)); });
    } catch (const mt::Error &e) {
      error = e.what();
    }
    EXPECT_EQ(seen, expected) << piece;
    EXPECT_EQ(error, expected_error) << piece;
  }
}

// The string table is bounded: 32767 strings of 32 KiB would take 1 GiB.
TEST(FxtReader, TheStringTableHoldsAtMost64MiB) {
  Words w = Words{kMagic};
  std::string big(32752, 's');  // the longest: a record is at most 4095 words
  for (uint64_t i = 1; i <= 2100; i++) {
    Words r = string_record(i, big);
    w.insert(w.end(), r.begin(), r.end());
  }
  size_t over = (64 << 20) / big.size() + 1;  // the string that passes 64 MiB
  EXPECT_EQ(error_of(w), "offset " + std::to_string(8 + (over - 1) * (8 + big.size())) +
                             ": the string table holds more than 64 MiB");
  Words same = Words{kMagic};  // one index rewritten: the old text goes
  for (int i = 0; i < 2100; i++) {
    Words r = string_record(1, big);
    same.insert(same.end(), r.begin(), r.end());
  }
  EXPECT_EQ(error_of(same), "(no error)");
}

// An error of the source itself (a damaged gzip stream) comes after every
// record before it.
TEST(FxtReader, ASourceErrorComesAfterTheRecordsBeforeIt) {
  auto whole = bytes(preamble() + event(Ev()));
  size_t at = 0;
  mt::FxtByteSource source = [&](char *buf, size_t size) -> size_t {
    if (at == whole.size())
      throw mt::Error("damaged");
    size_t n = std::min(size, whole.size() - at);
    std::memcpy(buf, whole.data() + at, n);
    at += n;
    return n;
  };
  int records = 0;
  EXPECT_THROW(read_fxt(source, [&](const FxtRecord &) { records++; }), mt::Error);
  EXPECT_EQ(records, 5);  // init, two strings, a thread, the event
}

TEST(FxtReader, MalformedTracesNameTheOffsetAndWhy) {
  const auto p = preamble();  // 80 bytes
  EXPECT_EQ(error_of(p + Words{header(4, 0)}), "offset 80: record of size 0");
  EXPECT_EQ(error_of(p + Words{header(4, 3), 100}),
            "offset 80: record of 3 words runs past the end of the trace (16 bytes left)");
  std::string cut = bytes(p) + "abc";
  try {
    read_fxt(cut);
    ADD_FAILURE() << "no error";
  } catch (const mt::Error &e) {
    EXPECT_STREQ(e.what(), "offset 80: truncated record header (3 bytes left)");
  }
  EXPECT_EQ(error_of(p + event(Ev().name_ref(9))), "offset 80: string ref 9 (name) is not defined");
  EXPECT_EQ(error_of(p + event(Ev().category_ref(9))),
            "offset 80: string ref 9 (category) is not defined");
  EXPECT_EQ(error_of(p + event(Ev().args({arg(2, 9, 1)}))),
            "offset 80: string ref 9 (argument 1 name) is not defined");
  EXPECT_EQ(error_of(p + event(Ev().args({arg(2, 1, 1), arg(6, 1, 9)}))),
            "offset 80: string ref 9 (argument 2 value) is not defined");
  EXPECT_EQ(error_of(p + kobj(2, 9, 11, {}, {})), "offset 80: string ref 9 (name) is not defined");
  EXPECT_EQ(error_of(p + event(Ev().thread_ref(3))), "offset 80: thread ref 3 is not defined");
  // An argument whose size runs past its record, or of size 0.
  EXPECT_EQ(error_of(p + record(4, 1ULL << 20 | 1ULL << 24 | 1ULL << 32 | 2ULL << 48,
                                {100, header(4, 3, 1 << 16), 5})),
            "offset 80: argument 1 of 3 words runs past its record");
  EXPECT_EQ(error_of(p + record(4, 1ULL << 20 | 1ULL << 24 | 1ULL << 32 | 2ULL << 48,
                                {100, header(2, 0, 1 << 16)})),
            "offset 80: argument 1 has size 0");
  // Fields that do not fit their record or their argument.
  EXPECT_EQ(error_of(p + record(4, 1ULL << 24 | 1ULL << 32 | 2ULL << 48, {})),
            "offset 80: record too short for its timestamp");
  EXPECT_EQ(error_of(p + record(4, inl("long name") << 48 | 1ULL << 24, {100, 0})),
            "offset 80: record too short for its name (9 bytes inline)");
  EXPECT_EQ(error_of(p + record(4, 1ULL << 16 | 1ULL << 24 | 1ULL << 32 | 2ULL << 48, {100})),
            "offset 80: record too short for its counter id");
  EXPECT_EQ(error_of(p + record(4, 1ULL << 20 | 1ULL << 24 | 1ULL << 32 | 2ULL << 48,
                                {100, header(4, 1, 1 << 16)})),
            "offset 80: record too short for its argument 1 value");
  EXPECT_EQ(error_of(p + record(3, 1 << 16, {10})),
            "offset 80: record too short for its thread koid");
  // The records before the malformed one are handed over first.
  std::vector<int> seen;
  EXPECT_THROW(
      read_fxt(bytes(p + Words{header(4, 0)}), [&](const FxtRecord &r) { seen.push_back(r.type); }),
      mt::Error);
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 2, 3}));
}

// ---- the Perfetto rules ----

// Records built directly, for the validator.
struct Trace {
  std::vector<FxtRecord> records;
  uint64_t next = 8;

  Trace() {
    FxtRecord r;
    r.type = 1;
    r.ticks_per_second = 1000000000;
    add(r);
  }
  FxtRecord &add(FxtRecord r) {
    r.offset = next;
    next += 16;
    records.push_back(std::move(r));
    return records.back();
  }
  // A thread kernel object for tid in pid.
  Trace &thread(uint64_t pid, uint64_t tid, int process_type = 8) {
    FxtRecord r;
    r.type = 7;
    r.object_type = 2;
    r.koid = tid;
    r.name = "t" + std::to_string(tid);
    FxtArgValue a;
    a.name = "process";
    a.type = process_type;
    a.u = pid;
    r.args.push_back(a);
    add(r);
    return *this;
  }
  Trace &ev(int type, uint64_t ts, const std::string &name, uint64_t extra = 0, uint64_t pid = 10,
            uint64_t tid = 11) {
    FxtRecord r;
    r.type = 4;
    r.event_type = type;
    r.ts = ts;
    r.pid = pid;
    r.tid = tid;
    r.category = "cat";
    r.name = name;
    r.extra = extra;
    add(r);
    return *this;
  }
  Trace &instant(uint64_t ts, const std::string &name = "i") { return ev(0, ts, name); }
  Trace &begin(uint64_t ts, const std::string &name) { return ev(2, ts, name); }
  Trace &end(uint64_t ts, const std::string &name) { return ev(3, ts, name); }
  Trace &complete(uint64_t ts, uint64_t end_ts, const std::string &name = "c") {
    return ev(4, ts, name, end_ts);
  }
  Trace &flow(int kind, uint64_t ts, uint64_t id, uint64_t pid = 10, uint64_t tid = 11) {
    return ev(8 + kind, ts, "f", id, pid, tid);
  }
};

enum { kBegin = 0, kStep = 1, kEnd = 2 };

// Exactly one problem, holding every needle.
::testing::AssertionResult one_problem(const Trace &t, const std::vector<std::string> &needles) {
  auto problems = perfetto_problems(t.records);
  std::string all;
  for (const auto &p : problems)
    all += "\n  " + p;
  if (problems.size() != 1)
    return ::testing::AssertionFailure() << problems.size() << " problems:" << all;
  for (const auto &n : needles)
    if (problems[0].find(n) == std::string::npos)
      return ::testing::AssertionFailure() << "no '" << n << "' in:" << all;
  return ::testing::AssertionSuccess();
}

std::string joined(const std::vector<std::string> &v) {
  std::string s;
  for (const auto &x : v)
    s += x + "\n";
  return s;
}

TEST(FxtValidator, AValidTraceFromWordsHasNoProblems) {
  auto process = [](uint64_t pid) {
    return arg(8, inl("process"), 0, padded("process") + Words{pid});
  };
  auto w = preamble() + thread_record(2, 10, 12) + kobj(1, inl("app"), 10, padded("app"), {}) +
           kobj(2, inl("main"), 11, padded("main"), {process(10)}) +
           kobj(2, inl("worker"), 12, padded("worker"), {process(10)}) +
           event(Ev().type(2).ts(100)) +                             // begin name on 11
           event(Ev().type(4).ts(110).extra({120})) +                // complete inside it
           event(Ev().type(8).ts(115).extra({7})) +                  // flow begins in it
           event(Ev().type(0).ts(130)) +                             // an instant
           event(Ev().type(9).ts(130).extra({7})) +                  // a step bound to it
           event(Ev().type(3).ts(140)) +                             // end name
           event(Ev().type(4).thread_ref(2).ts(150).extra({150})) +  // zero-length
           event(Ev().type(10).thread_ref(2).ts(150).extra({7})) +
           event(Ev().type(1).ts(150).args({arg(4, 2, 0, {3})}).extra({1}));
  auto records = read_fxt(bytes(w));
  EXPECT_EQ(joined(perfetto_problems(records)), "");
}

TEST(FxtValidator, WantsAnInitializationRecordFirst) {
  Trace t;
  t.records.erase(t.records.begin());
  EXPECT_TRUE(one_problem(t, {"does not start with an initialization record"}));
  EXPECT_EQ(perfetto_problems({}).size(), 1u);
}

TEST(FxtValidator, WantsAThreadKernelObjectInTheEventsProcess) {
  EXPECT_TRUE(one_problem(Trace().instant(5).instant(6),
                          {"offset 24", "pid=10 tid=11", "no thread kernel object"}));
  EXPECT_TRUE(one_problem(Trace().thread(99, 11).instant(5), {"another 'process'"}));
  EXPECT_TRUE(one_problem(Trace().thread(10, 11, 4).instant(5),
                          {"not a koid", "fuchsia_invalid_event_arg_type"}));
  Trace no_arg;
  no_arg.thread(10, 11).records.back().args.clear();
  EXPECT_TRUE(one_problem(no_arg.instant(5), {"has no 'process' argument"}));
  // Counters are process tracks: no thread object needed.
  EXPECT_TRUE(perfetto_problems(Trace().ev(1, 5, "c", 1).records).empty());
}

TEST(FxtValidator, BeginAndEndNest) {
  EXPECT_TRUE(
      perfetto_problems(
          Trace().thread(10, 11).begin(1, "a").begin(2, "b").end(3, "b").end(4, "a").records)
          .empty());
  EXPECT_TRUE(one_problem(Trace().thread(10, 11).end(5, "a"), {"end 'a' at 5", "without an open"}));
  EXPECT_TRUE(one_problem(Trace().thread(10, 11).begin(1, "a").end(3, "b"),
                          {"end 'b' at 3", "closes 'a' (begun at 1) from offset 40"}));
  EXPECT_TRUE(one_problem(Trace().thread(10, 11).begin(1, "a").begin(2, "b").end(3, "b"),
                          {"offset 40", "begin 'a' (begun at 1)", "never ended"}));
}

TEST(FxtValidator, BeginsAndEndsOfAThreadGoForwardInTheFile) {
  // Sorted, the slices would be fine; in the file the begin at 10 follows the end at 40.
  EXPECT_TRUE(
      one_problem(Trace().thread(10, 11).begin(30, "b").end(40, "b").begin(10, "a").end(20, "a"),
                  {"begin 'a' at 10", "goes back in time", "is at 40"}));
}

TEST(FxtValidator, CompleteEventsThatPerfettoDrops) {
  EXPECT_TRUE(one_problem(Trace().thread(10, 11).complete(20, 10), {"ends (10) before it starts"}));
  EXPECT_TRUE(one_problem(Trace().thread(10, 11).complete(10, 20, "p").complete(15, 25, "q"),
                          {"'q' [15, 25]", "partly overlaps 'p' [10, 20]"}));
  // A begin nested in a complete event must end inside it.
  auto problems = perfetto_problems(
      Trace().thread(10, 11).complete(10, 20, "p").begin(15, "c").end(25, "c").records);
  ASSERT_EQ(problems.size(), 2u) << joined(problems);
  EXPECT_NE(problems[0].find("misplaced_end_event"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("without an open begin"), std::string::npos) << problems[1];
}

TEST(FxtValidator, FlowPointsBindToTheInnermostOpenSlice) {
  // Inside a begin/end pair, a complete event, an instant at the same time.
  EXPECT_TRUE(perfetto_problems(Trace()
                                    .thread(10, 11)
                                    .begin(1, "a")
                                    .flow(kBegin, 2, 7)
                                    .complete(3, 5)
                                    .flow(kStep, 5, 7)
                                    .instant(8)
                                    .flow(kEnd, 8, 7)
                                    .end(9, "a")
                                    .records)
                  .empty());
  EXPECT_TRUE(one_problem(Trace().thread(10, 11).flow(kBegin, 2, 7),
                          {"flow_begin id=7 at 2", "flow_no_enclosing_slice"}));
  // The complete event has ended: Perfetto still binds the point to it.
  EXPECT_TRUE(one_problem(
      Trace().thread(10, 11).begin(1, "a").complete(2, 3).flow(kBegin, 4, 7).end(9, "a"),
      {"binds to 'c' [2, 3], which ended before it"}));
  // Equal timestamps keep file order: a point written before its slice is dropped.
  EXPECT_TRUE(one_problem(Trace().thread(10, 11).flow(kBegin, 5, 7).complete(5, 6),
                          {"flow_no_enclosing_slice"}));
  EXPECT_TRUE(
      perfetto_problems(Trace().thread(10, 11).complete(5, 6).flow(kBegin, 5, 7).records).empty());
  // Timestamps, not file order, decide what is open.
  EXPECT_TRUE(
      perfetto_problems(Trace().thread(10, 11).flow(kBegin, 5, 7).complete(4, 6).records).empty());
}

TEST(FxtValidator, FlowIdsOpenOnceAndCloseOnce) {
  auto t = [] { return Trace().thread(10, 11).begin(0, "a"); };
  EXPECT_TRUE(one_problem(t().flow(kBegin, 1, 7).flow(kBegin, 2, 7).end(9, "a"),
                          {"offset 72", "flow_duplicate_id"}));
  EXPECT_TRUE(one_problem(t().flow(kEnd, 1, 7).end(9, "a"), {"flow_end_without_start"}));
  EXPECT_TRUE(one_problem(t().flow(kStep, 1, 7).end(9, "a"), {"flow_step_without_start"}));
  EXPECT_TRUE(one_problem(t().flow(kBegin, 1, 7).flow(kEnd, 2, 7).flow(kEnd, 3, 7).end(9, "a"),
                          {"offset 88", "flow_end_without_start"}));
  // Reusing an id once its flow has ended is fine.
  EXPECT_TRUE(perfetto_problems(t().flow(kBegin, 1, 7)
                                    .flow(kEnd, 2, 7)
                                    .flow(kBegin, 3, 7)
                                    .flow(kEnd, 4, 7)
                                    .end(9, "a")
                                    .records)
                  .empty());
}

// Perfetto keys flows by id alone: a flow may end in another process.
TEST(FxtValidator, FlowIdsAreGlobal) {
  auto t = [] {
    Trace t;
    t.thread(10, 11).thread(20, 21).ev(2, 0, "a", 0, 10, 11).ev(2, 0, "b", 0, 20, 21);
    return t;
  };
  auto close = [](Trace t) {
    t.ev(3, 9, "a", 0, 10, 11).ev(3, 9, "b", 0, 20, 21);
    return t;
  };
  // Pid 20's end closes pid 10's flow.
  EXPECT_TRUE(
      perfetto_problems(close(t().flow(kBegin, 1, 7, 10, 11).flow(kEnd, 2, 7, 20, 21)).records)
          .empty());
  // One id begun in two processes at once: the second is a duplicate.
  auto problems = perfetto_problems(close(t().flow(kBegin, 1, 7, 10, 11)
                                              .flow(kBegin, 2, 7, 20, 21)
                                              .flow(kEnd, 3, 7, 10, 11)
                                              .flow(kEnd, 4, 7, 20, 21))
                                        .records);
  ASSERT_EQ(problems.size(), 2u) << joined(problems);
  EXPECT_NE(problems[0].find("flow_duplicate_id"), std::string::npos);
  EXPECT_NE(problems[1].find("flow_end_without_start"), std::string::npos);
  // One after the other is fine.
  EXPECT_TRUE(perfetto_problems(close(t().flow(kBegin, 1, 7, 10, 11)
                                          .flow(kEnd, 2, 7, 10, 11)
                                          .flow(kBegin, 3, 7, 20, 21)
                                          .flow(kEnd, 4, 7, 20, 21))
                                    .records)
                  .empty());
}

// Perfetto keys FXT async tracks by correlation id alone: slices nest
// there as on a thread, and an id is one track whatever process uses it.
TEST(FxtValidator, AsyncSlicesNestPerIdAcrossProcesses) {
  Trace t;
  t.thread(10, 11).thread(20, 21);
  t.ev(5, 1, "a", 1, 10, 11)
      .ev(5, 2, "a", 2, 10, 11)
      .ev(7, 5, "a", 1, 10, 11)
      .ev(7, 6, "a", 2, 10, 11);
  EXPECT_TRUE(perfetto_problems(t.records).empty()) << joined(perfetto_problems(t.records));
  Trace shared = t;
  shared.ev(5, 8, "b", 1, 20, 21).ev(7, 9, "b", 1, 20, 21);
  EXPECT_TRUE(one_problem(shared, {"shares its track", "by id alone"}));
  Trace open = t;
  open.ev(5, 8, "a", 3, 10, 11);
  EXPECT_TRUE(one_problem(open, {"async begin", "never ended"}));
}

TEST(FxtValidator, AtMost15ArgumentsAndNumericCounters) {
  Trace t;
  t.thread(10, 11).instant(1);
  t.records.back().args.resize(16);
  EXPECT_TRUE(one_problem(t, {"16 arguments"}));
  Trace c;
  c.ev(1, 1, "load", 1);
  FxtArgValue s;
  s.name = "v";
  s.type = 6;
  c.records.back().args.push_back(s);
  EXPECT_TRUE(one_problem(c, {"counter 'load' argument 'v' is not a number"}));
}

TEST(FxtValidator, UnknownEventTypesAndLongListsOfProblems) {
  EXPECT_TRUE(one_problem(Trace().ev(12, 1, "x"), {"unknown event type 12"}));
  Trace t;
  t.thread(10, 11);
  for (int i = 0; i < 150; i++)
    t.end(i, "x");
  auto problems = perfetto_problems(t.records);
  ASSERT_EQ(problems.size(), 101u);
  EXPECT_EQ(problems.back(), "... and 50 more problems");
}

TEST(FxtValidator, ProblemsOfAFile) {
  std::string path = ::testing::TempDir() + "/fxt_validator_test.fxt";
  std::FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::string b = bytes(Words{kMagic} + init() + Words{header(4, 0)});
  std::fwrite(b.data(), 1, b.size(), f);
  std::fclose(f);
  auto problems = mt::testing::perfetto_problems_in_file(path);
  std::remove(path.c_str());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], path + ": offset 24: record of size 0");
}

// ---- the writer, read back ----

TEST(FxtRoundTrip, WriterOutputReadsBackAndImportsCleanly) {
  std::string path = ::testing::TempDir() + "/fxt_round_trip.fxt";
  std::FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  {
    mt::FxtWriter w(f);
    w.process(10, "app");
    w.thread(10, 11, "main");
    w.thread(10, 12, "io-worker");
    w.begin(10, 11, 100, "syscall", "io_uring_enter", {mt::FxtArg::integer("fd", 3)});
    w.complete(10, 11, 110, 110, "io_uring", "submit",
               {mt::FxtArg::pointer("req", 0xffff888100001000ULL),
                mt::FxtArg::uinteger("user_data", 7), mt::FxtArg::string("op", "READV"),
                mt::FxtArg::boolean("linked", true), mt::FxtArg::koid("ring", 5)});
    w.flow(mt::FxtFlow::Begin, 10, 11, 110, "io_uring", "req", 0xffff888100001000ULL);
    w.end(10, 11, 120, "syscall", "io_uring_enter");
    w.complete(10, 12, 130, 140, "io_uring", "complete");
    w.flow(mt::FxtFlow::End, 10, 12, 135, "io_uring", "req", 0xffff888100001000ULL);
    w.instant(10, 11, 150, "io_uring", "cqring_wait", {mt::FxtArg::integer("min", -1)});
    w.counter(10, 11, 150, "io_uring", "inflight", 1, {mt::FxtArg::uinteger("n", 4)});
    w.flush();
  }
  std::fclose(f);
  std::FILE *in = std::fopen(path.c_str(), "rb");
  ASSERT_NE(in, nullptr);
  std::string b;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), in)) > 0)
    b.append(buf, n);
  std::fclose(in);
  std::remove(path.c_str());

  auto records = read_fxt(b);
  EXPECT_EQ(joined(perfetto_problems(records)), "");
  std::vector<std::string> events;
  for (const auto &r : records)
    if (r.type == 4 || r.type == 7)
      events.push_back(mt::fxt_record_text(r));
  EXPECT_EQ(events, (std::vector<std::string>{
                        R"(kobj process koid=10 name="app")",
                        R"(kobj thread koid=11 name="main" {process=10})",
                        R"(kobj thread koid=12 name="io-worker" {process=10})",
                        "100 begin pid=10 tid=11 syscall/io_uring_enter {fd=3}",
                        "110 complete pid=10 tid=11 io_uring/submit end_ts=110 "
                        "{req=0xffff888100001000, user_data=7, op=\"READV\", linked=true, ring=5}",
                        "110 flow_begin pid=10 tid=11 io_uring/req flow_id=18446612686365003776",
                        "120 end pid=10 tid=11 syscall/io_uring_enter",
                        "130 complete pid=10 tid=12 io_uring/complete end_ts=140",
                        "135 flow_end pid=10 tid=12 io_uring/req flow_id=18446612686365003776",
                        "150 instant pid=10 tid=11 io_uring/cqring_wait {min=-1}",
                        "150 counter pid=10 tid=11 io_uring/inflight counter_id=1 {n=4}",
                    }));
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records[0].type, 1);
  EXPECT_EQ(records[0].ticks_per_second, 1000000000u);
}

}  // namespace
