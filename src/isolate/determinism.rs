//! A durable attempt's world as data (docs/durable.md#determinism): the journal's seed and clock
//! (`DurableConfig`), and the virtual clock and seeded generator every attempt of the run reads
//! (`Durable`). The natives that put them behind the program's globals are `durable.rs`'s.

use std::time::{Duration, Instant};

/// What the host gives a durable attempt: the journal's seed and clock, and how many calls the
/// journal answers (until the program has made that many, the attempt is replaying: its timers
/// fire without waiting).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DurableConfig {
    pub seed: u64,
    pub clock_ms: f64,
    pub replayed_calls: u64,
}

/// How far the virtual clock moves each time a binding call's answer reaches the program.
const STEP_PER_ANSWER: Duration = Duration::from_millis(1);

/// One durable attempt's clock and generator.
pub struct Durable {
    config: DurableConfig,
    rng: Xoshiro256,
    /// Virtual time since the attempt began.
    elapsed: Duration,
    /// The real instant virtual time counts from: timers are queued on `origin + elapsed`.
    origin: Instant,
}

impl Durable {
    pub fn new(config: DurableConfig) -> Self {
        Durable { config, rng: Xoshiro256::seeded(config.seed), elapsed: Duration::ZERO, origin: Instant::now() }
    }

    /// `Date.now()`: whole milliseconds since the epoch.
    pub fn date_now(&self) -> f64 {
        (self.config.clock_ms + self.elapsed.as_millis() as f64).floor()
    }

    /// `performance.now()`: milliseconds since the attempt began.
    pub fn performance_now(&self) -> f64 {
        self.elapsed.as_secs_f64() * 1000.0
    }

    /// The loop's present, on the same scale as the timers' due times.
    pub fn now(&self) -> Instant {
        self.origin + self.elapsed
    }

    /// A binding call's answer reached the program.
    pub fn answered(&mut self) {
        self.elapsed += STEP_PER_ANSWER;
    }

    /// Moves the clock to `due` (a timer's), never back.
    pub fn advance_to(&mut self, due: Instant) {
        self.elapsed = self.elapsed.max(due.saturating_duration_since(self.origin));
    }

    /// Whether the journal still answers calls the program is yet to make.
    pub fn replaying(&self, calls_made: u64) -> bool {
        calls_made < self.config.replayed_calls
    }

    /// `Math.random()`: 53 random bits in [0, 1).
    pub fn random(&mut self) -> f64 {
        (self.rng.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `crypto.getRandomValues` / `randomUUID`: bytes from the same generator.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let word = self.rng.next().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

/// xoshiro256** seeded through SplitMix64 (Blackman and Vigna). Written here rather than taken
/// from `rand`: a journal stored today must draw the same numbers under every later version of
/// this package, and `rand`'s small generator promises no such thing across its releases.
struct Xoshiro256([u64; 4]);

impl Xoshiro256 {
    fn seeded(seed: u64) -> Self {
        let mut x = seed;
        let mut split = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Xoshiro256([split(), split(), split(), split()])
    }

    fn next(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn durable(seed: u64) -> Durable {
        Durable::new(DurableConfig { seed, clock_ms: 1_700_000_000_000.0, replayed_calls: 2 })
    }

    #[test]
    fn the_same_seed_draws_the_same_numbers() {
        let (mut a, mut b, mut c) = (durable(7), durable(7), durable(8));
        let xs: Vec<f64> = (0..64).map(|_| a.random()).collect();
        let ys: Vec<f64> = (0..64).map(|_| b.random()).collect();
        let zs: Vec<f64> = (0..64).map(|_| c.random()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
    }

    #[test]
    fn the_generator_is_xoshiro256_starstar_over_splitmix64() {
        // The published reference values: a journal's numbers may never change.
        let mut rng = Xoshiro256::seeded(0);
        assert_eq!(rng.0[0], 0xe220_a839_7b1d_cdaf);
        let first = rng.next();
        let mut again = Xoshiro256::seeded(0);
        assert_eq!(again.next(), first);
        assert_eq!(Xoshiro256([1, 2, 3, 4]).next(), 11520);
    }

    #[test]
    fn bytes_fill_odd_lengths() {
        let mut a = durable(1);
        let mut buf = [0u8; 13];
        a.fill(&mut buf);
        assert!(buf.iter().any(|b| *b != 0));
    }

    #[test]
    fn the_clock_moves_per_answer_and_jumps_to_timers_never_back() {
        let mut d = durable(1);
        assert_eq!(d.date_now(), 1_700_000_000_000.0);
        assert_eq!(d.performance_now(), 0.0);
        d.answered();
        assert_eq!(d.date_now(), 1_700_000_000_001.0);
        let due = d.now() + Duration::from_millis(250);
        d.advance_to(due);
        assert_eq!(d.performance_now(), 251.0);
        d.advance_to(d.now() - Duration::from_millis(100));
        assert_eq!(d.performance_now(), 251.0);
        assert!(d.replaying(1) && !d.replaying(2));
    }
}
