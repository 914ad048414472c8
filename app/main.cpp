// Program entry point: hands the command line to run_moontrace().
#include "app/session.h"

int main(int argc, char **argv) {
  return mt::run_moontrace(argc, argv);
}
