//! Which times and counts a run can hold (docs/format.md, "Plausible values"). The ordering
//! rules (format's `RequestTracker`) say that events come in a possible order; these say that
//! their values are possible at all, so that a corrupt or hostile `done.at_ns = 2^64 − 1` is
//! refused, naming its line and field, instead of becoming a run of 584 years.
//!
//! Every `*_ns` is an offset from the run's start (its header), so no time can lie before it.
//! A time is implausible when it lies past the run's end by more than the whole run:
//! - past [`MAX_RUN_NS`] (ten years), always;
//! - with fire's closing `client` record, past `2 × client.wall_ns + 1 s`: fire writes the run's
//!   whole length there, from the start to the end of its last request, so every event of a
//!   real run, however long or stalled, comes before `wall_ns`;
//! - without one (a killed run, a stream cut short), past `2 × E + 1 day`, where `E` is the
//!   latest time of the run's other records: only the latest time can break this, and a real
//!   run breaks it only if its last record came more than a day after everything else.
//!
//! A count is implausible when it passes [`MAX_TOKENS_PER_S`] per second of its request's life
//! plus one second's worth: no server prefills or decodes a billion tokens a second.
//!
//! Each run is checked on its own clock, before a shard's offset is added, so many runs and
//! the shards of a plan are checked like one run each.

use crate::error::Implausible;

/// No run lasts ten years: a time past this from the run's start is refused outright.
pub const MAX_RUN_NS: u64 = 10 * 365 * 86_400 * 1_000_000_000;

/// The grace past `2 × client.wall_ns` (for stamps rounded at the run's very end).
const CLIENT_GRACE_NS: u64 = 1_000_000_000;

/// The grace past twice the rest of a run without its `client` record: a day, more than any
/// request's timeout.
const OPEN_GRACE_NS: u64 = 86_400 * 1_000_000_000;

/// The fastest a request's tokens can come: a billion a second, a thousand times any prefill.
pub const MAX_TOKENS_PER_S: u64 = 1_000_000_000;

/// One time of a record: its value, its line and its field (`done.at_ns`).
#[derive(Debug, Clone, Copy)]
struct Stamp {
    ns: u64,
    line: usize,
    field: &'static str,
}

/// The times of one run, as far as they decide its plausibility: the latest, the latest of the
/// other records, and fire's `client.wall_ns`.
#[derive(Debug, Default)]
pub struct RunTimes {
    latest: Option<Stamp>,
    second_ns: u64,
    wall: Option<Stamp>,
}

/// The error for a value on `line`'s `field`.
fn implausible(line: usize, field: &'static str, problem: String) -> Implausible {
    Implausible {
        line,
        field,
        problem,
    }
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

impl RunTimes {
    /// Notes the times of the record on `line` (one `(field, value)` each) and refuses one past
    /// [`MAX_RUN_NS`] at once.
    pub fn record(
        &mut self,
        line: usize,
        times: &[(&'static str, u64)],
    ) -> Result<(), Implausible> {
        let mut here: Option<Stamp> = None;
        for &(field, ns) in times {
            if ns > MAX_RUN_NS {
                return Err(implausible(
                    line,
                    field,
                    format!(
                        "{:.3} s from the run's start is more than the ten years any run lasts",
                        seconds(ns)
                    ),
                ));
            }
            if here.is_none_or(|h| ns > h.ns) {
                here = Some(Stamp { ns, line, field });
            }
        }
        let Some(here) = here else { return Ok(()) };
        match self.latest {
            Some(top) if here.ns <= top.ns => self.second_ns = self.second_ns.max(here.ns),
            top => {
                self.second_ns = self.second_ns.max(top.map_or(0, |t| t.ns));
                self.latest = Some(here);
            }
        }
        Ok(())
    }

    /// Notes fire's closing `client.wall_ns`, on `line`.
    pub fn client(&mut self, line: usize, wall_ns: u64) -> Result<(), Implausible> {
        let field = "client.wall_ns";
        if wall_ns > MAX_RUN_NS {
            return Err(implausible(
                line,
                field,
                format!(
                    "{:.3} s is more than the ten years any run lasts",
                    seconds(wall_ns)
                ),
            ));
        }
        self.wall = Some(Stamp {
            ns: wall_ns,
            line,
            field,
        });
        Ok(())
    }

    /// At the run's end: the latest time, against the run's end as the rest of it tells it.
    pub fn finish(&self) -> Result<(), Implausible> {
        let Some(top) = self.latest else {
            return Ok(());
        };
        let (end_ns, grace_ns, basis) = match self.wall {
            Some(w) => (w.ns, CLIENT_GRACE_NS, "fire's client.wall_ns"),
            None => (
                self.second_ns,
                OPEN_GRACE_NS,
                "the latest of its other records, plus a day",
            ),
        };
        let limit = end_ns.saturating_mul(2).saturating_add(grace_ns);
        if top.ns > limit {
            return Err(implausible(
                top.line,
                top.field,
                format!(
                    "{:.3} s from the run's start is past the run's end ({:.3} s, {basis}) by more than the run itself",
                    seconds(top.ns),
                    seconds(end_ns)
                ),
            ));
        }
        if let Some(w) = self.wall {
            let limit = top.ns.saturating_mul(2).saturating_add(OPEN_GRACE_NS);
            if w.ns > limit {
                return Err(implausible(
                    w.line,
                    w.field,
                    format!(
                        "{:.3} s is past the run's last event ({:.3} s) by more than a day and the run itself",
                        seconds(w.ns),
                        seconds(top.ns)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Refuses a count of `tokens` on `line`'s `field` when it passes [`MAX_TOKENS_PER_S`] over
/// `life_ns`, the request's time from its send (or the run's start) to the record, plus a
/// second.
pub fn count(
    line: usize,
    field: &'static str,
    tokens: u64,
    life_ns: u64,
) -> Result<(), Implausible> {
    let limit =
        (u128::from(life_ns) + 1_000_000_000) * u128::from(MAX_TOKENS_PER_S) / 1_000_000_000;
    if u128::from(tokens) > limit {
        return Err(implausible(
            line,
            field,
            format!(
                "{tokens} tokens in a request of {:.3} s is more than a billion tokens a second (at most {limit})",
                seconds(life_ns)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn run(times: &[(usize, &'static str, u64)], wall: Option<u64>) -> Result<(), Implausible> {
        let mut r = RunTimes::default();
        for &(line, field, ns) in times {
            r.record(line, &[(field, ns)])?;
        }
        if let Some(w) = wall {
            r.client(99, w)?;
        }
        r.finish()
    }

    #[test]
    fn a_time_past_ten_years_is_refused_at_its_line() {
        let e = run(&[(2, "sent.sent_ns", 5), (3, "done.at_ns", u64::MAX)], None).unwrap_err();
        assert_eq!((e.line, e.field), (3, "done.at_ns"));
        assert!(e.problem.contains("ten years"), "{}", e.problem);
        assert!(run(&[(2, "done.at_ns", MAX_RUN_NS)], Some(MAX_RUN_NS)).is_ok());
        assert!(run(&[(2, "sent.sent_ns", 1)], Some(MAX_RUN_NS + 1)).is_err());
    }

    #[test]
    fn with_the_client_record_the_run_is_its_wall_time() {
        // Every event before wall_ns: fine, however long the stall between them.
        let long = [(2, "sent.sent_ns", S), (3, "done.at_ns", 7200 * S)];
        assert!(run(&long, Some(7200 * S)).is_ok());
        // 2 × wall + 1 s is the last plausible instant.
        let edge = [(2, "sent.sent_ns", 0), (3, "done.at_ns", 21 * S)];
        assert!(run(&edge, Some(10 * S)).is_ok());
        let past = [(2, "sent.sent_ns", 0), (3, "done.at_ns", 21 * S + 1)];
        let e = run(&past, Some(10 * S)).unwrap_err();
        assert_eq!((e.line, e.field), (3, "done.at_ns"));
        assert!(e.problem.contains("client.wall_ns"), "{}", e.problem);
        // A wall time far past every event is refused in turn.
        let e = run(&[(2, "done.at_ns", S)], Some(5 * 86_400 * S)).unwrap_err();
        assert_eq!(e.field, "client.wall_ns");
    }

    #[test]
    fn without_it_the_latest_time_is_judged_by_the_others() {
        // A request that hangs for an hour after everything else: a real killed run.
        let hang = [(2, "sent.sent_ns", S), (3, "done.at_ns", 3600 * S)];
        assert!(run(&hang, None).is_ok());
        let day = 86_400 * S;
        let e = run(
            &[
                (2, "sent.sent_ns", 10 * S),
                (3, "token.at_ns", 20 * S + day + 1),
            ],
            None,
        )
        .unwrap_err();
        assert_eq!((e.line, e.field), (3, "token.at_ns"));
        // Two records at the same latest time vouch for each other; the second latest is the
        // end of the rest.
        assert!(run(
            &[(2, "sent.sent_ns", 3 * day), (3, "done.at_ns", 3 * day)],
            None
        )
        .is_ok());
        // Within a record, the latest of its times is the one named.
        let mut r = RunTimes::default();
        r.record(2, &[("sent.sent_ns", 0)]).unwrap();
        r.record(3, &[("done.at_ns", S), ("done.first_event_ns", 5 * day)])
            .unwrap();
        assert_eq!(r.finish().unwrap_err().field, "done.first_event_ns");
    }

    #[test]
    fn counts_are_bounded_by_a_billion_tokens_a_second_of_their_request() {
        assert!(count(4, "done.completion_tokens", MAX_TOKENS_PER_S, 0).is_ok());
        assert!(count(4, "done.completion_tokens", 3 * MAX_TOKENS_PER_S, 2 * S).is_ok());
        let e = count(4, "done.prompt_tokens", u64::MAX, 60 * S).unwrap_err();
        assert_eq!((e.line, e.field), (4, "done.prompt_tokens"));
        assert!(e.problem.contains("billion"), "{}", e.problem);
        assert!(count(4, "token.tokens", MAX_TOKENS_PER_S + 1, 0).is_err());
    }
}
