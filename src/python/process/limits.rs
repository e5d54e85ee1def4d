//! Resource limits for the child (docs/budgets-and-ledger.md#resource-limits). The host computes
//! them from its own limits (which the child would inherit) and applies them between fork and exec,
//! so they hold from the interpreter's first instruction; the bootstrap re-asserts them
//! idempotently after `boot` and runs the inherited-`RLIMIT_AS` budget re-check.

use nix::sys::resource::{getrlimit, setrlimit, Resource, RLIM_INFINITY};

/// One limit: (soft, hard), `RLIM_INFINITY` meaning no ceiling.
pub type Pair = (u64, u64);

/// `clamped(soft, hard)`: each side never above its inherited counterpart, soft never above hard,
/// and for the CPU limit a one-second SIGXCPU window before SIGKILL when the two would meet. It is
/// idempotent, so the bootstrap can re-assert what the host applied before exec.
pub fn clamped(wanted: Pair, inherited: Pair, cpu: bool) -> Pair {
    let ceil = |v: u64, limit: u64| {
        if limit == RLIM_INFINITY {
            v
        } else {
            v.min(limit)
        }
    };
    let hard = ceil(wanted.1, inherited.1);
    let mut soft = ceil(wanted.0, inherited.0).min(hard);
    if cpu && soft == hard && hard >= 2 && hard != RLIM_INFINITY {
        soft = hard - 1;
    }
    (soft, hard)
}

/// The limits one run's child gets, in the order they are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitPlan {
    pub cpu: Pair,
    /// `None` on macOS, where `RLIMIT_AS` is never applied.
    pub address_space: Option<Pair>,
    /// The largest file the child may write (its scratch directory's size cap).
    pub file_size: Pair,
}

fn inherited(r: Resource) -> Pair {
    getrlimit(r).unwrap_or((RLIM_INFINITY, RLIM_INFINITY))
}

impl LimitPlan {
    pub fn for_host(cpu_seconds: u64, address_space_bytes: u64, file_size_bytes: u64) -> Self {
        let cpu = clamped((cpu_seconds, cpu_seconds.saturating_add(1)), inherited(Resource::RLIMIT_CPU), true);
        let address_space = if cfg!(target_os = "macos") {
            None
        } else {
            Some(clamped((address_space_bytes, address_space_bytes), inherited(Resource::RLIMIT_AS), false))
        };
        let file_size = clamped((file_size_bytes, file_size_bytes), inherited(Resource::RLIMIT_FSIZE), false);
        LimitPlan { cpu, address_space, file_size }
    }

    /// The plan clamped again to this process's limits: a child forked from the Python template
    /// gets no more than the template inherited (a wrapper may have lowered them before it
    /// started), as a spawned child gets no more than the wrapper leaves it. Called in the
    /// template's library (crates/python-entry), not the addon.
    #[allow(dead_code)]
    pub fn within_inherited(self) -> Self {
        LimitPlan {
            cpu: clamped(self.cpu, inherited(Resource::RLIMIT_CPU), true),
            address_space: self.address_space.map(|pair| clamped(pair, inherited(Resource::RLIMIT_AS), false)),
            file_size: clamped(self.file_size, inherited(Resource::RLIMIT_FSIZE), false),
        }
    }

    /// Applies the plan, then makes SIGXCPU (the CPU timeout) able to kill: an inherited ignore
    /// or block would defeat it. For a forked, single-threaded child (async-signal-safe calls).
    pub fn apply_to_child(&self) -> nix::Result<()> {
        self.apply()?;
        // SAFETY: signal-disposition and mask calls on this single-threaded process.
        unsafe {
            libc::signal(libc::SIGXCPU, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGXCPU);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
        Ok(())
    }

    /// Applies the plan in the child between fork and exec (async-signal-safe: setrlimit only).
    pub fn apply(&self) -> nix::Result<()> {
        setrlimit(Resource::RLIMIT_CORE, 0, 0)?;
        setrlimit(Resource::RLIMIT_FSIZE, self.file_size.0, self.file_size.1)?;
        setrlimit(Resource::RLIMIT_CPU, self.cpu.0, self.cpu.1)?;
        if let Some((soft, hard)) = self.address_space {
            setrlimit(Resource::RLIMIT_AS, soft, hard)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INF: u64 = RLIM_INFINITY;

    #[test]
    fn clamping() {
        assert_eq!(clamped((60, 61), (INF, INF), true), (60, 61));
        assert_eq!(clamped((60, 61), (60, 60), true), (59, 60), "SIGXCPU window before SIGKILL");
        assert_eq!(clamped((60, 61), (10, INF), true), (10, 61), "a stricter inherited soft limit holds");
        assert_eq!(clamped((60, 61), (INF, 30), true), (29, 30));
        assert_eq!(clamped((60, 61), (1, 1), true), (1, 1), "the known blind spot: a dual limit of 1");
        assert_eq!(clamped((512, 512), (INF, INF), false), (512, 512));
        assert_eq!(clamped((512, 512), (100, 200), false), (100, 200));
        assert_eq!(clamped((512, 512), (INF, 300), false), (300, 300));
    }

    #[test]
    fn idempotent() {
        for (wanted, inherited, cpu) in [
            ((60, 61), (INF, INF), true),
            ((60, 61), (60, 60), true),
            ((1, 2), (INF, INF), true),
            ((60, 61), (10, 30), true),
            ((512, 512), (100, 200), false),
        ] {
            let once = clamped(wanted, inherited, cpu);
            assert_eq!(clamped(wanted, once, cpu), once, "{wanted:?} under {inherited:?}");
        }
    }
}
