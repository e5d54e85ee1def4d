//! Whose ids a run has. A run never has a root host's: it runs as `nobody` (or the ids the user
//! configured), mapped from its user namespace's inside id, so whatever it reaches sees no
//! privilege. Other hosts' runs keep the host's uid outside their namespace (an unprivileged
//! process can map only its own).

/// `nobody` on every mainstream distribution.
pub const NOBODY: (u32, u32) = (65534, 65534);

/// The ids runs have outside their namespaces when the host is root; `None` for other hosts.
pub fn run_as(configured: Option<(u32, u32)>) -> Option<(u32, u32)> {
    nix::unistd::geteuid().is_root().then(|| configured.unwrap_or(NOBODY))
}
