// Writes every field of a declaration, in order, and digests it.
#include "common/declaration_fingerprint.h"

#include "common/field_codec.h"
#include "common/sha256.h"

namespace mt {

namespace {

void put(FieldWriter &w, const ScriptLocation &l) {
  w.str(l.file).num(l.line).num(l.column);
}

void put(FieldWriter &w, const Expression &e) {
  w.str(e.text);
  put(w, e.where);
}

void put(FieldWriter &w, const Capture &c) {
  w.str(c.name);
  put(w, c.expr);
  w.num(c.is_string).num(c.string_size).str(c.c_type);
}

void put(FieldWriter &w, const std::vector<Capture> &captures) {
  w.num(static_cast<int64_t>(captures.size()));
  for (const auto &c : captures)
    put(w, c);
}

void put(FieldWriter &w, const std::vector<std::pair<std::string, std::string>> &fields) {
  w.num(static_cast<int64_t>(fields.size()));
  for (const auto &[name, type] : fields)
    w.str(name).str(type);
}

void put(FieldWriter &w, const Param &p) {
  w.str(p.name).str(p.short_name).num(p.positional).num(static_cast<int>(p.type)).str(p.help);
  w.str(p.default_text).strs(p.choices).num(p.value.number).str(p.value.text);
  put(w, p.where);
}

void put(FieldWriter &w, const MapDecl &m) {
  w.str(m.name).num(static_cast<int>(m.kind));
  put(w, m.key_type);
  put(w, m.value_type);
  put(w, m.key_fields);
  put(w, m.value_fields);
  w.num(m.size).num(m.print_at_exit);
  put(w, m.where);
}

void put(FieldWriter &w, const AggregationDecl &a) {
  w.num(a.id).str(a.name).num(static_cast<int>(a.kind));
  put(w, a.keys);
  put(w, a.value);
  w.str(a.unit).num(a.lmin).num(a.lmax).num(a.lstep).num(a.size).num(a.print_at_exit);
  put(w, a.where);
}

void put(FieldWriter &w, const LatencyDecl &l) {
  w.num(l.id).str(l.name).num(l.start_probe).num(l.stop_probe);
  put(w, l.key);
  put(w, l.stop_key);
  put(w, l.carry);
  w.num(l.size);
  put(w, l.where);
}

void put(FieldWriter &w, const DrawDecl &d) {
  w.num(static_cast<int>(d.kind)).str(d.name).str(d.category).strs(d.args).str(d.duration);
  w.str(d.track).str(d.track_name).str(d.track_label).str(d.track_group);
  w.num(d.process_track).num(d.async_track).str(d.flow).num(static_cast<int>(d.flow_point));
  w.str(d.when).num(static_cast<int64_t>(d.value_names.size()));
  for (const auto &[arg, names] : d.value_names)
    w.str(arg).strs(names);
}

void put(FieldWriter &w, const ProbeDecl &p) {
  w.num(p.id).strs(p.alternatives);
  put(w, p.predicate);
  put(w, p.action);
  put(w, p.captures);
  w.num(static_cast<int64_t>(p.aggregations.size()));
  for (int a : p.aggregations)
    w.num(a);
  w.num(p.latency_start).num(p.latency_stop).num(p.has_handler);
  w.num(static_cast<int64_t>(p.draws.size()));
  for (const auto &d : p.draws)
    put(w, d);
  put(w, p.where);
}

void put(FieldWriter &w, const ScriptInfo &s) {
  w.str(s.path).str(s.name).str(s.version).str(s.description).str(s.help).strs(s.examples);
  w.strs(s.requirements).strs(s.optional).strs(s.unmet);
}

template <typename T>
void put_all(FieldWriter &w, const std::vector<T> &items) {
  w.num(static_cast<int64_t>(items.size()));
  for (const auto &item : items)
    put(w, item);
}

}  // namespace

std::string declaration_fingerprint(const Declaration &decl) {
  FieldWriter w;
  w.str("declaration 1").str(decl.script_path);
  put_all(w, decl.scripts);
  put_all(w, decl.probes);
  put_all(w, decl.params);
  put_all(w, decl.maps);
  put_all(w, decl.aggregations);
  put_all(w, decl.latencies);
  w.str(decl.trace_file);
  put(w, decl.trace_file_where);
  return sha256_hex(w.bytes());
}

}  // namespace mt
