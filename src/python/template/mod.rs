//! The Python template (docs/python.md#the-template): one interpreter per runtime that has
//! started CPython and imported the bootstrap, and forks a child per run. `host` is the host's
//! side (starting it, asking for a fork, the exit record); `frames` is what the host and the
//! template say (src/channel/table). `child` (`crn_python_enter`: a forked child taking its run's
//! layers) and `serve` (`crn_template_serve`: the template's own loop, the fork requests, the
//! reaping) are the template's: they are compiled into its small library
//! (crates/python-entry), which `py/template.py` loads through ctypes, not into the addon.

mod frames;
pub mod host;
