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
    {.name = "ScriptPidThatIsNegative",
     .args = {"iostack", "-p", "-5"},
     .error = "moontrace: iostack.lua:41: invalid value '-5' for -p: expected a non-negative "
              "integer"},
    {.name = "NoSuchScript",
     .args = {"nosuchscript"},
     .error = "moontrace: cannot read script 'nosuchscript': no such file, and no script by "
              "that name (try 'moontrace list')"},
    {.name = "LuaSyntaxError",
     .files = {{"bad.lua", "probe(\n"}},
     .args = {"bad.lua"},
     .error = "moontrace: bad.lua:2: unexpected symbol near <eof>"},
    // Programs hand over 8 KiB at a time: a smaller buffer would lose all.
    {.name = "EventBufferTooSmall",
     .args = {"demo"},
     .error = "moontrace: MOONTRACE_BUFFER_KB=32: expected a power of two from 64 to 1048576",
     .env = {{"MOONTRACE_BUFFER_KB", "32"}}},
};

CATALOGUE(Cli, kCases);

}  // namespace
}  // namespace e2e
