#include "runtime/session.h"

int main(int argc, char **argv) {
  return mt::run_moontrace(argc, argv);
}
