// A refused load: libbpf's messages in, the error naming the script's line out.
#include "run/load_failure.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace mt {
namespace {

struct Refused {
  Declaration decl;
  GeneratedProgram generated;
  Refused() {
    decl.probes.resize(2);
    decl.probes[1].where = {"keys.lua", 7, 0};
    generated.probes.resize(2);
    for (int i = 0; i < 2; i++) {
      generated.probes[i].decl_id = i;
      generated.probes[i].attached_program = "mt_probe_" + std::to_string(i);
      generated.probes[i].probe_name = "tracepoint:syscalls:sys_enter_getppid";
    }
  }
  // libbpf's messages for a refused mt_probe_1, whose verifier log ends with `last`.
  static std::string log(const std::string &last) {
    return "libbpf: prog 'mt_probe_1': BPF program load failed: Permission denied\n"
           "libbpf: prog 'mt_probe_1': -- BEGIN PROG LOAD LOG --\n0: (b7) r1 = 0\n" +
           last + "\nprocessed 12 insns (limit 1000000)\n-- END PROG LOAD LOG --\n";
  }
};

TEST(LoadFailure, NamesTheRefusedProbesLineInTheVerifiersWords) {
  Refused r;
  Error e = load_failure(-EACCES, Refused::log("R2 invalid mem access 'scalar'"), r.generated,
                         r.decl, false);
  EXPECT_STREQ(e.what(),
               "the BPF verifier rejected the program for tracepoint:syscalls:sys_enter_getppid: "
               "R2 invalid mem access 'scalar' (run with -v for the kernel's log)");
  EXPECT_EQ(e.where.file, "keys.lua");
  EXPECT_EQ(e.where.line, 7);
}

// Probes sharing one tracepoint's program: the refused one is the one
// whose script line the verifier walked last, not the first.
TEST(LoadFailure, InASharedProgramTheLineTheVerifierLastWalkedIsNamed) {
  Refused r;
  for (auto &p : r.generated.probes)
    p.attached_program = "mt_shared_0";
  r.decl.probes[0].where = {"shared.lua", 2, 0};
  r.decl.probes[1].where = {"shared.lua", 3, 0};
  std::string log =
      "libbpf: prog 'mt_shared_0': BPF program load failed: Permission denied\n"
      "libbpf: prog 'mt_shared_0': -- BEGIN PROG LOAD LOG --\n"
      ";  @ shared.lua:2\n10: (b7) r1 = 1\n"
      "; map_set(m, 0, 1); @ shared.lua:2\n11: (b7) r1 = 1\n"
      ";  @ <moontrace>:100034\n88: (16) if w1 == 0x0 goto pc+10\n"
      ";  @ shared.lua:6\n96: (15) if r0 == 0x0 goto pc+2\n"
      ";  @ <moontrace>:100057\n97: (b7) r1 = 2\n"
      "invalid access to map value, value_size=8 off=800 size=8\n"
      "processed 98 insns (limit 1000000)\n-- END PROG LOAD LOG --\n";
  Error e = load_failure(-EACCES, log, r.generated, r.decl, false);
  EXPECT_EQ(e.where.file, "shared.lua");
  EXPECT_EQ(e.where.line, 6);
  EXPECT_NE(std::string(e.what()).find("invalid access to map value"), std::string::npos);
  // No script line in the log: the first sharer's, as before.
  std::string plain = Refused::log("R2 invalid mem access 'scalar'");
  for (size_t at; (at = plain.find("mt_probe_1")) != std::string::npos;)
    plain.replace(at, 10, "mt_shared_0");
  e = load_failure(-EACCES, plain, r.generated, r.decl, false);
  EXPECT_EQ(e.where.line, 2);
}

// The stack Clang allowed, outgrown by mt_flush's frame (a global
// function): said as Clang's limit is, not as the verifier's.
TEST(LoadFailure, AStackOutgrownByTheHandOverIsSaidAsTheStackLimit) {
  Refused r;
  Error e = load_failure(-EACCES, Refused::log("combined stack size of 2 calls is 544. Too large"),
                         r.generated, r.decl, true);
  EXPECT_STREQ(e.what(),
               "a probe's keys and values leave too little of the 512 bytes of stack BPF allows "
               "for handing its records over (about 480 are theirs): use shorter strings "
               "(str(ptr, N)) or fewer or smaller keys");
  EXPECT_EQ(e.where.line, 7);
}

TEST(LoadFailure, WithoutAProgramItSaysWhatFailed) {
  Refused r;
  Error e =
      load_failure(-ENOMEM, "libbpf: map 'x': failed to create\n", r.generated, r.decl, false);
  EXPECT_STREQ(e.what(),
               "cannot load the BPF programs: Cannot allocate memory (run with -v for "
               "details)");
  EXPECT_TRUE(e.where.file.empty());
}

}  // namespace
}  // namespace mt
