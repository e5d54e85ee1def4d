//! The Python template (docs/python.md#the-template): one interpreter per runtime that has
//! started CPython and imported the bootstrap, and forks a child per run. `host` is the host's
//! side (starting it, asking for a fork, the exit record); `frames` is what the host and the
//! template say (src/channel/table). `serve` (`crn_template_serve`: the template's own loop, the
//! fork requests, the reaping) and `child` (a forked child reading its plan and taking its run's
//! layers; `crn_template_plan`: the program's plan for the bootstrap) are the template's: they are compiled into its small library
//! (crates/python-entry), which `py/template.py` loads through ctypes, not into the addon.

mod frames;
pub mod host;
