// Catalogue: mistakes on the command line.
#include "tests/e2e/catalogue.h"

namespace e2e {
namespace {

const std::vector<Case> kCases = {
    {.name = "UnknownEngineOption",
     .args = {"--bogus", "uring"},
     .error = "moontrace: unknown option '--bogus' (see moontrace --help)"},
    {.name = "PidThatIsNotANumber",
     .args = {"-p", "12x", "uring"},
     .error = "moontrace: invalid pid '12x' for -p"},
    {.name = "NoSuchScript",
     .args = {"nosuchscript"},
     .error = "moontrace: cannot read script 'nosuchscript': no such file, and no shipped script "
              "by that name (try 'moontrace list')"},
    {.name = "LuaSyntaxError",
     .files = {{"bad.lua", "probe(\n"}},
     .args = {"bad.lua"},
     .error = "moontrace: bad.lua:2: unexpected symbol near <eof>"},
};

CATALOGUE(Cli, kCases);

}  // namespace
}  // namespace e2e
