//! The seccomp filter of a Python child: everything a CPython program legitimately does stays
//! allowed, and the system calls that reach other processes, the kernel's configuration, or new
//! namespaces fail with EPERM (clone3 with ENOSYS, so the C library falls back to clone, whose
//! flags the filter can read).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};

/// Denied outright.
const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_process_madvise,
    libc::SYS_pidfd_getfd,
    libc::SYS_kcmp,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_mount_setattr,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_syslog,
    libc::SYS_fanotify_init,
    libc::SYS_lookup_dcookie,
    libc::SYS_mbind,
    libc::SYS_migrate_pages,
    libc::SYS_move_pages,
    libc::SYS_set_mempolicy,
    libc::SYS_vhangup,
    libc::SYS_uselib,
    libc::SYS_nfsservctl,
];

/// clone() flags that would create namespaces.
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// The two programs: the deny list, and clone3 → ENOSYS. The kernel runs every installed filter
/// and the strictest answer wins.
// Syscall numbers are `c_long`, which is `i64` only on 64-bit targets.
#[allow(clippy::unnecessary_cast)]
fn filters() -> Option<[BpfProgram; 2]> {
    let arch = std::env::consts::ARCH.try_into().ok()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED.iter().map(|n| (*n as i64, Vec::new())).collect();
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|flag| {
            let flag = *flag as u64;
            SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag)
                .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    rules.insert(libc::SYS_clone as i64, clone_rules);
    let denied =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch).ok()?;
    // clone3 passes its flags in memory the filter cannot read: make the C library use clone.
    let clone3: BTreeMap<i64, Vec<SeccompRule>> = [(libc::SYS_clone3 as i64, Vec::new())].into_iter().collect();
    let enosys =
        SeccompFilter::new(clone3, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch).ok()?;
    Some([denied.try_into().ok()?, enosys.try_into().ok()?])
}

/// Installs the filter on the calling thread (no_new_privs must already be set).
pub fn apply() -> bool {
    match filters() {
        Some(programs) => programs.iter().all(|p| seccompiler::apply_filter(p).is_ok()),
        None => false,
    }
}
