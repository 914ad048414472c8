// Lists the BPF helpers allowed without --unsafe, by purpose, and names helpers by id.
#include "compiler/helper_policy.h"

#include <linux/bpf.h>

#include <algorithm>

namespace mt {

namespace {

// Names in id order, from the kernel's own list.
#define MT_HELPER_NAME(x) "bpf_" #x
const char *const kHelperNames[] = {__BPF_FUNC_MAPPER(MT_HELPER_NAME)};
#undef MT_HELPER_NAME

}  // namespace

// Not bpf_trace_printk nor bpf_trace_vprintk: they write to the kernel's
// one trace buffer, which other tools and people read (and the first use
// allocates its buffers and warns in the kernel's log).
const std::vector<AllowedHelper> &allowed_helpers() {
  static const std::vector<AllowedHelper> allowed = {
      {BPF_FUNC_map_lookup_elem, "maps"},
      {BPF_FUNC_map_update_elem, "maps"},
      {BPF_FUNC_map_delete_elem, "maps"},
      {BPF_FUNC_probe_read, "reading"},
      {BPF_FUNC_ktime_get_ns, "time"},
      {BPF_FUNC_get_prandom_u32, "sampling"},
      {BPF_FUNC_get_smp_processor_id, "cpu"},
      {BPF_FUNC_tail_call, "chaining"},
      {BPF_FUNC_get_current_pid_tgid, "identity"},
      {BPF_FUNC_get_current_uid_gid, "identity"},
      {BPF_FUNC_get_current_comm, "identity"},
      {BPF_FUNC_perf_event_read, "counters"},
      {BPF_FUNC_perf_event_output, "output"},
      {BPF_FUNC_get_stackid, "stacks"},
      {BPF_FUNC_get_current_task, "task"},
      {BPF_FUNC_current_task_under_cgroup, "cgroup"},
      {BPF_FUNC_get_numa_node_id, "cpu"},
      {BPF_FUNC_probe_read_str, "reading"},
      {BPF_FUNC_perf_event_read_value, "counters"},
      {BPF_FUNC_perf_prog_read_value, "counters"},
      {BPF_FUNC_get_stack, "stacks"},
      {BPF_FUNC_get_current_cgroup_id, "cgroup"},
      {BPF_FUNC_map_push_elem, "maps"},
      {BPF_FUNC_map_pop_elem, "maps"},
      {BPF_FUNC_map_peek_elem, "maps"},
      {BPF_FUNC_spin_lock, "maps"},
      {BPF_FUNC_spin_unlock, "maps"},
      {BPF_FUNC_probe_read_user, "reading"},
      {BPF_FUNC_probe_read_kernel, "reading"},
      {BPF_FUNC_probe_read_user_str, "reading"},
      {BPF_FUNC_probe_read_kernel_str, "reading"},
      {BPF_FUNC_jiffies64, "time"},
      {BPF_FUNC_get_ns_current_pid_tgid, "identity"},
      {BPF_FUNC_get_current_ancestor_cgroup_id, "cgroup"},
      {BPF_FUNC_ktime_get_boot_ns, "time"},
      {BPF_FUNC_ringbuf_output, "output"},
      {BPF_FUNC_ringbuf_reserve, "output"},
      {BPF_FUNC_ringbuf_submit, "output"},
      {BPF_FUNC_ringbuf_discard, "output"},
      {BPF_FUNC_ringbuf_query, "output"},
      {BPF_FUNC_get_task_stack, "stacks"},
      {BPF_FUNC_d_path, "paths"},
      {BPF_FUNC_copy_from_user, "reading"},
      {BPF_FUNC_snprintf_btf, "formatting"},
      {BPF_FUNC_per_cpu_ptr, "reading"},
      {BPF_FUNC_this_cpu_ptr, "reading"},
      {BPF_FUNC_task_storage_get, "maps"},
      {BPF_FUNC_task_storage_delete, "maps"},
      {BPF_FUNC_get_current_task_btf, "task"},
      {BPF_FUNC_ktime_get_coarse_ns, "time"},
      {BPF_FUNC_for_each_map_elem, "maps"},
      {BPF_FUNC_snprintf, "formatting"},
      {BPF_FUNC_get_func_ip, "probe"},
      {BPF_FUNC_get_attach_cookie, "probe"},
      {BPF_FUNC_task_pt_regs, "task"},
      {BPF_FUNC_find_vma, "reading"},
      {BPF_FUNC_loop, "loops"},
      {BPF_FUNC_strncmp, "comparing"},
      {BPF_FUNC_get_func_arg, "probe"},
      {BPF_FUNC_get_func_ret, "probe"},
      {BPF_FUNC_get_func_arg_cnt, "probe"},
      {BPF_FUNC_copy_from_user_task, "reading"},
      {BPF_FUNC_map_lookup_percpu_elem, "maps"},
      {BPF_FUNC_dynptr_from_mem, "output"},
      {BPF_FUNC_ringbuf_reserve_dynptr, "output"},
      {BPF_FUNC_ringbuf_submit_dynptr, "output"},
      {BPF_FUNC_ringbuf_discard_dynptr, "output"},
      {BPF_FUNC_dynptr_read, "output"},
      {BPF_FUNC_dynptr_write, "output"},
      {BPF_FUNC_dynptr_data, "output"},
      {BPF_FUNC_ktime_get_tai_ns, "time"},
  };
  return allowed;
}

bool helper_allowed(long id) {
  const auto &allowed = allowed_helpers();
  return std::any_of(allowed.begin(), allowed.end(),
                     [id](const AllowedHelper &h) { return h.id == id; });
}

std::string helper_name(long id) {
  if (id > 0 && id < long(std::size(kHelperNames)))
    return kHelperNames[id];
  return "helper " + std::to_string(id);
}

}  // namespace mt
