// Runs --help, --version, list, dump and -l.
#include "app/info_commands.h"

#include <cstdio>

#include "common/error.h"
#include "kernel/probe_listing.h"
#include "kernel/probe_resolver.h"
#include "script/script_search.h"
#include "trace/fxt_dump.h"

namespace mt {

std::optional<int> run_info_command(const Options &options) {
  if (options.help) {
    std::fputs(usage_text(), stdout);
    return 0;
  }
  if (options.version) {
    std::puts("moontrace " MT_VERSION);
    return 0;
  }
  if (options.list_scripts) {
    std::fputs(scripts_text(all_scripts()).c_str(), stdout);
    return 0;
  }
  if (!options.dump_file.empty())
    return dump_trace(options.dump_file, options.dump_json, stdout);
  if (options.list_probes) {
    KernelFacts kernel;
    if (!list_probes(options.list_pattern, options.verbose > 0, kernel, stdout))
      throw Error("no probes match '" + options.list_pattern + "'");
    return 0;
  }
  return std::nullopt;
}

}  // namespace mt
