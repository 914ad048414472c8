// Writes every field of a declaration, in order, and digests it. Each
// struct is taken apart into all its fields at once: a field added to it
// breaks the build here until it is written too.
#include "common/declaration_fingerprint.h"

#include "common/field_codec.h"
#include "common/sha256.h"

namespace mt {

namespace {

void put(FieldWriter &w, const ScriptLocation &l) {
  const auto &[file, line, column] = l;
  w.str(file).num(line).num(column);
}

void put(FieldWriter &w, const Expression &e) {
  const auto &[text, where] = e;
  w.str(text);
  put(w, where);
}

void put(FieldWriter &w, const Capture &c) {
  const auto &[name, expr, is_string, string_size, c_type, string_memory, stack, stack_depth] = c;
  w.str(name);
  put(w, expr);
  w.num(is_string).num(string_size).str(c_type).num(static_cast<int>(string_memory));
  w.num(static_cast<int>(stack)).num(stack_depth);
}

void put(FieldWriter &w, const std::vector<std::pair<std::string, std::string>> &fields) {
  w.num(static_cast<int64_t>(fields.size()));
  for (const auto &[name, type] : fields)
    w.str(name).str(type);
}

void put(FieldWriter &w, const Param &p) {
  const auto &[name, short_name, positional, type, help, default_text, choices, value, where] = p;
  const auto &[number, text] = value;
  w.str(name).str(short_name).num(positional).num(static_cast<int>(type)).str(help);
  w.str(default_text).strs(choices).num(number).str(text);
  put(w, where);
}

void put(FieldWriter &w, const MapDecl &m) {
  const auto &[name, kind, key_type, value_type, key_fields, value_fields, size, print_at_exit,
               where] = m;
  w.str(name).num(static_cast<int>(kind));
  put(w, key_type);
  put(w, value_type);
  put(w, key_fields);
  put(w, value_fields);
  w.num(size).num(print_at_exit);
  put(w, where);
}

void put(FieldWriter &w, const AggregationDecl &a);
void put(FieldWriter &w, const LatencyDecl &l);
void put(FieldWriter &w, const DrawDecl &d);
void put(FieldWriter &w, const ProbeDecl &p);
void put(FieldWriter &w, const ScriptInfo &s);

template <typename T>
void put_all(FieldWriter &w, const std::vector<T> &items) {
  w.num(static_cast<int64_t>(items.size()));
  for (const auto &item : items)
    put(w, item);
}

void put(FieldWriter &w, const AggregationDecl &a) {
  const auto &[id, name, kind, keys, value, unit, lmin, lmax, lstep, size, print_at_exit, where] =
      a;
  w.num(id).str(name).num(static_cast<int>(kind));
  put_all(w, keys);
  put(w, value);
  w.str(unit).num(lmin).num(lmax).num(lstep).num(size).num(print_at_exit);
  put(w, where);
}

void put(FieldWriter &w, const LatencyDecl &l) {
  const auto &[id, name, start_probe, stop_probe, key, stop_key, carry, size, where] = l;
  w.num(id).str(name).num(start_probe).num(stop_probe);
  put_all(w, key);
  put_all(w, stop_key);
  put_all(w, carry);
  w.num(size);
  put(w, where);
}

void put(FieldWriter &w, const DrawDecl &d) {
  const auto &[kind, name, category, args, duration, track, track_name, track_label, track_group,
               process_track, async_track, flow, flow_point, when, value_names] = d;
  w.num(static_cast<int>(kind)).str(name).str(category).strs(args).str(duration);
  w.str(track).str(track_name).str(track_label).str(track_group);
  w.num(process_track).num(async_track).str(flow).num(static_cast<int>(flow_point));
  w.str(when).num(static_cast<int64_t>(value_names.size()));
  for (const auto &[arg, names] : value_names)
    w.str(arg).strs(names);
}

void put(FieldWriter &w, const ProbeDecl &p) {
  const auto &[id, alternatives, guard, predicate, action, captures, aggregations, latency_start,
               latency_stop, has_handler, draws, where] = p;
  w.num(id).strs(alternatives);
  put(w, guard);
  put(w, predicate);
  put(w, action);
  put_all(w, captures);
  w.num(static_cast<int64_t>(aggregations.size()));
  for (int a : aggregations)
    w.num(a);
  w.num(latency_start).num(latency_stop).num(has_handler);
  put_all(w, draws);
  put(w, where);
}

void put(FieldWriter &w, const ScriptInfo &s) {
  const auto &[path, name, version, description, help, examples, requirements, optional, unmet] = s;
  w.str(path).str(name).str(version).str(description).str(help).strs(examples);
  w.strs(requirements).strs(optional).strs(unmet);
}

}  // namespace

std::string declaration_fingerprint(const Declaration &decl) {
  const auto &[script_path, scripts, probes, params, maps, aggregations, latencies, trace_file,
               trace_file_where] = decl;
  FieldWriter w;
  w.str("declaration 1").str(script_path);
  put_all(w, scripts);
  put_all(w, probes);
  put_all(w, params);
  put_all(w, maps);
  put_all(w, aggregations);
  put_all(w, latencies);
  w.str(trace_file);
  put(w, trace_file_where);
  return sha256_hex(w.bytes());
}

}  // namespace mt
