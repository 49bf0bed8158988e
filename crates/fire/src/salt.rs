//! The per-run cache-busting salt: a few one-token words (or token ids) put before each
//! session's first prompt, drawn from this run's unique hash.
//!
//! `arrivals` only says how long the salt is and what to draw it from (the schedule's `salt`),
//! so a saved schedule stays byte-identical while every run of it sends prompts no earlier run
//! sent: a server's prefix cache, warm from the last run, cannot shorten this one's prefills.
//! Every request of a run gets the same salt, so prefixes shared within the run stay shared.

use tokenpipe_format::{Request, Salt, ONE_TOKEN_WORDS};

/// This run's salt, as text and as ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSalt {
    /// The words, space separated, for text prompts.
    pub text: String,
    /// The ids, for token-id prompts; empty when the schedule gave no id range.
    pub ids: Vec<u32>,
}

/// SplitMix64: a small, well-mixed generator, enough to spread one hash over a few draws.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl RunSalt {
    /// The salt `spec` describes, drawn from `run_hash`.
    pub fn new(spec: &Salt, run_hash: u64) -> Self {
        let mut state = run_hash;
        let own: Vec<&str> = spec.words.iter().map(String::as_str).collect();
        let words: &[&str] = if own.is_empty() {
            ONE_TOKEN_WORDS
        } else {
            &own
        };
        let text = (0..spec.tokens)
            .map(|_| words[(splitmix(&mut state) % words.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ");
        let ids = match spec.id_range {
            Some([start, end]) if end > start => (0..spec.tokens)
                .map(|_| start + (splitmix(&mut state) % u64::from(end - start)) as u32)
                .collect(),
            _ => vec![],
        };
        Self { text, ids }
    }

    /// Puts the salt before `req`'s prompt when it starts a conversation (no session, or a
    /// session's first turn); later turns repeat the first, salt included. A request outside a
    /// session with a system message (a `--depth` context) has the salt before that instead,
    /// since it comes first and a prefix cache would keep it. (A session's later turns repeat
    /// their own system message unsalted, so a session's salt stays in its first prompt.)
    pub fn apply(&self, req: &mut Request, turn: Option<u32>) {
        if turn.is_some_and(|t| t > 0) {
            return;
        }
        if let (Some(system), None) = (&mut req.system, turn) {
            *system = if system.is_empty() {
                self.text.clone()
            } else {
                format!("{} {system}", self.text)
            };
        } else if let Some(prompt) = &mut req.prompt {
            *prompt = if prompt.is_empty() {
                self.text.clone()
            } else {
                format!("{} {prompt}", self.text)
            };
        } else if let Some(ids) = &mut req.prompt_token_ids {
            ids.splice(0..0, self.ids.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(tokens: u32, id_range: Option<[u32; 2]>) -> Salt {
        Salt {
            tokens,
            words: vec![],
            id_range,
        }
    }

    #[test]
    fn the_salt_has_its_length_and_differs_between_runs() {
        let a = RunSalt::new(&spec(4, Some([100, 200])), 1);
        let b = RunSalt::new(&spec(4, Some([100, 200])), 2);
        assert_eq!(a.text.split(' ').count(), 4);
        assert_eq!(a.ids.len(), 4);
        assert!(a.ids.iter().all(|i| (100..200).contains(i)));
        assert_ne!(a, b);
        assert_eq!(a, RunSalt::new(&spec(4, Some([100, 200])), 1));
    }

    #[test]
    fn only_a_first_turn_is_salted() {
        let salt = RunSalt::new(&spec(2, Some([5, 6])), 7);
        let mut text = Request {
            prompt: Some("hello".into()),
            ..Request::default()
        };
        salt.apply(&mut text, None);
        assert_eq!(text.prompt.unwrap(), format!("{} hello", salt.text));
        let mut ids = Request {
            prompt_token_ids: Some(vec![1]),
            ..Request::default()
        };
        salt.apply(&mut ids, Some(0));
        assert_eq!(ids.prompt_token_ids.unwrap(), [5, 5, 1]);
        let mut later = Request {
            prompt: Some("again".into()),
            ..Request::default()
        };
        salt.apply(&mut later, Some(1));
        assert_eq!(later.prompt.unwrap(), "again");
    }

    #[test]
    fn a_system_message_outside_a_session_takes_the_salt_before_it() {
        let salt = RunSalt::new(&spec(2, None), 7);
        let deep = || Request {
            prompt: Some("hello".into()),
            system: Some("context".into()),
            ..Request::default()
        };
        let mut alone = deep();
        salt.apply(&mut alone, None);
        assert_eq!(alone.system.unwrap(), format!("{} context", salt.text));
        assert_eq!(alone.prompt.unwrap(), "hello");
        let mut first_turn = deep();
        salt.apply(&mut first_turn, Some(0));
        assert_eq!(first_turn.system.unwrap(), "context");
        assert_eq!(first_turn.prompt.unwrap(), format!("{} hello", salt.text));
    }
}
