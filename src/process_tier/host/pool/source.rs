//! What the pool needs of the world, as traits: a source of sandbox processes, the processes as
//! far as admission cares, and a clock. Production is the template (`TemplateSource`) and
//! `Instant::now`; the unit tests (`super::tests`) drive the pool with fakes.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::super::process::{ProcessSpec, SandboxProcess, BOOT_DEADLINE};
use super::super::template::Template;
use super::Reported;
use crate::panic::Lock;

/// Starts the processes a pool hands out.
pub trait Source: Send + Sync + 'static {
    type Process: Pooled;

    /// A fresh process, ready for its first run, or why there is none. `closed` says whether the
    /// pool was closed: a source starts nothing new (a template, say) once it has.
    fn start(&self, closed: &dyn Fn() -> bool) -> Result<Self::Process, String>;

    /// The pool closed: ends whatever serves the processes (their template), and with it every
    /// process still alive.
    fn close(&self);
}

/// A process as the pool sees it. Dropping one kills it and returns only once it is reaped:
/// the pool counts it as live until then, so `max_processes` bounds processes that exist.
pub trait Pooled: Send + 'static {
    /// Whether an idle process is still usable (it said nothing, and did not exit).
    fn idle_and_alive(&self) -> bool;
    /// Runs served so far.
    fn runs(&self) -> u32;
    /// Counts one more run served.
    fn count_run(&mut self);
    /// What holds around it (the pool reports its first process's).
    fn reported(&self) -> Reported;
}

/// Where the pool's deadlines are read from.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Instant;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

impl Pooled for SandboxProcess {
    fn idle_and_alive(&self) -> bool {
        SandboxProcess::idle_and_alive(self)
    }

    fn runs(&self) -> u32 {
        self.runs
    }

    fn count_run(&mut self) {
        self.runs += 1;
    }

    fn reported(&self) -> Reported {
        Reported { helper: self.layers, allowlist: self.allowlist, memory_cgroup: self.memory_cgroup() }
    }
}

/// Processes forked from one template (started on first need, again if it died) and booted.
pub struct TemplateSource {
    spec: ProcessSpec,
    frame_cap: usize,
    template: Mutex<Option<Arc<Template>>>,
}

impl TemplateSource {
    pub fn new(spec: ProcessSpec, frame_cap: usize) -> TemplateSource {
        TemplateSource { spec, frame_cap, template: Mutex::new(None) }
    }

    /// The template, started (again, if the last one died: its children died with it) here.
    fn template(&self, closed: &dyn Fn() -> bool) -> Result<Arc<Template>, String> {
        let mut slot = self.template.locked();
        if let Some(template) = slot.as_ref().filter(|t| t.alive()) {
            return Ok(template.clone());
        }
        if closed() {
            return Err("failed to start the isolate's sandbox process: the runtime was disposed".into());
        }
        let template = Arc::new(Template::start(&self.spec)?);
        *slot = Some(template.clone());
        Ok(template)
    }
}

impl Source for TemplateSource {
    type Process = SandboxProcess;

    /// A fresh process, forked from the template and booted (its first isolate prepared).
    fn start(&self, closed: &dyn Fn() -> bool) -> Result<SandboxProcess, String> {
        let template = self.template(closed)?;
        super::super::trace!("fork: asking");
        let mut process = match template.fork(&self.spec, self.frame_cap) {
            Ok(process) => process,
            // A template that died since it was last seen alive (killed, or out of memory) took
            // its children with it; a new one serves this run.
            Err(_) if !template.alive() => self.template(closed)?.fork(&self.spec, self.frame_cap)?,
            Err(e) => return Err(e),
        };
        super::super::trace!("fork: forked");
        let booted = process.await_boot(Instant::now() + BOOT_DEADLINE);
        super::super::trace!("fork: booted");
        if let Err(e) = booted {
            process.kill();
            process.reap_blocking();
            return Err(format!("failed to start the isolate's sandbox process: {e}"));
        }
        Ok(process)
    }

    /// The template's namespace holds every process: killing it ends them all at once (and no
    /// new one can be forked).
    fn close(&self) {
        let template = self.template.locked().take();
        if let Some(template) = template {
            template.kill();
        }
    }
}
