//! What a forked sandbox process does while it waits for its run: the pages its run would fault
//! in, made its own a slice at a time, the channel checked between slices
//! (docs/typescript.md#containment).
//!
//! A forked process shares the template's pages until it writes one (a copy-on-write fault) and
//! maps none of the addon's text (fork copies no page table entries of a file mapping), so a
//! first run faults in both. Once the process has waited [`AFTER`] (a run that comes sooner,
//! back to back, never waits behind a slice, nor shares a CPU with one), it writes its young
//! generation ([`HEAP_SLICE`]), strips and then compiles a program it never runs (the memory a
//! run's strip and compile write), fills the young generation until it has been collected
//! twice (the run then starts with it empty) and then maps the addon's text
//! (`MADV_POPULATE_READ`, about 0.05 ms a 2 MiB slice here). None of it changes anything a
//! program sees. A slice that had to share its CPU (the run before still running beside it on a
//! loaded host) makes the pretouch wait [`AFTER`] again, since it would take that CPU from a
//! run; the fourth such slice ends it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::inbox::Inbox;
use crate::isolate::first_terminal::RunClaim;
use crate::isolate::run::Prepared;
use crate::isolate::source::ProgramText;
use crate::os::{c_heap, cpu_clock, own_text};

/// How long a process waits for its run before it starts.
const AFTER: Duration = Duration::from_millis(5);
/// How many slices of the young generation are written: 1.25 MiB of young objects, which takes
/// it through its first collections (measured: a forked process's first realistic run took ~605
/// page faults, ~300 after 1.2 MiB; 2.4 and 4.8 MiB took no more off).
const HEAP_SLICES: usize = 10;
/// One slice: 32 dead arrays of 1 000 holes (4 KiB each), 128 KiB, about 0.1 ms here. It
/// touches no global and leaves nothing a program sees; the young generation's pages (the
/// template's, copied on a write) are then this process's own before its run allocates there.
const HEAP_SLICE: &str = "(() => { const ring = []; for (let i = 0; i < 32; i++) ring[i & 7] = new Array(1000) })()";
/// How often a slice may share its CPU before the pretouch stops: after each it waits
/// [`AFTER`] again, then goes on. Stopped for good at the first, it left the young generation
/// part full in 8 of 30 paced realistic runs interleaved with a thread tier's (each of those
/// then collected it, which a process that did no pretouch does not); with three, none.
const SHARED_SLICES: usize = 3;
/// What [`HEAP_SLICE`] allocates.
const SLICE_BYTES: usize = 128 << 10;
/// One dead array of 1 000 holes.
const ARRAY_BYTES: usize = 4 << 10;
/// At most this many steps (whole slices, then the rest) go to emptying the young generation.
const EMPTY_STEPS: usize = 64;
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

/// A slice whose wall time passed its CPU time by more than half (and 0.1 ms) ran beside
/// something else on its CPU: the run before, back to back on a loaded host, which the rest of
/// the pretouch would slow down. The process then waits [`AFTER`] before its next slice.
fn ran_beside_others(wall: Duration, cpu_ns: u64) -> bool {
    wall.as_nanos() as u64 > cpu_ns + cpu_ns / 2 + 100_000
}

/// What the pretouch does next, in order.
enum Step {
    /// Writes heap slice n ([`HEAP_SLICE`]).
    Heap(usize),
    /// Strips [`REHEARSAL`].
    Strip,
    /// Compiles the stripped rehearsal.
    Compile(String),
    /// Fills the young generation until it has been collected twice (step n, collections so
    /// far): the second promotes what survived the first (the pretouch's own compiled scripts),
    /// so the run starts with it about as empty as a fresh isolate's, not part full of the
    /// pretouch's garbage, which had each paced realistic run collect it (copying the run's
    /// live objects).
    Empty(usize, usize),
    /// Maps the addon's text still unmapped: (start, length).
    Text(usize, usize),
    /// Makes the C heap's pages this process's own.
    CHeap,
    /// Nothing left, or the CPU was shared too often: only waits.
    Done,
}

/// A waiting process's pretouch, a step at a time.
pub(super) struct Pretouch {
    next: Step,
    /// Slices that shared their CPU so far.
    shared: usize,
    /// The last one did: the next waits [`AFTER`] first.
    shared_last: bool,
}

impl Default for Pretouch {
    fn default() -> Pretouch {
        Pretouch { next: Step::Heap(0), shared: 0, shared_last: false }
    }
}

impl Pretouch {
    /// Waits for the channel (and hands on what comes) or, when nothing came, does one step of
    /// what is left; once nothing is left (or the CPU was shared too often), only waits.
    pub(super) fn wait(&mut self, inbox: &Inbox, prepared: &mut Prepared, shared: &Arc<RunClaim>) {
        let pause = match self.next {
            Step::Done => return inbox.read_blocking(),
            Step::Heap(0) => AFTER,
            _ if self.shared_last => AFTER,
            _ => Duration::ZERO,
        };
        if inbox.read_within(pause) {
            return;
        }
        let clock = cpu_clock::current_thread_clock();
        let (began, cpu_began) = (Instant::now(), cpu_clock::thread_cpu_ns(clock));
        self.next = match std::mem::replace(&mut self.next, Step::Done) {
            Step::Heap(n) => {
                prepared.run_unseen(HEAP_SLICE);
                if n + 1 < HEAP_SLICES {
                    Step::Heap(n + 1)
                } else {
                    Step::Strip
                }
            }
            Step::Strip => match super::strip_program(&ProgramText::plain(REHEARSAL)) {
                Ok(js) => Step::Compile(js.text),
                Err(_) => text(),
            },
            Step::Compile(js) => {
                prepared.compile_only(&js);
                Step::Empty(0, 0)
            }
            Step::Empty(n, collections) => match prepared.young_space() {
                Some((used, free)) => {
                    // Whole slices while more than two fit, then the rest and two arrays more,
                    // none of them kept: the first collection comes within two arrays of the end.
                    // After it V8's count of what is free runs ahead of its next collection,
                    // so the rest goes four arrays a step.
                    if free > 2 * SLICE_BYTES {
                        prepared.run_unseen(HEAP_SLICE);
                    } else {
                        let rest = free / ARRAY_BYTES + 2;
                        let arrays = if collections == 0 { rest } else { rest.min(4) };
                        prepared
                            .run_unseen(&format!("(() => {{ for (let i = 0; i < {arrays}; i++) new Array(1000) }})()"));
                    }
                    let collections =
                        collections + usize::from(prepared.young_space().is_none_or(|(now, _)| now < used));
                    if collections >= 2 || n + 1 >= EMPTY_STEPS {
                        text()
                    } else {
                        Step::Empty(n + 1, collections)
                    }
                }
                None => text(),
            },
            Step::Text(start, len) => {
                let slice = len.min(TEXT_SLICE);
                // A kernel without MADV_POPULATE_READ (before 5.14) refuses: the run faults them in.
                if own_text::populate(start, slice) && len > slice {
                    Step::Text(start + slice, len - slice)
                } else {
                    Step::CHeap
                }
            }
            Step::CHeap => {
                if let Some((start, len)) = c_heap::range() {
                    c_heap::populate(start, len);
                }
                Step::Done
            }
            Step::Done => Step::Done,
        };
        // The pretouch's collections are not the run's (its start notes the heap again).
        shared.forget_heap();
        let cpu_ns = cpu_clock::thread_cpu_ns(clock).saturating_sub(cpu_began);
        self.shared_last = ran_beside_others(began.elapsed(), cpu_ns);
        if self.shared_last {
            self.shared += 1;
            if self.shared > SHARED_SLICES {
                self.next = Step::Done;
            }
        }
    }
}

/// The first text step: the addon's whole executable segment, when the loader names it.
fn text() -> Step {
    own_text::range().map_or(Step::CHeap, |(start, len)| Step::Text(start, len))
}

#[cfg(test)]
mod tests {
    use super::ran_beside_others;
    use std::time::Duration;

    #[test]
    fn a_slice_that_waited_for_its_cpu_stops_the_pretouch() {
        let ms = |m: f64| Duration::from_secs_f64(m / 1000.0);
        assert!(!ran_beside_others(ms(0.12), 100_000));
        assert!(!ran_beside_others(ms(0.5), 400_000));
        assert!(ran_beside_others(ms(0.3), 100_000));
        assert!(ran_beside_others(ms(2.0), 1_000_000));
    }
}
