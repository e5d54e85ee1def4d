//! The seccomp filter of a Python child: everything a CPython program legitimately does stays
//! allowed, and the system calls that reach other processes, the kernel's configuration, or new
//! namespaces fail with EPERM (clone3 with ENOSYS, so the C library falls back to clone, whose
//! flags the filter can read). A plan with `no_locks` (a `read-only` file policy) refuses file
//! locks too, with EPERM: `flock`, and `fcntl`'s record locks, open file description locks and
//! leases (testing for a lock, `F_GETLK`, stays allowed). Neither Landlock nor a read-only mount
//! stops a lock, which is on the inode: one taken through a read-only descriptor holds off the
//! host's own processes.

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
    libc::SYS_nfsservctl,
];

/// Denied outright where the architecture has them (aarch64 has no number for these).
#[cfg(target_arch = "x86_64")]
const DENIED_X86_64: &[libc::c_long] = &[libc::SYS_iopl, libc::SYS_ioperm, libc::SYS_uselib];
#[cfg(not(target_arch = "x86_64"))]
const DENIED_X86_64: &[libc::c_long] = &[];

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

/// The `fcntl` commands that take or change a lock (their first argument is the descriptor, the
/// second the command).
const LOCK_COMMANDS: &[libc::c_int] =
    &[libc::F_SETLK, libc::F_SETLKW, libc::F_OFD_SETLK, libc::F_OFD_SETLKW, libc::F_SETLEASE];

/// The lock refusals: `flock` outright, `fcntl` for `LOCK_COMMANDS`.
// Syscall numbers are `c_long`, which is `i64` only on 64-bit targets.
#[allow(clippy::unnecessary_cast)]
fn lock_rules() -> Option<BTreeMap<i64, Vec<SeccompRule>>> {
    let fcntl = LOCK_COMMANDS
        .iter()
        .map(|cmd| {
            SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, *cmd as u32 as u64)
                .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    Some([(libc::SYS_flock as i64, Vec::new()), (libc::SYS_fcntl as i64, fcntl)].into_iter().collect())
}

/// The programs: the deny list (with the lock refusals when `no_locks`), and clone3 → ENOSYS.
/// The kernel runs every installed filter and the strictest answer wins.
// Syscall numbers are `c_long`, which is `i64` only on 64-bit targets.
#[allow(clippy::unnecessary_cast)]
fn filters(no_locks: bool) -> Option<Vec<BpfProgram>> {
    let arch = std::env::consts::ARCH.try_into().ok()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().chain(DENIED_X86_64).map(|n| (*n as i64, Vec::new())).collect();
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
    if no_locks {
        rules.extend(lock_rules()?);
    }
    let denied =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch).ok()?;
    // clone3 passes its flags in memory the filter cannot read: make the C library use clone.
    let clone3: BTreeMap<i64, Vec<SeccompRule>> = [(libc::SYS_clone3 as i64, Vec::new())].into_iter().collect();
    let enosys =
        SeccompFilter::new(clone3, SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch).ok()?;
    Some(vec![denied.try_into().ok()?, enosys.try_into().ok()?])
}

/// Installs the filter on the calling thread (no_new_privs must already be set); `no_locks`
/// refuses file locks as well.
pub fn apply(no_locks: bool) -> bool {
    match filters(no_locks) {
        Some(programs) => programs.iter().all(|p| seccompiler::apply_filter(p).is_ok()),
        None => false,
    }
}
