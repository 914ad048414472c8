// One run of moontrace, from command line to exit code: the stages wired
// together in the order data flows through them.
#pragma once

namespace mt {

int run_moontrace(int argc, char **argv);

}  // namespace mt
