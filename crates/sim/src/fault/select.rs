//! Which requests fail: `--fault KIND[:FRACTION]` flags drawn per request, overridden by the
//! request's own `"tokenpipe_fault"` member.
//!
//! The draw is deterministic: request number `seq` (1, 2, … in the order generation requests
//! were accepted, the number in their `cmpl-N` id) is hashed with `--fault-seed` into a uniform
//! number u in [0, 1), and the flags share [0, 1) out in the order given: with
//! `--fault reset:0.1 --fault stall:0.05`, u < 0.1 resets and 0.1 ≤ u < 0.15 stalls. So the
//! fractions must add up to at most 1, and the same seed fails the same request numbers.
//!
//! A body member `"tokenpipe_fault": "KIND"` fails that request whatever the flags say, and
//! `"none"` spares it; `"tokenpipe_fault_after": N` sets how many tokens go out first. Neither
//! is part of any real API: they let a test make exactly request 3 fail. The request's
//! `x-tokenpipe-fault` header ([`super::header`]) does the same and beats both.

pub use crate::fault_kind::{asked, Asked, Choice, MemberError, AFTER_MEMBER, MEMBER};

use super::{Fault, FaultKind, KindError};

/// One `--fault KIND[:FRACTION]` flag.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultFlag {
    /// How the chosen requests fail.
    pub kind: FaultKind,
    /// The share of requests chosen, in (0, 1].
    pub fraction: f64,
}

/// Why a `--fault` value is not `KIND[:FRACTION]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// What follows the `:` is not a number.
    #[error("`{0}`: expected KIND[:FRACTION], FRACTION a number")]
    NotNumber(String),
    /// The fraction is not in (0, 1].
    #[error("`{0}`: FRACTION must be more than 0 and at most 1")]
    Fraction(String),
    /// The kind is unknown or its number out of range.
    #[error(transparent)]
    Kind(#[from] KindError),
}

/// The `--fault` fractions add up to more than 1, so that no draw could honour them all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--fault fractions add up to {sum}, more than 1")]
pub struct FractionsError {
    /// The sum as far as the flag that passed 1.
    pub sum: f64,
}

/// Parses `KIND[:FRACTION]` (also the value parser of the `--fault` flag).
pub fn parse_flag(s: &str) -> Result<FaultFlag, FlagError> {
    let (name, fraction) = match s.split_once(':') {
        None => (s, 1.0),
        Some((name, f)) => {
            let fraction: f64 = f
                .trim()
                .parse()
                .map_err(|_| FlagError::NotNumber(s.to_owned()))?;
            if !(fraction > 0.0 && fraction <= 1.0) {
                return Err(FlagError::Fraction(s.to_owned()));
            }
            (name, fraction)
        }
    };
    Ok(FaultFlag {
        kind: FaultKind::parse(name.trim())?,
        fraction,
    })
}

/// u = 1 in the draw's fixed point: draws are 53-bit numbers, below `ONE`.
const ONE: u64 = 1 << 53;

/// The server's fault settings: the flags as shares of the draw, the seed, and `--fault-after`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FaultPlan {
    /// Each flag's kind and the upper end of its share of [0, ONE), in flag order.
    shares: Vec<(FaultKind, u64)>,
    seed: u64,
    after: Option<u64>,
    /// `--retry-after`; `None` for the default.
    retry_after_s: Option<u64>,
}

/// The `Retry-After` seconds of a 429 or 503 fault unless `--retry-after` says otherwise.
pub const DEFAULT_RETRY_AFTER_S: u64 = 1;

impl FaultPlan {
    /// The plan for `flags`, drawn with `seed`, with `after` tokens before a mid-stream fault
    /// (`None`: half of the request's `max_tokens`, at least 1). Refuses fractions that add
    /// up to more than 1.
    pub fn new(flags: &[FaultFlag], seed: u64, after: Option<u64>) -> Result<Self, FractionsError> {
        let mut sum = 0.0;
        let mut shares = Vec::with_capacity(flags.len());
        for flag in flags {
            sum += flag.fraction;
            // Rounding may carry 0.7 + 0.3 a hair past 1.
            if sum > 1.0 + 1e-9 {
                return Err(FractionsError { sum });
            }
            shares.push((flag.kind, ((sum * ONE as f64).round() as u64).min(ONE)));
        }
        Ok(Self {
            shares,
            seed,
            after,
            retry_after_s: None,
        })
    }

    /// The same plan, its 429 and 503 answers saying `Retry-After: SECONDS`.
    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after_s = Some(seconds);
        self
    }

    /// The seconds a 429 or 503 fault's `Retry-After` header says.
    pub fn retry_after_s(&self) -> u64 {
        self.retry_after_s.unwrap_or(DEFAULT_RETRY_AFTER_S)
    }

    /// Whether no flag asks for faults (requests may still ask for their own).
    pub fn is_empty(&self) -> bool {
        self.shares.is_empty()
    }

    /// The fault of request number `seq`, which asked for `asked` and generates `max_tokens`:
    /// its own choice if it made one, else the flags' draw.
    pub fn choose(&self, seq: u64, asked: &Asked, max_tokens: u64) -> Option<Fault> {
        let kind = match asked.choice {
            Choice::Spared => return None,
            Choice::Kind(kind) => kind,
            Choice::Flags => self.draw(seq)?,
        };
        let after = asked
            .after
            .or(self.after)
            .unwrap_or((max_tokens / 2).max(1))
            .min(max_tokens);
        Some(Fault { kind, after })
    }

    /// The flag whose share request `seq`'s hash falls in, if any.
    fn draw(&self, seq: u64) -> Option<FaultKind> {
        if self.shares.is_empty() {
            return None;
        }
        let u = splitmix64(self.seed ^ splitmix64(seq)) >> 11;
        self.shares
            .iter()
            .find(|(_, upper)| u < *upper)
            .map(|(kind, _)| *kind)
    }
}

/// SplitMix64's output function: a bijection on u64 whose outputs for consecutive inputs look
/// independent and uniform, which is all the draw needs.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flags(specs: &[&str]) -> Vec<FaultFlag> {
        specs.iter().map(|s| parse_flag(s).unwrap()).collect()
    }

    #[test]
    fn flags_parse() {
        assert_eq!(
            parse_flag("reset").unwrap(),
            FaultFlag {
                kind: FaultKind::Reset,
                fraction: 1.0
            }
        );
        assert_eq!(
            parse_flag("http=503:0.25").unwrap(),
            FaultFlag {
                kind: FaultKind::Http(503),
                fraction: 0.25
            }
        );
        for bad in [
            "",
            "reset:",
            "reset:0",
            "reset:1.5",
            "reset:-1",
            "reset:nan",
            "x:0.5",
        ] {
            assert!(parse_flag(bad).is_err(), "{bad} accepted");
        }
        assert!(FaultPlan::new(&flags(&["stall:0.7", "reset:0.3"]), 0, None).is_ok());
        let e = FaultPlan::new(&flags(&["stall", "reset:0.1"]), 0, None).unwrap_err();
        assert!(e.to_string().contains("more than 1"), "{e}");
    }

    #[test]
    fn fractions_are_kept_and_the_draw_is_deterministic() {
        let plan = FaultPlan::new(&flags(&["reset:0.1", "stall:0.05"]), 7, None).unwrap();
        let n = 20_000;
        let draws: Vec<_> = (1..=n).map(|seq| plan.draw(seq)).collect();
        let count = |k| draws.iter().filter(|d| **d == Some(k)).count() as f64 / n as f64;
        assert!(
            (count(FaultKind::Reset) - 0.1).abs() < 0.01,
            "{}",
            count(FaultKind::Reset)
        );
        assert!(
            (count(FaultKind::Stall) - 0.05).abs() < 0.01,
            "{}",
            count(FaultKind::Stall)
        );
        let again: Vec<_> = (1..=n).map(|seq| plan.draw(seq)).collect();
        assert_eq!(draws, again, "same seed, same requests");
        let other = FaultPlan::new(&flags(&["reset:0.1", "stall:0.05"]), 8, None).unwrap();
        let other: Vec<_> = (1..=n).map(|seq| other.draw(seq)).collect();
        assert_ne!(draws, other, "another seed, other requests");
        // A fraction of 1 takes every request.
        let all = FaultPlan::new(&flags(&["truncate"]), 3, None).unwrap();
        assert!((1..=1000).all(|seq| all.draw(seq) == Some(FaultKind::Truncate)));
        assert_eq!(FaultPlan::default().draw(1), None);
    }

    #[test]
    fn the_body_overrides_the_flags() {
        let plan = FaultPlan::new(&flags(&["reset"]), 0, None).unwrap();
        let body = |v: serde_json::Value| asked(v.as_object().unwrap(), 100);
        let none = body(json!({})).unwrap();
        assert_eq!(none, Asked::default());
        assert_eq!(
            plan.choose(1, &none, 10),
            Some(Fault {
                kind: FaultKind::Reset,
                after: 5
            })
        );
        let spared = body(json!({"tokenpipe_fault": "none"})).unwrap();
        assert_eq!(plan.choose(1, &spared, 10), None);
        let own = body(json!({"tokenpipe_fault": "http=503", "tokenpipe_fault_after": 2})).unwrap();
        assert_eq!(
            FaultPlan::default().choose(3, &own, 10),
            Some(Fault {
                kind: FaultKind::Http(503),
                after: 2
            })
        );
        let after_only =
            body(json!({"tokenpipe_fault": null, "tokenpipe_fault_after": 0})).unwrap();
        assert_eq!(plan.choose(1, &after_only, 10).map(|f| f.after), Some(0));
        assert_eq!(FaultPlan::default().choose(1, &after_only, 10), None);
        for (bad, want) in [
            (
                json!({"tokenpipe_fault": 3}),
                "'tokenpipe_fault' must be a string",
            ),
            (json!({"tokenpipe_fault": "boom"}), "unknown fault `boom`"),
            (
                json!({"tokenpipe_fault_after": -1}),
                "'tokenpipe_fault_after'",
            ),
            (json!({"tokenpipe_fault_after": 101}), "from 0 to 100"),
        ] {
            let e = body(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn after_defaults_to_half_at_least_one_and_is_capped() {
        let plan = |after| FaultPlan::new(&flags(&["truncate"]), 0, after).unwrap();
        let asked_after = |n| Asked {
            choice: Choice::Flags,
            after: n,
        };
        let after = |p: &FaultPlan, a, max| p.choose(1, &asked_after(a), max).unwrap().after;
        assert_eq!(after(&plan(None), None, 10), 5);
        assert_eq!(after(&plan(None), None, 3), 1);
        assert_eq!(after(&plan(None), None, 1), 1);
        assert_eq!(after(&plan(Some(4)), None, 10), 4);
        assert_eq!(after(&plan(Some(40)), None, 10), 10);
        assert_eq!(after(&plan(Some(4)), Some(7), 10), 7);
    }
}
