//! Multi-turn sessions (`--turns T --think-time 2s`): each arrival of the process starts a
//! conversation of T turns.
//!
//! A session's turns are written together and in order, right after its first turn, which
//! carries the session's arrival (`offset_ns` in open loop). A later turn has no offset: `fire`
//! sends it `think_time_ns` after the previous turn's `done`, with the earlier turns' prompts and
//! the answers it actually received as history, so the context grows turn by turn with real
//! generated text. Each turn's own prompt (its new user message) is drawn like any prompt, and
//! the per-run salt goes only before the first turn, which every later turn repeats.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Turns per session and the think time between them.
#[derive(Debug, Clone)]
pub struct Sessions {
    /// Turns per session; 1 means plain requests without sessions.
    pub turns: u32,
    /// Think time before each later turn.
    pub think: ThinkTime,
    /// The seed's think-time stream.
    pub rng: ChaCha8Rng,
}

/// How long a user thinks between turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkTime {
    /// Always this long, in ns.
    Fixed(u64),
    /// Uniform in `[low, high]` ns.
    Uniform(u64, u64),
}

impl Sessions {
    /// No sessions: one turn per arrival.
    pub fn none(rng: ChaCha8Rng) -> Self {
        Self {
            turns: 1,
            think: ThinkTime::Fixed(0),
            rng,
        }
    }

    /// The think time before the next later turn.
    pub fn think_ns(&mut self) -> u64 {
        match self.think {
            ThinkTime::Fixed(ns) => ns,
            ThinkTime::Uniform(low, high) => self.rng.random_range(low..=high),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn uniform_think_times_stay_in_range() {
        let mut s = Sessions {
            turns: 3,
            think: ThinkTime::Uniform(5, 9),
            rng: ChaCha8Rng::seed_from_u64(1),
        };
        let xs: Vec<u64> = (0..200).map(|_| s.think_ns()).collect();
        assert!(xs.iter().all(|x| (5..=9).contains(x)));
        assert!(xs.contains(&5) && xs.contains(&9));
    }
}
