//! Template restarts and fork failures, with a fake template whose forks and boots follow a plan.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::*;
use crate::process_tier::host::pool::Reported;

/// What a fork does.
enum Fork {
    /// A child that boots.
    Child,
    /// A child whose first isolate is never ready.
    Unbootable(&'static str),
    /// The fork fails; the template stays.
    Fails(&'static str),
    /// The template died before it answered.
    Dies,
}

#[derive(Default)]
struct Plan {
    /// Reasons the next template starts fail with, in order.
    start_failures: VecDeque<&'static str>,
    /// The next forks' outcomes (a child that boots once the plan runs out).
    forks: VecDeque<Fork>,
    /// Templates started.
    started: usize,
    /// Children dropped (killed and reaped), by (template, fork).
    reaped: Vec<(usize, u32)>,
}

type World = Arc<Mutex<Plan>>;

struct FakeTemplate {
    id: usize,
    alive: AtomicBool,
    killed: AtomicBool,
    forks: Mutex<u32>,
    world: World,
}

struct Child {
    /// (template, fork)
    id: (usize, u32),
    boots: Result<(), String>,
    world: World,
}

impl Pooled for Child {
    fn idle_and_alive(&self) -> bool {
        true
    }

    fn runs(&self) -> u32 {
        0
    }

    fn count_run(&mut self) {}

    fn reported(&self) -> Reported {
        Reported::default()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.world.lock().unwrap().reaped.push(self.id);
    }
}

impl Forks for FakeTemplate {
    type Process = Child;

    fn fork(self: &Arc<Self>, _: &ProcessSpec, _: usize) -> Result<Child, String> {
        let plan = self.world.lock().unwrap().forks.pop_front().unwrap_or(Fork::Child);
        let mut forks = self.forks.lock().unwrap();
        *forks += 1;
        let child = |boots| Ok(Child { id: (self.id, *forks - 1), boots, world: self.world.clone() });
        match plan {
            Fork::Child => child(Ok(())),
            Fork::Unbootable(reason) => child(Err(reason.to_string())),
            Fork::Fails(reason) => Err(reason.to_string()),
            Fork::Dies => {
                self.alive.store(false, Ordering::SeqCst);
                Err("its template is gone".into())
            }
        }
    }

    fn boot(process: &mut Child) -> Result<(), String> {
        process.boots.clone()
    }

    fn alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    fn kill(&self) {
        self.killed.store(true, Ordering::SeqCst);
        self.alive.store(false, Ordering::SeqCst);
    }
}

fn spec() -> ProcessSpec {
    ProcessSpec {
        helper: PathBuf::from("/nonexistent/helper"),
        addon: PathBuf::from("/nonexistent/addon.node"),
        heap_mb: 64.0,
        memory_cap: 0,
        forge: None,
        run_as: None,
        children: 1,
    }
}

fn source(world: &World) -> TemplateSource<FakeTemplate> {
    let world = world.clone();
    TemplateSource::with_templates(
        spec(),
        1 << 20,
        Box::new(move |_| {
            let mut plan = world.lock().unwrap();
            if let Some(reason) = plan.start_failures.pop_front() {
                return Err(reason.to_string());
            }
            plan.started += 1;
            Ok(FakeTemplate {
                id: plan.started - 1,
                alive: AtomicBool::new(true),
                killed: AtomicBool::new(false),
                forks: Mutex::new(0),
                world: world.clone(),
            })
        }),
    )
}

fn open() -> bool {
    false
}

fn templates(world: &World) -> usize {
    world.lock().unwrap().started
}

/// The template the source holds now.
fn current(source: &TemplateSource<FakeTemplate>) -> Arc<FakeTemplate> {
    source.template.locked().clone().expect("a template")
}

#[test]
fn the_template_starts_on_first_need_and_serves_every_fork() {
    let world = World::default();
    let source = source(&world);
    assert_eq!(templates(&world), 0, "nothing started before a process is needed");
    let a = source.start(&open).expect("a process");
    let b = source.start(&open).expect("a process");
    assert_eq!((a.id, b.id, templates(&world)), ((0, 0), (0, 1), 1));
}

#[test]
fn a_template_that_died_is_replaced_before_the_next_fork() {
    let world = World::default();
    let source = source(&world);
    let _a = source.start(&open).expect("a process");
    current(&source).alive.store(false, Ordering::SeqCst);
    let b = source.start(&open).expect("a process");
    assert_eq!((b.id, templates(&world)), ((1, 0), 2));
}

#[test]
fn a_fork_that_finds_the_template_dead_is_retried_once_on_a_new_one() {
    let world = World::default();
    let source = source(&world);
    world.lock().unwrap().forks.extend([Fork::Dies]);
    let a = source.start(&open).expect("forked by the second template");
    assert_eq!((a.id, templates(&world)), ((1, 0), 2));
    // Once only: a second template that dies too fails the start.
    world.lock().unwrap().forks.extend([Fork::Dies, Fork::Dies]);
    assert_eq!(source.start(&open).err().as_deref(), Some("its template is gone"));
    assert_eq!(templates(&world), 3);
}

#[test]
fn a_fork_that_fails_with_the_template_alive_is_not_retried() {
    let world = World::default();
    let source = source(&world);
    world.lock().unwrap().forks.extend([Fork::Fails("the template could not fork (EAGAIN)")]);
    assert_eq!(source.start(&open).err().as_deref(), Some("the template could not fork (EAGAIN)"));
    assert_eq!(templates(&world), 1);
    // The same template serves the next start.
    assert_eq!(source.start(&open).expect("a process").id, (0, 1));
}

#[test]
fn a_template_that_does_not_start_fails_the_start_and_the_next_start_tries_again() {
    let world = World::default();
    let source = source(&world);
    world.lock().unwrap().start_failures.extend(["its template did not start (code=1)"]);
    assert_eq!(source.start(&open).err().as_deref(), Some("its template did not start (code=1)"));
    assert_eq!(source.start(&open).expect("a process").id, (0, 0));
}

#[test]
fn a_process_that_does_not_boot_fails_its_start_and_is_reaped() {
    let world = World::default();
    let source = source(&world);
    world.lock().unwrap().forks.extend([Fork::Unbootable("no isolate was ready in time")]);
    assert_eq!(
        source.start(&open).err().as_deref(),
        Some("failed to start the isolate's sandbox process: no isolate was ready in time")
    );
    assert_eq!(world.lock().unwrap().reaped, vec![(0, 0)]);
    // The template stays.
    assert_eq!(source.start(&open).expect("a process").id, (0, 1));
}

#[test]
fn no_template_is_started_once_the_pool_closed() {
    let world = World::default();
    let source = source(&world);
    let closed = || true;
    assert_eq!(
        source.start(&closed).err().as_deref(),
        Some("failed to start the isolate's sandbox process: the runtime was disposed")
    );
    assert_eq!(templates(&world), 0);
}

#[test]
fn close_kills_the_template_and_a_closed_pool_gets_no_new_one() {
    let world = World::default();
    let source = source(&world);
    let _a = source.start(&open).expect("a process");
    let template = current(&source);
    source.close();
    assert!(template.killed.load(Ordering::SeqCst));
    assert!(source.template.locked().is_none());
    assert!(source.start(&|| true).is_err());
    assert_eq!(templates(&world), 1);
}
