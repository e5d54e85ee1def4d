//! The deadlines every supervised run shares, on the caller's clock: the wall ceiling until the
//! run's end is claimed; then a grace in which the child may stop on its own, the kill when it
//! has not, and (for a child whose pipes the supervisor reads to their end) how long it waits for
//! them to close after that. The first claim wins; each deadline falls due once.

use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    /// The wall ceiling; gone once the end is claimed (the claim's own deadlines follow).
    wall: Option<Instant>,
    /// When the end was claimed.
    claimed: Option<Instant>,
    /// When the child is killed if it has not stopped.
    kill: Option<Instant>,
    /// When the supervisor stops waiting for the child's pipes to close.
    close: Option<Instant>,
}

/// What fell due at one moment (each once).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    pub wall: bool,
    pub kill: bool,
    pub close: bool,
}

impl Deadlines {
    /// A run whose wall ceiling is `wall` (`None`: none).
    pub fn new(wall: Option<Instant>) -> Deadlines {
        Deadlines { wall, claimed: None, kill: None, close: None }
    }

    /// The end is claimed at `at`: the wall ceiling no longer applies; the child is killed `grace`
    /// later unless it stopped, and its pipes are waited for `close_after` beyond that. A later
    /// claim changes nothing.
    pub fn claim(&mut self, at: Instant, grace: Duration, close_after: Option<Duration>) {
        if self.claimed.is_some() {
            return;
        }
        self.claimed = Some(at);
        self.wall = None;
        self.kill = Some(at + grace);
        self.close = close_after.map(|slack| at + grace + slack);
    }

    /// What is due at `now`; each deadline is reported once.
    pub fn due(&mut self, now: Instant) -> Due {
        let fire = |slot: &mut Option<Instant>| slot.take_if(|at| now >= *at).is_some();
        Due { wall: fire(&mut self.wall), kill: fire(&mut self.kill), close: fire(&mut self.close) }
    }

    /// When the child is to be killed, while that is still to come.
    pub fn kill_at(&self) -> Option<Instant> {
        self.kill
    }

    /// Moves the kill to `at` (after a claim; the isolate supervisor gives a process the grace
    /// in CPU time when the machine has not let it run).
    pub fn defer_kill(&mut self, at: Instant) {
        if self.claimed.is_some() {
            self.kill = Some(at);
        }
    }

    /// The soonest deadline still to come.
    pub fn next(&self) -> Option<Instant> {
        [self.wall, self.kill, self.close].into_iter().flatten().min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_deferred_kill_falls_due_again_and_only_after_a_claim() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(None);
        d.defer_kill(t0 + 5 * MS);
        assert_eq!((d.kill_at(), d.next()), (None, None));
        d.claim(t0, 50 * MS, None);
        assert_eq!(d.kill_at(), Some(t0 + 50 * MS));
        assert_eq!(d.due(t0 + 50 * MS), Due { kill: true, ..Due::default() });
        assert_eq!(d.kill_at(), None);
        d.defer_kill(t0 + 80 * MS);
        assert_eq!(d.due(t0 + 79 * MS), Due::default());
        assert_eq!(d.due(t0 + 80 * MS), Due { kill: true, ..Due::default() });
        assert_eq!(d.next(), None);
    }

    #[test]
    fn the_wall_ceiling_falls_due_once_from_its_instant_on() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(Some(t0 + 100 * MS));
        assert_eq!(d.next(), Some(t0 + 100 * MS));
        assert_eq!(d.due(t0 + 99 * MS), Due::default());
        assert_eq!(d.due(t0 + 150 * MS), Due { wall: true, ..Due::default() });
        assert_eq!(d.due(t0 + 200 * MS), Due::default());
        assert_eq!(d.next(), None);
    }

    #[test]
    fn a_claim_replaces_the_wall_with_the_kill_then_the_close() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(Some(t0 + 1000 * MS));
        d.claim(t0 + 10 * MS, 50 * MS, Some(2000 * MS));
        assert_eq!(d.next(), Some(t0 + 60 * MS));
        assert_eq!(d.due(t0 + 59 * MS), Due::default());
        assert_eq!(d.due(t0 + 60 * MS), Due { kill: true, ..Due::default() });
        assert_eq!(d.next(), Some(t0 + 2060 * MS));
        // The wall ceiling's instant passes unnoticed: the claim decided the end.
        assert_eq!(d.due(t0 + 1500 * MS), Due::default());
        assert_eq!(d.due(t0 + 2060 * MS), Due { close: true, ..Due::default() });
        assert_eq!(d.next(), None);
    }

    #[test]
    fn the_first_claim_wins() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(None);
        d.claim(t0, 50 * MS, None);
        d.claim(t0 + 5 * MS, Duration::ZERO, Some(MS));
        assert_eq!(d.next(), Some(t0 + 50 * MS));
        // Everything due at once comes in one report.
        let mut late = Deadlines::new(Some(t0));
        late.claim(t0 + MS, MS, Some(MS));
        assert_eq!(late.due(t0 + 10 * MS), Due { wall: false, kill: true, close: true });
    }
}
