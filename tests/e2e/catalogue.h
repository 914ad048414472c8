// The catalogue of bad inputs and faults: each case runs moontrace in a
// private directory that already holds files a user would not want to
// lose, and asserts the exact error line, the exit status, and that every
// file that was there is still there, unchanged, with nothing left behind.
//
// A file of cases, catalogue_AREA_test.cpp, lists them and instantiates:
//   const std::vector<Case> kCases = {{.name = "...", .args = {...}, ...}};
//   CATALOGUE(Area, kCases);
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/e2e_support.h"

namespace e2e {

struct Case {
  std::string name;  // a C identifier: the test's name
  // Files written into the case's directory before the run ("a/b.lua"
  // makes a/). The directory also holds kPrecious files (see below).
  std::map<std::string, std::string> files = {};
  // moontrace's arguments; "{dir}" stands for the case's directory, which
  // is also its working directory.
  std::vector<std::string> args = {};
  // The exact first line on stderr other than the ready and event-count
  // lines, "{dir}" substituted, or "" when the run must succeed.
  std::string error = {};
  int exit_code = 1;
  // Environment for the run, "{dir}" substituted.
  std::vector<std::pair<std::string, std::string>> env = {};
  // Anything else to set up (permissions, owners, links) in the directory.
  std::function<void(const std::string &dir)> setup = {};
  // Done to the running process once it is attached (a signal, say); the
  // case then expects its error after that.
  std::function<void(Process &)> while_running = {};
  // Files the run may change or create (names in the directory).
  std::set<std::string> may_write = {};
  // Further checks on the result and the directory.
  std::function<void(const Result &, const std::string &dir)> check = {};
  // Seconds the run may take.
  int timeout_s = 30;
};

// Files every case's directory holds before the run, as an earlier run or
// the user left them: none may be lost or changed unless the case says so.
extern const std::map<std::string, std::string> kPrecious;

void PrintTo(const Case &c, std::ostream *os);

class Catalogue : public BpfTest, public ::testing::WithParamInterface<Case> {};

std::string case_name(const ::testing::TestParamInfo<Case> &info);

}  // namespace e2e

#define CATALOGUE(area, cases) \
  INSTANTIATE_TEST_SUITE_P(area, Catalogue, ::testing::ValuesIn(cases), ::e2e::case_name)
