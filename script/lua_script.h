// A script's Lua side. Running the chunk builds the Declaration through
// probe() and param(); afterwards the same state runs per-event, interval,
// begin and end handlers.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/source_locator.h"
#include "common/declaration.h"
#include "script/kernel_answers.h"
#include "script/lua_sandbox.h"

struct lua_State;

namespace mt {

// The script API this engine speaks: script{requires = {api = N}} runs
// when N is at most this. It grows when scripts get something new to call.
inline constexpr int kScriptApi = 1;

class KernelFacts;
class KernelMaps;
class Output;
class ScriptArgs;

struct ScriptSource {
  std::string path;  // as shown in messages and #line directives
  std::string text;
  bool shipped = false;            // built into moontrace (also the module of its name)
  std::vector<std::string> hides;  // scripts of the same name after it on the search path
};

// A script path on disk, else a script by name ("demo" or "demo.lua"):
// the first along the search path (script_search.h), its own directories
// then the shipped ones; throws mt::Error if there is none.
ScriptSource load_script_source(const std::string &name_or_path);
// A script run by name that hides others of its name is said on stderr,
// not silent.
void report_hidden(const ScriptSource &source);

class LuaScript {
 public:
  LuaScript(ScriptSource source, const SandboxOptions &sandbox, ScriptArgs &args, Output &output);
  ~LuaScript();
  LuaScript(const LuaScript &) = delete;
  LuaScript &operator=(const LuaScript &) = delete;

  // What available() and disk() ask; the running kernel unless set.
  void set_kernel_facts(KernelFacts *kernel) { kernel_ = kernel; }
  // The -o path, which output_is_trace() looks at ("" without -o).
  void set_output_path(std::string path) { output_path_ = std::move(path); }
  // For --help: a script{} whose requirements this kernel lacks ends the
  // declaration there, without an error, so that what it says is shown.
  void set_help(bool help) { help_ = help; }
  // Runs the script's top level, then each of `more` with its own options
  // (`+ SCRIPT` on the command line), into one declaration; throws
  // mt::Error ("file:line: message"), or LuaInterrupted when a stop
  // request interrupts it (see lua_interrupt.h).
  struct More {
    ScriptSource source;
    ScriptArgs *args;
  };
  void declare(const std::vector<More> &more = {});
  // What available() chose while declaring, shown with -v.
  const std::vector<std::string> &notes() const { return notes_; }
  // What notice() said while declaring, "SCRIPT: text", for stderr.
  const std::vector<std::string> &notices() const { return notices_; }
  const Declaration &declaration() const { return decl_; }
  // The modules `require` read from files so far: name -> source.
  std::map<std::string, std::string> file_modules() const;
  const ScriptSource &source() const { return source_; }
  // What the script asked of the kernel while declaring; replay() answers
  // from an earlier start's before declare().
  KernelAnswers &kernel_answers() { return answers_; }
  lua_State *state() { return L_; }

  // Run phase. The fill callback pushes nothing and fills the table on
  // top of the stack with an event's fields.
  bool has_handler(int decl_id) const { return handlers_.count(decl_id) > 0; }
  void call_event(int decl_id, const std::function<void(lua_State *)> &fill);
  void call(int decl_id);  // begin, end and interval handlers
  // Handlers throw mt::Error, or LuaInterrupted as declare() does.
  bool exit_requested() const { return exit_requested_; }
  // Gives handles their maps once the program is loaded.
  void set_kernel_maps(KernelMaps *maps) { maps_ = maps; }
  // Gives lost() the count of events lost so far.
  void set_lost_counter(std::function<uint64_t()> lost) { lost_ = std::move(lost); }
  // Prints through the script's output (-o, -f json) like handle:print().
  void print_aggregation(int id);
  void print_map(int index);

 private:
  friend struct LuaApi;
  friend struct LuaDeclarationBuilders;
  friend struct LuaKernelQueries;
  friend struct LuaHostFunctions;
  friend struct LuaMapHandles;
  friend struct LuaScriptInfo;
  void call_handler_on_stack(int nargs);
  void run_top_level(const ScriptSource &source);
  [[noreturn]] void throw_lua_error(const std::string &message);
  KernelFacts &kernel();

  lua_State *L_;
  ScriptSource source_;
  SourceIndex source_index_;  // of source_.text
  ScriptArgs *args_;          // the options of the script whose top level runs
  size_t first_param_ = 0;    // the first of its parameters in decl_.params
  Output &output_;
  Declaration decl_;
  std::map<int, int> handlers_;  // decl id -> registry ref
  bool exit_requested_ = false;
  bool declared_ = false;  // the body has run: probe(), map{} and the like refuse
  KernelMaps *maps_ = nullptr;
  std::function<uint64_t()> lost_;
  KernelFacts *kernel_ = nullptr;
  KernelAnswers answers_;
  // The further lines of the error a script{} raised (by the end of its
  // message: Lua may shorten the place before it), for its Error.
  std::pair<std::string, std::vector<std::string>> more_error_lines_;
  bool help_ = false;              // --help: script{} stops at unmet requirements
  bool stopped_for_help_ = false;  // and it did
  std::unique_ptr<KernelFacts> own_kernel_;
  std::vector<std::string> notes_;
  std::vector<std::string> notices_;
  std::string output_path_;
};

}  // namespace mt
