// Aggregations and script maps as text (the bcc shapes) and as JSON lines,
// from snapshots built by hand.
// Over 500 lines: one test per output shape (bcc text and JSON) of each aggregation kind.
#include "output/aggregation_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "common/json_writer.h"

namespace mt {

namespace {

FieldValue text(const std::string &s) {
  FieldValue v;
  v.kind = FieldKind::String;
  v.s = s;
  return v;
}

FieldValue unsigned_value(uint64_t u) {
  FieldValue v;
  v.kind = FieldKind::Unsigned;
  v.u = u;
  return v;
}

FieldValue signed_value(int64_t i) {
  FieldValue v;
  v.kind = FieldKind::Signed;
  v.i = i;
  return v;
}

AggregationDecl aggregation(const std::string &name, AggKind kind,
                            std::vector<std::string> keys = {}, const std::string &unit = "") {
  AggregationDecl d;
  d.name = name;
  d.kind = kind;
  d.unit = unit;
  for (const auto &k : keys)
    d.keys.push_back({k, {k, {}}});
  return d;
}

AggregationRow histogram_row(std::map<uint32_t, uint64_t> slots, std::vector<FieldValue> key = {}) {
  AggregationRow r;
  r.key = std::move(key);
  r.slots = std::move(slots);
  for (const auto &[slot, n] : r.slots)
    r.count += n;
  return r;
}

AggregationRow counted(uint64_t count, std::vector<FieldValue> key = {}) {
  AggregationRow r;
  r.key = std::move(key);
  r.count = count;
  return r;
}

AggregationRow stats(uint64_t count, int64_t sum, int64_t min, int64_t max,
                     std::vector<FieldValue> key = {}) {
  AggregationRow r = counted(count, std::move(key));
  r.sum = sum;
  r.min = min;
  r.max = max;
  return r;
}

AggregationSnapshot snapshot(const AggregationDecl &d, std::vector<AggregationRow> rows) {
  AggregationSnapshot s;
  s.decl = &d;
  s.rows = std::move(rows);
  return s;
}

// A star bar: `stars` of `width` filled.
std::string bar(int stars, int width = 40) {
  return "|" + std::string(stars, '*') + std::string(width - stars, ' ') + "|";
}

// Just enough of a JSON parser to tell a well-formed document.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string &s) : s_(s) {}
  bool valid() {
    bool ok = value();
    space();
    return ok && i_ == s_.size();
  }

 private:
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      i_++;
  }
  bool eat(char c) {
    space();
    if (i_ < s_.size() && s_[i_] == c) {
      i_++;
      return true;
    }
    return false;
  }
  bool string() {
    if (!eat('"'))
      return false;
    while (i_ < s_.size() && s_[i_] != '"') {
      unsigned char c = s_[i_++];
      if (c < 0x20 || c >= 0x80)
        return false;  // json_string escapes these
      if (c == '\\') {
        if (i_ >= s_.size())
          return false;
        char e = s_[i_++];
        if (e == 'u') {
          for (int k = 0; k < 4; k++)
            if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_++])))
              return false;
        } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return false;
        }
      }
    }
    return eat('"');
  }
  bool number() {
    space();
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-')
      i_++;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                              s_[i_] == 'e' || s_[i_] == 'E' || s_[i_] == '+'))
      i_++;
    return i_ > start && std::isdigit(static_cast<unsigned char>(s_[i_ - 1]));
  }
  bool word(const char *w) {
    space();
    size_t n = std::string(w).size();
    if (s_.compare(i_, n, w) != 0)
      return false;
    i_ += n;
    return true;
  }
  template <typename F>
  bool sequence(char close, F item) {
    if (eat(close))
      return true;
    do {
      if (!item())
        return false;
    } while (eat(','));
    return eat(close);
  }
  bool value() {
    space();
    if (i_ >= s_.size())
      return false;
    char c = s_[i_];
    if (c == '{') {
      i_++;
      return sequence('}', [&] { return string() && eat(':') && value(); });
    }
    if (c == '[') {
      i_++;
      return sequence(']', [&] { return value(); });
    }
    if (c == '"')
      return string();
    if (c == 't')
      return word("true");
    if (c == 'f')
      return word("false");
    if (c == 'n')
      return word("null");
    return number();
  }

  const std::string &s_;
  size_t i_ = 0;
};

bool valid_json(const std::string &s) {
  return JsonChecker(s).valid();
}

}  // namespace

TEST(AggregationFormat, JsonCheckerTellsWellFormedDocuments) {
  EXPECT_TRUE(valid_json(R"({"a":[1,-2,{"b":"x\"y"}],"c":true,"d":null})"));
  EXPECT_FALSE(valid_json(R"({"a":1,})"));
  EXPECT_FALSE(valid_json(R"({"a":1)"));
  EXPECT_FALSE(valid_json("\"a\nb\""));
}

TEST(AggregationFormat, Log2HistogramInTheBccLayout) {
  AggregationDecl d = aggregation("lat", AggKind::Log2Hist, {}, "us");
  std::string out = aggregation_text(snapshot(d, {histogram_row({{0, 1}, {1, 4}, {3, 8}})}));
  EXPECT_EQ(out,
            "@lat:\n"
            "     usecs               : count    distribution\n"
            "         0 -> 1          : 1        " +
                bar(5) +
                "\n"
                "         2 -> 3          : 4        " +
                bar(20) +
                "\n"
                "         4 -> 7          : 0        " +
                bar(0) +
                "\n"
                "         8 -> 15         : 8        " +
                bar(40) + "\n");
}

TEST(AggregationFormat, Log2HistogramStopsAtTheLastUsedSlot) {
  AggregationDecl d = aggregation("sizes", AggKind::Log2Hist, {}, "bytes");
  std::string out = aggregation_text(snapshot(d, {histogram_row({{10, 3}})}));
  EXPECT_NE(out.find("     bytes               : count    distribution\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\n         0 -> 1          : 0        " + bar(0) + "\n"), std::string::npos);
  EXPECT_NE(out.find("\n      1024 -> 2047       : 3        " + bar(40) + "\n"), std::string::npos);
  EXPECT_EQ(out.find("2048"), std::string::npos);
  // Slots 0..10, one line each, after the name and the header.
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2 + 11);
}

TEST(AggregationFormat, Log2HistogramWithNegativeValues) {
  AggregationDecl d = aggregation("delta", AggKind::Log2Hist);
  std::string out = aggregation_text(snapshot(d, {histogram_row({{64, 2}, {1, 3}})}));
  EXPECT_EQ(out,
            "@delta:\n"
            "     value               : count    distribution\n"
            "       < 0               : 2        " +
                bar(26) +
                "\n"
                "         0 -> 1          : 0        " +
                bar(0) +
                "\n"
                "         2 -> 3          : 3        " +
                bar(40) + "\n");
}

TEST(AggregationFormat, Log2HistogramOfOnlyNegativeValues) {
  AggregationDecl d = aggregation("delta", AggKind::Log2Hist);
  EXPECT_EQ(aggregation_text(snapshot(d, {histogram_row({{64, 7}})})),
            "@delta:\n"
            "     value               : count    distribution\n"
            "       < 0               : 7        " +
                bar(40) + "\n");
}

TEST(AggregationFormat, KeyedHistogramsGetOneSectionPerKey) {
  AggregationDecl d = aggregation("lat", AggKind::Log2Hist, {"comm", "disk"}, "ms");
  std::string out =
      aggregation_text(snapshot(d, {histogram_row({{1, 2}}, {text("dd"), unsigned_value(3)}),
                                    histogram_row({{0, 5}}, {text("fio"), unsigned_value(8)})}));
  EXPECT_EQ(out,
            "@lat:\n"
            "\n"
            "comm = 'dd', disk = 3\n"
            "     msecs               : count    distribution\n"
            "         0 -> 1          : 0        " +
                bar(0) +
                "\n"
                "         2 -> 3          : 2        " +
                bar(40) +
                "\n"
                "\n"
                "comm = 'fio', disk = 8\n"
                "     msecs               : count    distribution\n"
                "         0 -> 1          : 5        " +
                bar(40) + "\n");
}

TEST(AggregationFormat, LinearHistogramWithBelowAndAboveRows) {
  AggregationDecl d = aggregation("res", AggKind::LinearHist);
  d.lmin = 10;
  d.lmax = 40;
  d.lstep = 10;
  std::string out =
      aggregation_text(snapshot(d, {histogram_row({{0, 2}, {1, 5}, {3, 1}, {4, 4}})}));
  EXPECT_EQ(out,
            "@res:\n"
            "     value         : count     distribution\n"
            "        < 10       : 2        " +
                bar(16) +
                "\n"
                "        10         : 5        " +
                bar(40) +
                "\n"
                "        20         : 0        " +
                bar(0) +
                "\n"
                "        30         : 1        " +
                bar(8) +
                "\n"
                "        >= 40      : 4        " +
                bar(32) + "\n");
}

TEST(AggregationFormat, LinearHistogramStartsAtTheFirstUsedSlot) {
  AggregationDecl d = aggregation("res", AggKind::LinearHist, {}, "us");
  d.lmin = 0;
  d.lmax = 100;
  d.lstep = 10;
  EXPECT_EQ(aggregation_text(snapshot(d, {histogram_row({{3, 6}, {5, 3}})})),
            "@res:\n"
            "     usecs         : count     distribution\n"
            "        20         : 6        " +
                bar(40) +
                "\n"
                "        30         : 0        " +
                bar(0) +
                "\n"
                "        40         : 3        " +
                bar(20) + "\n");
}

TEST(AggregationFormat, HistogramBucketsCarryTheirBounds) {
  AggregationDecl lin = aggregation("res", AggKind::LinearHist);
  lin.lmin = 0;
  lin.lmax = 25;  // the last step is cut short by max
  lin.lstep = 10;
  auto buckets = histogram_buckets(lin, histogram_row({{0, 1}, {3, 2}, {4, 3}}));
  ASSERT_EQ(buckets.size(), 5u);
  EXPECT_EQ(buckets[0].label, "< 0");
  EXPECT_FALSE(buckets[0].has_low);
  EXPECT_EQ(buckets[0].high, -1);
  EXPECT_EQ(buckets[3].label, "20");
  EXPECT_EQ(buckets[3].low, 20);
  EXPECT_EQ(buckets[3].high, 24);
  EXPECT_EQ(buckets[3].count, 2u);
  EXPECT_EQ(buckets[4].label, ">= 25");
  EXPECT_FALSE(buckets[4].has_high);
  EXPECT_EQ(buckets[4].low, 25);

  AggregationDecl log2 = aggregation("lat", AggKind::Log2Hist);
  buckets = histogram_buckets(log2, histogram_row({{2, 1}}));
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].label, "0 -> 1");
  EXPECT_EQ(buckets[2].label, "4 -> 7");
  EXPECT_EQ(buckets[2].low, 4);
  EXPECT_EQ(buckets[2].high, 7);
  EXPECT_TRUE(histogram_buckets(log2, AggregationRow{}).empty());
}

TEST(AggregationFormat, KeyedCountsSortAscendingByValueUnderAnUppercaseHeader) {
  AggregationDecl d = aggregation("io", AggKind::Count, {"comm", "disk"});
  std::string out = aggregation_text(snapshot(
      d, {counted(10, {text("a"), unsigned_value(3)}), counted(7, {text("dd"), unsigned_value(1)}),
          counted(3, {text("postgres"), unsigned_value(2)}),
          counted(7, {text("fio"), unsigned_value(12)})}));
  // Equal values keep their (key) order.
  EXPECT_EQ(out,
            "@io:\n"
            "COMM      DISK  COUNT\n"
            "postgres  2     3\n"
            "dd        1     7\n"
            "fio       12    7\n"
            "a         3     10\n");
}

TEST(AggregationFormat, KeyedSumsHeadTheirUnit) {
  AggregationDecl d = aggregation("bytes", AggKind::Sum, {"pid"}, "bytes");
  EXPECT_EQ(aggregation_text(snapshot(d, {stats(2, 8192, 4096, 4096, {unsigned_value(1)}),
                                          stats(1, -5, -5, -5, {unsigned_value(22)})})),
            "@bytes:\n"
            "PID  SUM(bytes)\n"
            "22   -5\n"
            "1    8192\n");
}

TEST(AggregationFormat, UnkeyedValuesOnTheNameLine) {
  AggregationDecl count = aggregation("count", AggKind::Count);
  EXPECT_EQ(aggregation_text(snapshot(count, {counted(5)})), "@count: 5\n");
  EXPECT_EQ(aggregation_text(snapshot(count, {})), "@count: 0\n");
  AggregationDecl avg = aggregation("avg", AggKind::Avg, {}, "us");
  EXPECT_EQ(aggregation_text(snapshot(avg, {stats(4, 10, 1, 4)})), "@avg: 2\n");
  AggregationDecl max = aggregation("max", AggKind::Max);
  EXPECT_EQ(aggregation_text(snapshot(max, {stats(4, 10, -3, 9)})), "@max: 9\n");
  AggregationDecl min = aggregation("min", AggKind::Min);
  EXPECT_EQ(aggregation_text(snapshot(min, {stats(4, 10, -3, 9)})), "@min: -3\n");
}

TEST(AggregationFormat, StatsLine) {
  AggregationDecl d = aggregation("st", AggKind::Stats, {}, "us");
  EXPECT_EQ(aggregation_text(snapshot(d, {stats(4, 100, 5, 60)})),
            "@st: COUNT 4, AVG(usecs) 25, TOTAL(usecs) 100, MIN(usecs) 5, MAX(usecs) 60\n");
}

TEST(AggregationFormat, KeyedStatsTable) {
  AggregationDecl d = aggregation("st", AggKind::Stats, {"op"});
  EXPECT_EQ(aggregation_text(snapshot(
                d, {stats(3, 30, 1, 20, {text("read")}), stats(1, 7, 7, 7, {text("write")})})),
            "@st:\n"
            "OP     COUNT  AVG  TOTAL  MIN  MAX\n"
            "write  1      7    7      7    7\n"
            "read   3      10   30     1    20\n");
}

TEST(AggregationFormat, CountAsJson) {
  AggregationDecl keyed = aggregation("io", AggKind::Count, {"comm", "disk"});
  std::string json =
      aggregation_json(snapshot(keyed, {counted(7, {text("dd"), unsigned_value(1)}),
                                        counted(3, {text("fio"), unsigned_value(2)})}));
  EXPECT_EQ(json, R"({"type":"map","data":{"name":"io","kind":"count","rows":[)"
                  R"({"comm":"dd","disk":1,"value":7},{"comm":"fio","disk":2,"value":3}]}})");
  EXPECT_TRUE(valid_json(json));

  AggregationDecl plain = aggregation("count", AggKind::Count);
  json = aggregation_json(snapshot(plain, {counted(5)}));
  EXPECT_EQ(json, R"({"type":"map","data":{"name":"count","kind":"count","rows":[{"value":5}]}})");
  EXPECT_TRUE(valid_json(json));
}

TEST(AggregationFormat, SumMinMaxAvgAsJson) {
  AggregationRow row = stats(4, -10, -7, 3, {signed_value(-1)});
  for (auto [kind, value] : {std::pair{AggKind::Sum, "-10"}, std::pair{AggKind::Min, "-7"},
                             std::pair{AggKind::Max, "3"}, std::pair{AggKind::Avg, "-2"}}) {
    AggregationDecl d = aggregation("v", kind, {"k"}, "ns");
    std::string json = aggregation_json(snapshot(d, {row}));
    EXPECT_EQ(json, std::string(R"({"type":"map","data":{"name":"v","kind":")") +
                        agg_kind_name(kind) + R"(","unit":"nsecs","rows":[{"k":-1,"value":)" +
                        value + "}]}}");
    EXPECT_TRUE(valid_json(json)) << json;
  }
}

TEST(AggregationFormat, StatsAsJson) {
  AggregationDecl d = aggregation("st", AggKind::Stats, {}, "us");
  std::string json = aggregation_json(snapshot(d, {stats(4, 100, 5, 60)}));
  EXPECT_EQ(json, R"({"type":"stats","data":{"name":"st","kind":"stats","unit":"usecs","rows":[)"
                  R"({"count":4,"avg":25,"sum":100,"min":5,"max":60}]}})");
  EXPECT_TRUE(valid_json(json));
}

TEST(AggregationFormat, Log2HistogramAsJson) {
  AggregationDecl d = aggregation("lat", AggKind::Log2Hist, {"comm"}, "us");
  AggregationSnapshot snap = snapshot(d, {histogram_row({{0, 1}, {2, 4}}, {text("dd")})});
  snap.dropped = 3;
  std::string json = aggregation_json(snap);
  EXPECT_EQ(json, R"({"type":"hist","data":{"name":"lat","kind":"hist","unit":"usecs","rows":[)"
                  R"({"comm":"dd","count":5,"buckets":[{"min":0,"max":1,"count":1},)"
                  R"({"min":2,"max":3,"count":0},{"min":4,"max":7,"count":4}]}],"dropped":3}})");
  EXPECT_TRUE(valid_json(json));
}

TEST(AggregationFormat, NegativeLog2BucketAsJsonIsBoundedAbove) {
  // "< 0" holds values up to -1, as the linear "< min" bucket says max = min - 1;
  // a bucket with neither bound would read as "any value".
  AggregationDecl d = aggregation("delta", AggKind::Log2Hist);
  std::string json = aggregation_json(snapshot(d, {histogram_row({{64, 2}, {0, 1}})}));
  EXPECT_EQ(json,
            R"({"type":"hist","data":{"name":"delta","kind":"hist","rows":[{"count":3,"buckets":[)"
            R"({"max":-1,"count":2},{"min":0,"max":1,"count":1}]}]}})");
  EXPECT_TRUE(valid_json(json));
}

TEST(AggregationFormat, LinearHistogramAsJson) {
  AggregationDecl d = aggregation("res", AggKind::LinearHist);
  d.lmin = 10;
  d.lmax = 40;
  d.lstep = 10;
  std::string json = aggregation_json(snapshot(d, {histogram_row({{0, 2}, {1, 5}, {4, 4}})}));
  EXPECT_EQ(json,
            R"({"type":"hist","data":{"name":"res","kind":"lhist","rows":[{"count":11,"buckets":[)"
            R"({"max":9,"count":2},{"min":10,"max":19,"count":5},{"min":20,"max":29,"count":0},)"
            R"({"min":30,"max":39,"count":0},{"min":40,"count":4}]}]}})");
  EXPECT_TRUE(valid_json(json));
}

TEST(AggregationFormat, JsonEscapesKeyStrings) {
  AggregationDecl d = aggregation("io", AggKind::Count, {"comm"});
  std::string json = aggregation_json(snapshot(d, {counted(1, {text("a\"b\\c\n")})}));
  EXPECT_EQ(
      json,
      R"({"type":"map","data":{"name":"io","kind":"count","rows":[{"comm":"a\"b\\c\n","value":1}]}})");
  EXPECT_TRUE(valid_json(json));
}

TEST(JsonString, EscapesQuotesAndBackslashes) {
  EXPECT_EQ(json_string("plain"), "\"plain\"");
  EXPECT_EQ(json_string(""), "\"\"");
  EXPECT_EQ(json_string("say \"hi\""), R"("say \"hi\"")");
  EXPECT_EQ(json_string("C:\\dir\\"), R"("C:\\dir\\")");
}

TEST(JsonString, EscapesNewlineAndTab) {
  EXPECT_EQ(json_string("a\nb\tc"), R"("a\nb\tc")");
}

TEST(JsonString, EscapesOtherControlBytesAsUnicode) {
  EXPECT_EQ(json_string(std::string("\x01\x1f\r", 3)), R"("\u0001\u001f\u000d")");
  EXPECT_EQ(json_string(std::string("a\0b", 3)), R"("a\u0000b")");
  EXPECT_EQ(json_string("\x7f"), R"("\u007f")");
}

TEST(JsonString, KeepsValidUtf8AndEscapesOtherBytes) {
  // Kernel strings are bytes: valid UTF-8 passes, anything else is escaped.
  EXPECT_EQ(json_string("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(json_string("\xff"), R"("\u00ff")");
  EXPECT_EQ(json_string("caf\xc3"), R"("caf\u00c3")");  // cut short
  EXPECT_TRUE(valid_json(json_string("\xff\x80 \x01\"\\")));
}

namespace {

RecordLayout struct_layout(std::vector<RecordField> fields, uint32_t size) {
  RecordLayout l;
  l.size = size;
  l.fields = std::move(fields);
  return l;
}

}  // namespace

TEST(MapFormat, StructKeyAsTextAndJson) {
  MapDecl decl;
  decl.name = "inflight";
  MapSnapshot snap;
  snap.decl = &decl;
  snap.key = struct_layout({{"pid", 0, 4, FieldKind::Unsigned},
                            {"res", 4, 4, FieldKind::Signed},
                            {"comm", 8, 16, FieldKind::String}},
                           24);
  snap.value = struct_layout({{"", 0, 8, FieldKind::Unsigned}}, 8);
  snap.entries.push_back({{unsigned_value(42), signed_value(-5), text("dd")}, {unsigned_value(3)}});
  snap.entries.push_back({{unsigned_value(7), signed_value(0), text("fio")}, {unsigned_value(1)}});
  EXPECT_EQ(map_text(snap), "@inflight:\n  [42, -5, dd]: 3\n  [7, 0, fio]: 1\n");
  std::string json = map_json(snap);
  EXPECT_EQ(json, R"({"type":"map","data":{"name":"inflight","entries":[)"
                  R"({"key":{"pid":42,"res":-5,"comm":"dd"},"value":3},)"
                  R"({"key":{"pid":7,"res":0,"comm":"fio"},"value":1}]}})");
  EXPECT_TRUE(valid_json(json));
}

TEST(MapFormat, ScalarKeyAndStructValue) {
  MapDecl decl;
  decl.name = "last";
  MapSnapshot snap;
  snap.decl = &decl;
  snap.key = struct_layout({{"", 0, 4, FieldKind::Unsigned}}, 4);
  snap.value =
      struct_layout({{"ts", 0, 8, FieldKind::Unsigned}, {"p", 8, 8, FieldKind::Pointer}}, 16);
  FieldValue p;
  p.kind = FieldKind::Pointer;
  p.u = 0xff00;
  snap.entries.push_back({{unsigned_value(9)}, {unsigned_value(100), p}});
  EXPECT_EQ(map_text(snap), "@last:\n  [9]: 100, 0xff00\n");
  EXPECT_EQ(
      map_json(snap),
      R"({"type":"map","data":{"name":"last","entries":[{"key":9,"value":{"ts":100,"p":"0xff00"}}]}})");
}

TEST(MapFormat, EmptyMap) {
  MapDecl decl;
  decl.name = "m";
  MapSnapshot snap;
  snap.decl = &decl;
  EXPECT_EQ(map_text(snap), "@m:\n");
  EXPECT_EQ(map_json(snap), R"({"type":"map","data":{"name":"m","entries":[]}})");
}

}  // namespace mt

namespace mt {

TEST(Units, TimeUnitsScaleNanosecondsAndOthersOnlyLabel) {
  EXPECT_EQ(unit_divisor("ns"), 1u);
  EXPECT_EQ(unit_divisor("us"), 1000u);
  EXPECT_EQ(unit_divisor("ms"), 1000000u);
  EXPECT_EQ(unit_divisor("s"), 1000000000u);
  EXPECT_EQ(unit_divisor("bytes"), 1u);
  EXPECT_EQ(unit_label("ns"), "nsecs");
  EXPECT_EQ(unit_label("us"), "usecs");
  EXPECT_EQ(unit_label("ms"), "msecs");
  EXPECT_EQ(unit_label("s"), "secs");
  EXPECT_EQ(unit_label("bytes"), "bytes");
  EXPECT_EQ(unit_label(""), "value");
}

}  // namespace mt
