//! What a forked sandbox process does while it waits for its run: the pages its run would fault
//! in, made its own a slice at a time, the channel checked between slices
//! (docs/typescript.md#containment).
//!
//! A forked process shares the template's pages until it writes one (a copy-on-write fault) and
//! maps none of the addon's text (fork copies no page table entries of a file mapping), so a
//! first run faults in both. Once the process has waited [`AFTER`] (a run that comes sooner,
//! back to back, never waits behind a slice), it writes its young generation
//! ([`Prepared::pretouch`]), strips and compiles a program it never runs (the memory a run's
//! strip and compile write) and then maps the addon's text (`MADV_POPULATE_READ`, about 0.05 ms
//! a 2 MiB slice here). None of it changes anything a program sees.

use std::sync::Arc;
use std::time::Duration;

use super::inbox::Inbox;
use crate::isolate::first_terminal::RunClaim;
use crate::isolate::run::Prepared;
use crate::isolate::source::ProgramText;
use crate::os::own_text;

/// How long a process waits for its run before it starts.
const AFTER: Duration = Duration::from_millis(1);
/// A program of the shapes models write (typed functions, an object built and summarised, one
/// log line), stripped and compiled, never run.
const REHEARSAL: &str = r#"(async () => {
interface Entry { id: number; name: string; score: number; tags: string[]; active: boolean }
function makeEntry(i: number): Entry {
  return { id: i, name: 'item-' + i, score: (i * 37) % 101, tags: ['a', 'b', String(i % 7)], active: i % 3 !== 0 }
}
function summarize(entries: Entry[]): { byTag: Record<string, number>; top: string[] } {
  const byTag: Record<string, number> = {}
  for (const e of entries) for (const t of e.tags) byTag[t] = (byTag[t] ?? 0) + 1
  const top = entries.filter((e) => e.active).sort((a, b) => b.score - a.score || a.id - b.id).slice(0, 5).map((e) => e.name)
  return { byTag, top }
}
const data: Record<string, Entry> = {}
for (let i = 0; i < 1000; i++) data['k' + i] = makeEntry(i)
const summary = summarize(Object.values(data))
const text = JSON.stringify(data)
console.log(`tags ${Object.keys(summary.byTag).length}, ${text.length} bytes`)
return { size: text.length, top: summary.top }
})"#;
/// The addon's text mapped at a time.
const TEXT_SLICE: usize = 2 << 20;

/// The addon's text still to map: `None` until the first wait looks it up.
#[derive(Default)]
pub(super) struct Pretouch {
    text: Option<(usize, usize)>,
}

impl Pretouch {
    /// Waits for the channel (and hands on what comes) or, when nothing came, does one slice of
    /// what is left; once nothing is left, only waits.
    pub(super) fn wait(&mut self, inbox: &Inbox, prepared: &mut Prepared, shared: &Arc<RunClaim>) {
        if prepared.pretouch_pending() {
            let pause = if prepared.pretouch_begun() { Duration::ZERO } else { AFTER };
            if !inbox.read_within(pause) {
                prepared.pretouch(shared);
                if !prepared.pretouch_pending() {
                    if let Ok(js) = super::strip_program(&ProgramText::plain(REHEARSAL)) {
                        prepared.compile_only(&js.text);
                    }
                    self.text = own_text::range();
                }
            }
            return;
        }
        let Some((start, len)) = self.text.filter(|&(_, len)| len > 0) else { return inbox.read_blocking() };
        if inbox.read_within(Duration::ZERO) {
            return;
        }
        let slice = len.min(TEXT_SLICE);
        // A kernel without MADV_POPULATE_READ (before 5.14) refuses: the run faults them in.
        self.text = own_text::populate(start, slice).then_some((start + slice, len - slice));
    }
}
