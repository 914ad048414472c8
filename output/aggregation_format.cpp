// Renders aggregation and map snapshots as bcc-style tables and histograms, or as JSON.
#include "output/aggregation_format.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "common/json_writer.h"
#include "output/output.h"

namespace mt {

namespace {

constexpr uint32_t kNegativeSlot = 64;  // mt_log2_slot() of values below 0

std::string upper(std::string s) {
  for (auto &c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string number(int64_t v) {
  return std::to_string(v);
}

// The value columns of a row, by kind: (header, text).
std::vector<std::pair<std::string, std::string>> value_columns(const AggregationDecl &d,
                                                               const AggregationRow &r) {
  std::string unit = d.unit.empty() ? "" : "(" + unit_label(d.unit) + ")";
  int64_t avg = r.count ? r.sum / static_cast<int64_t>(r.count) : 0;
  switch (d.kind) {
    case AggKind::Count: return {{"COUNT", std::to_string(r.count)}};
    case AggKind::Sum: return {{"SUM" + unit, number(r.sum)}};
    case AggKind::Min: return {{"MIN" + unit, number(r.min)}};
    case AggKind::Max: return {{"MAX" + unit, number(r.max)}};
    case AggKind::Avg: return {{"AVG" + unit, number(avg)}};
    default:
      return {{"COUNT", std::to_string(r.count)},
              {"AVG" + unit, number(avg)},
              {"TOTAL" + unit, number(r.sum)},
              {"MIN" + unit, number(r.min)},
              {"MAX" + unit, number(r.max)}};
  }
}

// The number a keyed table is sorted by: smallest first, like bpftrace.
int64_t sort_value(const AggregationDecl &d, const AggregationRow &r) {
  switch (d.kind) {
    case AggKind::Sum: return r.sum;
    case AggKind::Min: return r.min;
    case AggKind::Max: return r.max;
    case AggKind::Avg: return r.count ? r.sum / static_cast<int64_t>(r.count) : 0;
    default: return static_cast<int64_t>(r.count);
  }
}

// Columns padded to their widest cell, two spaces apart.
std::string table(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width;
  for (const auto &row : rows)
    for (size_t i = 0; i < row.size(); i++) {
      width.resize(std::max(width.size(), row.size()));
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto &row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); i++)
      line += row[i] + (i + 1 < row.size() ? std::string(width[i] - row[i].size() + 2, ' ') : "");
    out += line + "\n";
  }
  return out;
}

std::string stars(uint64_t count, uint64_t max, int width) {
  int n = max ? static_cast<int>(count * width / max) : 0;
  return std::string(n, '*') + std::string(width - n, ' ');
}

// One histogram in the bcc layout.
std::string histogram_text(const AggregationDecl &d, const AggregationRow &row) {
  std::vector<HistogramBucket> buckets = histogram_buckets(d, row);
  uint64_t max = 0;
  for (const auto &b : buckets)
    max = std::max(max, b.count);
  std::string label = unit_label(d.unit);
  char line[256];
  std::string out;
  if (d.kind == AggKind::Log2Hist) {
    bool wide = !buckets.empty() && buckets.back().low > (int64_t{1} << 32);  // past slot 32
    int width = wide ? 20 : 10, bar = wide ? 20 : 40;
    std::snprintf(line, sizeof(line), "%*s%-*s : count    distribution\n", wide ? 15 : 5, "",
                  wide ? 29 : 19, label.c_str());
    out += line;
    for (const auto &b : buckets) {
      if (b.has_low && b.has_high)
        std::snprintf(line, sizeof(line), "%*" PRId64 " -> %-*" PRId64 " : %-8" PRIu64 " |%s|\n",
                      width, b.low, width, b.high, b.count, stars(b.count, max, bar).c_str());
      else
        std::snprintf(line, sizeof(line), "%*s    %-*s : %-8" PRIu64 " |%s|\n", width,
                      b.label.c_str(), width, "", b.count, stars(b.count, max, bar).c_str());
      out += line;
    }
  } else {
    std::snprintf(line, sizeof(line), "     %-13s : count     distribution\n", label.c_str());
    out += line;
    for (const auto &b : buckets) {
      std::snprintf(line, sizeof(line), "        %-10s : %-8" PRIu64 " |%s|\n", b.label.c_str(),
                    b.count, stars(b.count, max, 40).c_str());
      out += line;
    }
  }
  return out;
}

bool has_stack_key(const AggregationRow &row) {
  return std::any_of(row.key.begin(), row.key.end(),
                     [](const FieldValue &k) { return k.kind == FieldKind::Stack; });
}

// A row keyed by a stack, as bpftrace prints one: @name[
//         frame
//         ...
// , comm]: value
std::string stack_row_text(const AggregationDecl &d, const AggregationRow &row) {
  std::string out = "@" + d.name + "[";
  for (size_t i = 0; i < row.key.size(); i++)
    out += (i ? ", " : "") + field_text(row.key[i]);
  std::string values;
  for (const auto &[header, text] : value_columns(d, row))
    values += (values.empty() ? "" : ", ") + text;
  return out + "]: " + values + "\n";
}

std::string key_section(const AggregationDecl &d, const AggregationRow &row) {
  std::string out;
  for (size_t i = 0; i < d.keys.size() && i < row.key.size(); i++) {
    bool text = row.key[i].kind == FieldKind::String;
    out += (i ? ", " : "") + d.keys[i].name + " = " + (text ? "'" : "") + field_text(row.key[i]) +
           (text ? "'" : "");
  }
  return out;
}

void json_key_fields(const AggregationDecl &d, const AggregationRow &row, JsonWriter &json) {
  for (size_t i = 0; i < d.keys.size() && i < row.key.size(); i++)
    json.key(d.keys[i].name).raw(field_json(row.key[i]));
}

// A decoded key or value: a scalar, or an object for a struct.
void json_fields(const RecordLayout &layout, const std::vector<FieldValue> &values,
                 JsonWriter &json) {
  if (layout.fields.size() == 1 && layout.fields[0].name.empty()) {
    json.raw(field_json(values[0]));
    return;
  }
  json.object();
  for (size_t i = 0; i < values.size(); i++)
    json.key(layout.fields[i].name).raw(field_json(values[i]));
  json.end();
}

std::string text_fields(const std::vector<FieldValue> &values) {
  std::string out;
  for (size_t i = 0; i < values.size(); i++)
    out += (i ? ", " : "") + field_text(values[i]);
  return out;
}

// Rows by value, smallest first, like bpftrace.
std::vector<const AggregationRow *> sorted_rows(const AggregationSnapshot &snap) {
  std::vector<const AggregationRow *> rows;
  for (const auto &r : snap.rows)
    rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [&](auto *a, auto *b) {
    return sort_value(*snap.decl, *a) < sort_value(*snap.decl, *b);
  });
  return rows;
}

// A part of a folded line: no ';' (which parts frames), nothing that ends
// or breaks the line.
std::string folded_part(std::string text) {
  for (char &c : text)
    if (c == ';')
      c = ':';
    else if (static_cast<unsigned char>(c) < 32)
      c = ' ';
  return text;
}

// A frame without its offset, so that flame graphs merge calls from
// anywhere in a function.
std::string without_offset(std::string frame) {
  size_t plus = frame.rfind('+');
  if (plus != std::string::npos && plus + 1 < frame.size() &&
      frame.find_first_not_of("0123456789", plus + 1) == std::string::npos)
    frame.resize(plus);
  return frame;
}

}  // namespace

std::string aggregation_folded(const AggregationSnapshot &snap) {
  std::string out;
  for (const auto *r : sorted_rows(snap)) {
    // Other keys first (the comm, as the bcc tools fold), then each stack
    // root first.
    std::vector<std::string> parts;
    for (const auto &k : r->key)
      if (k.kind != FieldKind::Stack)
        parts.push_back(folded_part(field_text(k)));
    for (const auto &k : r->key)
      if (k.kind == FieldKind::Stack) {
        auto frames = stack_frames(k.s);
        for (auto f = frames.rbegin(); f != frames.rend(); ++f)
          parts.push_back(folded_part(without_offset(*f)));
      }
    std::string line;
    for (const auto &p : parts)
      line += (line.empty() ? "" : ";") + p;
    out += (line.empty() ? snap.decl->name : line) + " " +
           std::to_string(sort_value(*snap.decl, *r)) + "\n";
  }
  return out;
}

std::vector<HistogramBucket> histogram_buckets(const AggregationDecl &d,
                                               const AggregationRow &row) {
  std::vector<HistogramBucket> out;
  if (row.slots.empty())
    return out;
  if (d.kind == AggKind::Log2Hist) {
    if (auto negative = row.slots.find(kNegativeSlot); negative != row.slots.end())
      out.push_back({"< 0", false, true, 0, -1, negative->second});
    uint32_t last = 0;
    for (const auto &[slot, n] : row.slots)
      if (slot != kNegativeSlot)
        last = std::max(last, slot);
    if (out.size() == row.slots.size())
      return out;
    for (uint32_t slot = 0; slot <= last; slot++) {
      int64_t low = slot ? int64_t{1} << slot : 0;
      int64_t high = slot == 63 ? INT64_MAX : (int64_t{2} << slot) - 1;
      auto it = row.slots.find(slot);
      out.push_back({number(low) + " -> " + number(high), true, true, low, high,
                     it == row.slots.end() ? 0 : it->second});
    }
    return out;
  }
  uint32_t steps = static_cast<uint32_t>((d.lmax - d.lmin + d.lstep - 1) / d.lstep);
  uint32_t first = row.slots.begin()->first, last = row.slots.rbegin()->first;
  for (uint32_t slot = first; slot <= last; slot++) {
    auto it = row.slots.find(slot);
    uint64_t n = it == row.slots.end() ? 0 : it->second;
    if (slot == 0)
      out.push_back({"< " + number(d.lmin), false, true, 0, d.lmin - 1, n});
    else if (slot > steps)
      out.push_back({">= " + number(d.lmax), true, false, d.lmax, 0, n});
    else {
      int64_t low = d.lmin + (slot - 1) * d.lstep;
      out.push_back({number(low), true, true, low, std::min(low + d.lstep, d.lmax) - 1, n});
    }
  }
  return out;
}

std::string aggregation_text(const AggregationSnapshot &snap) {
  const AggregationDecl &d = *snap.decl;
  std::string out = "@" + d.name + ":";
  if (is_histogram(d.kind)) {
    out += "\n";
    for (const auto &row : snap.rows) {
      if (!d.keys.empty())
        out += "\n" + key_section(d, row) + "\n";
      out += histogram_text(d, row);
    }
    return out;
  }
  if (d.keys.empty()) {
    AggregationRow empty;
    const AggregationRow &row = snap.rows.empty() ? empty : snap.rows[0];
    auto columns = value_columns(d, row);
    if (columns.size() == 1)
      return out + " " + columns[0].second + "\n";
    std::string parts;
    for (const auto &[header, text] : columns)
      parts += (parts.empty() ? " " : ", ") + header + " " + text;
    return out + parts + "\n";
  }
  std::vector<const AggregationRow *> rows = sorted_rows(snap);
  if (!rows.empty() && has_stack_key(*rows[0])) {
    out += "\n";
    for (const auto *r : rows)
      out += stack_row_text(d, *r);
    return out;
  }
  std::vector<std::vector<std::string>> cells(1);
  for (const auto &k : d.keys)
    cells[0].push_back(upper(k.name));
  for (const auto &[header, text] : value_columns(d, AggregationRow{}))
    cells[0].push_back(header);
  for (const auto *r : rows) {
    std::vector<std::string> line;
    for (const auto &k : r->key)
      line.push_back(field_text(k));
    for (const auto &[header, text] : value_columns(d, *r))
      line.push_back(text);
    cells.push_back(line);
  }
  return out + "\n" + table(cells);
}

std::string aggregation_json(const AggregationSnapshot &snap) {
  const AggregationDecl &d = *snap.decl;
  const char *type = is_histogram(d.kind) ? "hist" : d.kind == AggKind::Stats ? "stats" : "map";
  JsonWriter json;
  json.object().key("name").str(d.name).key("kind").str(agg_kind_name(d.kind));
  if (!d.unit.empty())
    json.key("unit").str(unit_label(d.unit));
  json.key("rows").array();
  for (const AggregationRow &r : snap.rows) {
    json.object();
    json_key_fields(d, r, json);
    int64_t avg = r.count ? r.sum / static_cast<int64_t>(r.count) : 0;
    switch (d.kind) {
      case AggKind::Count: json.key("value").num(r.count); break;
      case AggKind::Sum: json.key("value").num(r.sum); break;
      case AggKind::Min: json.key("value").num(r.min); break;
      case AggKind::Max: json.key("value").num(r.max); break;
      case AggKind::Avg: json.key("value").num(avg); break;
      case AggKind::Stats:
        json.key("count").num(r.count).key("avg").num(avg).key("sum").num(r.sum);
        json.key("min").num(r.min).key("max").num(r.max);
        break;
      default: {
        json.key("count").num(r.count).key("buckets").array();
        for (const auto &bucket : histogram_buckets(d, r)) {
          json.object();
          if (bucket.has_low)
            json.key("min").num(bucket.low);
          if (bucket.has_high)
            json.key("max").num(bucket.high);
          json.key("count").num(bucket.count).end();
        }
        json.end();
      }
    }
    json.end();
  }
  json.end();
  if (snap.dropped)
    json.key("dropped").num(snap.dropped);
  return json_message(type, json.end().text());
}

std::string map_text(const MapSnapshot &snap) {
  std::string out = "@" + snap.decl->name + ":\n";
  for (const auto &e : snap.entries)
    out += "  [" + text_fields(e.key) + "]: " + text_fields(e.value) + "\n";
  return out;
}

std::string map_json(const MapSnapshot &snap) {
  JsonWriter json;
  json.object().key("name").str(snap.decl->name).key("entries").array();
  for (const auto &entry : snap.entries) {
    json.object().key("key");
    json_fields(snap.key, entry.key, json);
    json.key("value");
    json_fields(snap.value, entry.value, json);
    json.end();
  }
  return json_message("map", json.end().end().text());
}

}  // namespace mt
