// Program entry point: hands the command line to run_moontrace(), or runs
// as the symbolizing child a run started (run/symbolizer_process.h).
#include <cstring>

#include "app/session.h"
#include "app/standard_fds.h"
#include "run/symbolizer_process.h"

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], mt::kSymbolizerChildArgument) == 0)
    mt::serve_symbolizer_child(argv[2]);
  mt::hold_closed_standard_fds();
  return mt::run_moontrace(argc, argv);
}
