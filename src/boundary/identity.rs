//! The ids a root host's runs have, as both runtimes' options carry them (`runAs`).

use napi_derive::napi;

/// `runAs`: the uid and gid a run has outside its namespaces when the host runs as root
/// (default `nobody`, 65534). Other hosts' runs have the host's own ids.
#[napi(object)]
#[derive(Clone, Copy)]
pub struct RunAs {
    pub uid: u32,
    pub gid: u32,
}

/// The ids runs of this host have, from the option (`None` unless the host is root).
pub fn run_as(option: Option<RunAs>) -> Option<(u32, u32)> {
    crate::sandbox::identity::run_as(option.map(|r| (r.uid, r.gid)))
}
