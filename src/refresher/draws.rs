//! The shell's random draws. Rules take a draw as an argument (`Cadence::pause(u)`, the fleet's
//! backoff and renewal jitter); the shell draws from the [`Draws`] it was handed at start, so
//! a test hands it a seed and asserts exact instants instead of ranges.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A source of random draws, owned by the task that draws.
pub struct Draws(StdRng);

impl Draws {
    /// Seeded from the operating system: what every sentinel draws from outside tests.
    pub fn from_entropy() -> Self {
        Draws(StdRng::from_os_rng())
    }

    /// The same draws every run, for tests.
    #[cfg(test)]
    pub fn seeded(seed: u64) -> Self {
        Draws(StdRng::seed_from_u64(seed))
    }

    /// Uniform in [0, 1): the draw the rules' jitter takes.
    pub fn uniform(&mut self) -> f64 {
        self.0.random()
    }

    /// A seed for a part that keeps its own generator (the circuit breaker's jitter).
    pub fn seed(&mut self) -> u64 {
        self.0.random()
    }
}
