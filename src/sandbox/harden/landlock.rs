//! Landlock for the program process: file access only beneath the paths the plan lists, no TCP
//! bind or connect, and no signals or abstract Unix sockets reaching outside its domain.

use std::os::fd::BorrowedFd;
use std::path::PathBuf;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, LandlockStatus, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

/// The features asked for: file system, TCP and scoping (ABI 6, Linux 6.12). Older kernels get
/// what they support (best effort), and the report says which ABI was enforced.
const WANTED: ABI = ABI::V6;

/// Restricts the calling thread (and what it later starts). Returns the kernel's Landlock ABI when
/// the restriction holds, 0 when the kernel has no Landlock or refused it. `list_only` paths may
/// have their directories listed, nothing more. `no_tcp`: TCP bind and connect are denied too.
/// `opened`: trees already opened (a file policy's own paths, src/sandbox/exact.rs), each with
/// whether it is writable: the rule is on that object, whatever its path names by now.
pub fn restrict(
    read_only: &[PathBuf],
    read_write: &[PathBuf],
    list_only: &[PathBuf],
    opened: &[(BorrowedFd, bool)],
    no_tcp: bool,
) -> u32 {
    let opened_rules = opened.iter().map(|&(fd, write)| {
        let access = if write { AccessFs::from_all(WANTED) } else { AccessFs::from_read(WANTED) };
        Ok::<_, landlock::RulesetError>(PathBeneath::new(fd, access))
    });
    let created = Ruleset::default()
        .handle_access(AccessFs::from_all(WANTED))
        .and_then(|r| if no_tcp { r.handle_access(AccessNet::from_all(WANTED)) } else { Ok(r) })
        .and_then(|r| r.scope(Scope::from_all(WANTED)))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(list_only, AccessFs::ReadDir)))
        .and_then(|r| r.add_rules(path_beneath_rules(read_only, AccessFs::from_read(WANTED))))
        .and_then(|r| r.add_rules(path_beneath_rules(read_write, AccessFs::from_all(WANTED))))
        .and_then(|r| r.add_rules(opened_rules));
    let Ok(created) = created else { return 0 };
    match created.restrict_self() {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced => match status.landlock {
            LandlockStatus::Available { effective_abi, kernel_abi } => {
                kernel_abi.map_or(effective_abi as u32, |k| k.max(0) as u32)
            }
            _ => 0,
        },
        _ => 0,
    }
}
