// The declaration a script builds: what to hook, test and capture. It is
// plain data so each later stage can be fed and tested without Lua.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mt {

// Where something was written in the script, for error messages.
struct ScriptLocation {
  std::string file;
  int line = 0;
  int column = 0;  // 0: unknown
};

// A C expression written in the script, and where it stands there.
struct Expression {
  std::string text;
  ScriptLocation where;
};

// Where a string capture's pointer points: user memory for ustr(), kernel
// memory for kstr(); for str(), user memory in a uprobe and for a syscall
// tracepoint's pointer argument (every one is the caller's), else kernel.
enum class StringMemory { Guess, User, Kernel };

// A stack captured as kstack or ustack (optionally with a depth: kstack(8)).
enum class StackKind { None, Kernel, User };

struct Capture {
  std::string name;
  Expression expr;
  bool is_string = false;  // written as str(ptr[, len]), ustr(...) or kstr(...)
  int string_size = 64;
  std::string c_type;  // its type in the record; "": typeof() of the expression
  StringMemory string_memory = StringMemory::Guess;
  StackKind stack = StackKind::None;
  int stack_depth = 0;  // frames kept, 1..MT_STACK_MAX_DEPTH
};

enum class ParamType { Int, Uint, Bool, String };

// A parameter's value, parsed once from the command line or its default.
struct ParamValue {
  int64_t number = 0;  // Int; Uint as its bits; Bool as 0 or 1
  std::string text;    // String
};

struct Param {
  std::string name;
  std::string short_name;   // one letter, e.g. "T" for -T
  bool positional = false;  // given by place, after the options: "biolatency 1 10"
  ParamType type = ParamType::Int;
  std::string help;
  std::string default_text;          // as typed on the command line
  std::vector<std::string> choices;  // the values it may take, as typed; empty: any
  ParamValue value;                  // after command-line parsing
  ScriptLocation where;
};

enum class MapKind { Hash, PercpuHash, LruHash, Array, PercpuArray };

// A map the script reads and writes itself, from C actions and from Lua.
struct MapDecl {
  std::string name;  // the C identifier actions use
  MapKind kind = MapKind::Hash;
  Expression key_type;    // C type, e.g. "u32"; empty with key_fields
  Expression value_type;  // C type, e.g. "u64"; empty with value_fields
  std::vector<std::pair<std::string, std::string>> key_fields;    // (name, C type): a struct key
  std::vector<std::pair<std::string, std::string>> value_fields;  // the same for a struct value
  uint32_t size = 10240;
  bool print_at_exit = false;
  ScriptLocation where;
};

enum class AggKind { Count, Sum, Min, Max, Avg, Stats, Log2Hist, LinearHist };

// A statistic kept in the kernel, keyed by a tuple of expressions.
struct AggregationDecl {
  int id = 0;  // index in Declaration::aggregations
  std::string name;
  AggKind kind = AggKind::Count;
  std::vector<Capture> keys;  // the tuple, written like captures
  Expression value;           // empty for count; "latency" when fed by a latency pair
  std::string unit;           // ns/us/ms/s scale the value; anything else only labels it
  int64_t lmin = 0, lmax = 0, lstep = 1;  // linear histogram
  uint32_t size = 10240;                  // distinct keys (x slots for histograms)
  bool print_at_exit = true;
  ScriptLocation where;
};

// A latency pair: time from a start probe to a stop probe with equal keys.
struct LatencyDecl {
  int id = 0;
  std::string name;
  int start_probe = -1, stop_probe = -1;  // ProbeDecl ids
  std::vector<Capture> key;               // evaluated at both probes
  std::vector<Capture> stop_key;          // at the stop instead, when its probe names it otherwise
  std::vector<Capture> carry;             // taken at start, read at stop as start.NAME
  uint32_t size = 10240;                  // pending starts kept (LRU beyond)
  ScriptLocation where;
};

// How a probe's events are drawn into the trace file (FXT), natively:
// no Lua runs per event. Values come from the probe's captures; the ones
// only drawing needs are hidden captures named __dN_*.
struct DrawDecl {
  enum class Kind { Instant, Slice, Begin, End, Counter };
  Kind kind = Kind::Instant;
  std::string name;                    // slice, instant or counter name
  std::string category = "moontrace";  // FXT category
  std::vector<std::string> args;       // capture names shown as arguments (or counter series)
  std::string duration;                // Slice: capture holding its length in ns; "" 1 ns
  std::string track;                   // capture keying a track of its own; "" the thread's
  std::string track_name;              // that track's name, followed by the key in hex
  std::string track_label;             // capture naming the track in place of the key
  std::string track_group;             // "": under the event's process; else a process of its own
  bool process_track = false;          // the track is the process's own (keyed by pid)
  bool async_track = false;            // Slice: in a lane of the process's async track
  std::string flow;                    // capture holding the flow id; "" no flow point
  enum class Flow { Begin, Step, End } flow_point = Flow::Step;
  std::string when;  // capture (a byte) that must not be 0 for it to be drawn; "" always
  // Arguments shown by name: for an argument, the name of each value
  // (index = value; "" or beyond the end: the number).
  std::map<std::string, std::vector<std::string>> value_names;
};

struct ProbeDecl {
  int id = 0;                             // index in Declaration::probes
  std::vector<std::string> alternatives;  // probe names; first available wins
  // Tested first, before the target check, the clock and a latency stop's
  // lookup: an event it rejects is not this probe's at all (a stop on a
  // tracepoint every syscall fires, like tp_btf:sys_exit). Empty: none.
  Expression guard;
  Expression predicate;           // empty: always
  Expression action;              // C statements run when the predicate holds
  std::vector<Capture> captures;  // sent to user space, by name
  std::vector<int> aggregations;  // ids of the aggregations this probe feeds
  int latency_start = -1;         // LatencyDecl id this probe starts
  int latency_stop = -1;          // LatencyDecl id this probe stops
  bool has_handler = false;       // a Lua function receives events
  std::vector<DrawDecl> draws;    // drawn into the trace file
  ScriptLocation where;
};

// What a script says of itself with script{}: shown by its --help.
struct ScriptInfo {
  std::string path;  // the script's file
  std::string name, version, description, help;
  std::vector<std::string> examples;
  std::vector<std::string> requirements;  // as --help shows them: "kernel 5.10", a probe...
  std::vector<std::string> optional;      // probes it uses where the kernel has them
  std::vector<std::string> unmet;  // what this kernel lacks (kept under --help; else an error)
};

struct Declaration {
  std::string script_path;
  std::vector<ScriptInfo> scripts;  // each script{} called, in order
  std::vector<ProbeDecl> probes;
  std::vector<Param> params;
  std::vector<MapDecl> maps;
  std::vector<AggregationDecl> aggregations;
  std::vector<LatencyDecl> latencies;
  std::string trace_file;           // fxt{file=}: where drawings go ("" none; -o overrides)
  ScriptLocation trace_file_where;  // the fxt{} call that named it
};

const char *agg_kind_name(AggKind kind);
inline bool is_histogram(AggKind kind) {
  return kind == AggKind::Log2Hist || kind == AggKind::LinearHist;
}
// The divisor from nanoseconds for a time unit ("us" -> 1000), 1 otherwise.
uint64_t unit_divisor(const std::string &unit);
// How a unit heads a histogram, like the bcc tools: "usecs", "bytes".
std::string unit_label(const std::string &unit);

}  // namespace mt
