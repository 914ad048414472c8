// Facts about a kernel that is not running here, from its BTF alone
// (moontrace check --btf): a vmlinux BTF file, or a directory laid out as
// /sys/kernel/btf (vmlinux and one file per module).
#pragma once
#include <memory>
#include <string>

#include "kernel/probe_resolver.h"

namespace mt {

class BtfFileFacts : public KernelFacts {
 public:
  // Throws mt::Error when PATH holds no BTF.
  explicit BtfFileFacts(const std::string &path);

  // From its BTF; a syscall's from this kernel's tracefs where it has one.
  std::optional<TraceFormat> tracepoint(const std::string &category,
                                        const std::string &event) override;
  std::vector<std::string> tracepoint_names() override;
  bool tracefs_readable() override { return true; }
  const KernelBtf *btf() override { return btf_.get(); }
  // CONFIG_KPROBES: the kernel has register_kprobe.
  bool has_kprobes() override;
  // Every function its BTF has (its ftrace list is not in BTF).
  std::vector<std::string> kprobe_function_names() override;
  // Whether it has BPF trampolines over ftrace direct calls; whether it
  // would refuse them (lockdown, say) BTF cannot tell.
  std::string fentry_unavailable_reason() override;
  std::string block_device(const std::string &) override { return ""; }
  std::string release() override { return ""; }  // BTF does not say

 private:
  bool has_function(const std::string &name) const;

  std::unique_ptr<KernelBtf> btf_;
};

}  // namespace mt
