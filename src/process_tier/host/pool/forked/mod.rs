//! The production source of a pool's processes: forked from one template (started on first need,
//! again if it died: its children died with it), then booted. The template is known through
//! `Forks`, so restarts and failures are unit-tested with a fake template (`tests`).

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::super::process::{ProcessSpec, SandboxProcess, BOOT_DEADLINE};
use super::super::template::Template;
use super::{Pooled, Source};
use crate::panic::Lock;

/// A template as the source needs it.
pub trait Forks: Send + Sync + 'static {
    type Process: Pooled;
    /// A fresh process, not yet booted.
    fn fork(self: &Arc<Self>, spec: &ProcessSpec, frame_cap: usize) -> Result<Self::Process, String>;
    /// Waits (bounded) until a forked process has its first isolate ready; one that has not is
    /// killed and reaped before this returns.
    fn boot(process: &mut Self::Process) -> Result<(), String>;
    /// Whether it can still fork.
    fn alive(&self) -> bool;
    /// Kills it, and every process it forked.
    fn kill(&self);
}

impl Forks for Template {
    type Process = SandboxProcess;

    fn fork(self: &Arc<Self>, spec: &ProcessSpec, frame_cap: usize) -> Result<SandboxProcess, String> {
        Template::fork(self, spec, frame_cap)
    }

    fn boot(process: &mut SandboxProcess) -> Result<(), String> {
        let booted = process.await_boot(Instant::now() + BOOT_DEADLINE);
        if booted.is_err() {
            process.kill();
            process.reap_blocking();
        }
        booted
    }

    fn alive(&self) -> bool {
        Template::alive(self)
    }

    fn kill(&self) {
        Template::kill(self)
    }
}

type StartTemplate<T> = Box<dyn Fn(&ProcessSpec) -> Result<T, String> + Send + Sync>;

/// Processes forked from one template and booted.
pub struct TemplateSource<T: Forks = Template> {
    spec: ProcessSpec,
    frame_cap: usize,
    start_template: StartTemplate<T>,
    template: Mutex<Option<Arc<T>>>,
}

impl TemplateSource {
    pub fn new(spec: ProcessSpec, frame_cap: usize) -> TemplateSource {
        TemplateSource::with_templates(spec, frame_cap, Box::new(Template::start))
    }
}

impl<T: Forks> TemplateSource<T> {
    fn with_templates(spec: ProcessSpec, frame_cap: usize, start_template: StartTemplate<T>) -> Self {
        TemplateSource { spec, frame_cap, start_template, template: Mutex::new(None) }
    }

    /// The template, started (again, if the last one died: its children died with it) here.
    fn template(&self, closed: &dyn Fn() -> bool) -> Result<Arc<T>, String> {
        let mut slot = self.template.locked();
        if let Some(template) = slot.as_ref().filter(|t| t.alive()) {
            return Ok(template.clone());
        }
        if closed() {
            return Err("failed to start the isolate's sandbox process: the runtime was disposed".into());
        }
        let template = Arc::new((self.start_template)(&self.spec)?);
        *slot = Some(template.clone());
        Ok(template)
    }
}

impl<T: Forks> Source for TemplateSource<T> {
    type Process = T::Process;

    /// A fresh process, forked from the template and booted (its first isolate prepared).
    fn start(&self, closed: &dyn Fn() -> bool) -> Result<T::Process, String> {
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
        let booted = T::boot(&mut process);
        super::super::trace!("fork: booted");
        if let Err(e) = booted {
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
