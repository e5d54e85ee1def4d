//! The Python template (docs/python.md#the-template): one interpreter per runtime that has
//! started CPython and imported the bootstrap, and forks a child per run. `host` is the host's
//! side (starting it, asking for a fork, the exit record); `child` is the entry a forked child
//! calls to take its run's layers (`crn_python_enter`, through ctypes from `py/template.py`);
//! `serve` is the template's own loop (`crn_template_serve`: the fork requests, the reaping);
//! `frames` is what the host and the template say (src/channel/table).

mod child;
mod frames;
pub mod host;
mod serve;
