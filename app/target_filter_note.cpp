// What -c and -p cannot keep.
#include "app/target_filter_note.h"

#include <algorithm>

namespace mt {

std::string target_filter_note(const Declaration &decl, const GeneratedProgram &program) {
  for (const auto &p : program.probes) {
    bool issue = p.name.target == "block_rq_issue" || p.name.target == "block_rq_insert" ||
                 p.name.target == "blk_mq_start_request";
    const auto &draws = decl.probes[p.decl_id].draws;
    bool on_a_flow = std::any_of(draws.begin(), draws.end(), [](const DrawDecl &d) {
      return !d.flow.empty() && d.flow_point != DrawDecl::Flow::Begin;
    });
    if (issue && !on_a_flow)
      return "under -c and -p, block requests issued by kernel threads (writeback, the "
             "journal, discards) are not traced, though the traced processes caused them; trace "
             "the disk without -c or -p to see them";
  }
  return "";
}

}  // namespace mt
