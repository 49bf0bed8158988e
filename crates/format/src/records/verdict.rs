//! Whether a run's figures can be published beside other runs': every scheduled request ended,
//! the client kept its schedule, and (when the server was scraped) the server counted what the
//! client saw. The rule is a function of the summary alone, so `reduce` writes it and a reader
//! of an older summary can work it out the same way (docs/verdict.md states it).

use crate::Summary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The error kinds the run itself caused by being stopped: never the server's doing.
pub const RUN_ENDED_KINDS: &[&str] = &["cancelled", "not_sent"];

/// The kind a summary's `errors` gives requests that have no `done` at all (a cut-off run).
pub const UNFINISHED: &str = "unfinished";

/// The ends that are the run's own, never the server's, with the words a reason uses for each:
/// the kinds of [`RUN_ENDED_KINDS`] and [`UNFINISHED`].
pub const RUN_ENDS: &[(&str, &str)] = &[
    ("cancelled", "cancelled"),
    ("not_sent", "not sent"),
    (UNFINISHED, "unfinished"),
];

/// How far the server's request count may be from the client's: this fraction of the client's
/// count, and never less than [`SERVER_REQUESTS_SLACK`] requests.
pub const SERVER_REQUESTS_TOLERANCE: f64 = 0.01;

/// Requests the server's count may differ by in any run, however small: a request the client
/// gave up on as the server finished it is counted by one side only.
pub const SERVER_REQUESTS_SLACK: u64 = 1;

/// How far the server's token counts may be from the client's, as a fraction of the client's:
/// the client counts output tokens from `usage` (or stream events when the server sends no
/// usage), the server as it generates them, and the two can part by a token or two a request.
pub const SERVER_TOKENS_TOLERANCE: f64 = 0.02;

/// One check of a verdict.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    /// True when the check passed, false when it failed, null when it could not be judged
    /// (no client record, a run too short to judge): a check not judged does not make a run
    /// incomparable, and its reason says why it was not judged.
    pub ok: Option<bool>,
    /// One line: what passed, or what failed with the figures that show it.
    pub reason: String,
}

impl Check {
    fn pass(reason: impl Into<String>) -> Self {
        Self {
            ok: Some(true),
            reason: reason.into(),
        }
    }

    fn fail(reason: impl Into<String>) -> Self {
        Self {
            ok: Some(false),
            reason: reason.into(),
        }
    }

    fn not_judged(reason: impl Into<String>) -> Self {
        Self {
            ok: None,
            reason: reason.into(),
        }
    }

    /// True only when the check was judged and failed.
    pub fn failed(&self) -> bool {
        self.ok == Some(false)
    }
}

/// A run's verdict: whether its figures are comparable with other runs', and why not.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// True when no check failed: the run is complete, the client kept up (or could not be
    /// judged), and the server agrees (or was not scraped).
    pub comparable: bool,
    /// One line: `comparable`, or the reasons of the checks that failed, `; `-separated.
    pub reason: String,
    /// Every scheduled request ended by the server's answer: none failed, cancelled, not sent
    /// or unfinished.
    pub complete: Check,
    /// The client kept its schedule and had CPU to spare (fire's `client` record).
    pub client: Check,
    /// The server's request and token counters over the run agree with the client's counts
    /// within the stated tolerances; omitted when the server was not scraped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Check>,
    /// A merged run's parts: none lost or missing, started together and on clocks that agree
    /// (docs/metrics.md, "Shards"); omitted for a run that is not merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Check>,
}

impl Verdict {
    /// The verdict on `summary`, from its counts, its client figures and its server figures.
    pub fn of(summary: &Summary) -> Self {
        let complete = completeness(summary);
        let client = client(summary);
        let server = server(summary);
        let parts = super::parts::parts_failures(summary).map(|failures| {
            if failures.is_empty() {
                Check::pass("every part reported, started together")
            } else {
                Check::fail(failures.join(", "))
            }
        });
        let failed: Vec<&str> = [
            Some(&complete),
            Some(&client),
            server.as_ref(),
            parts.as_ref(),
        ]
        .into_iter()
        .flatten()
        .filter(|c| c.failed())
        .map(|c| c.reason.as_str())
        .collect();
        Self {
            comparable: failed.is_empty(),
            reason: if failed.is_empty() {
                "comparable".into()
            } else {
                failed.join("; ")
            },
            complete,
            client,
            server,
            parts,
        }
    }
}

/// Requests the server or the network failed, by kind, in the order of the summary's `errors`.
pub fn server_failures(summary: &Summary) -> impl Iterator<Item = (&str, u64)> {
    summary
        .errors
        .iter()
        .filter(|(kind, _)| !RUN_ENDED_KINDS.contains(&kind.as_str()) && *kind != UNFINISHED)
        .map(|(kind, n)| (kind.as_str(), *n))
}

/// How many requests ended with one of the summary's error kinds.
pub fn ended_as(summary: &Summary, kind: &str) -> u64 {
    summary.errors.get(kind).copied().unwrap_or(0)
}

fn completeness(summary: &Summary) -> Check {
    let scheduled = summary
        .requests_scheduled
        .unwrap_or(summary.requests_ok + summary.requests_failed);
    let mut failures: Vec<(&str, u64)> = server_failures(summary).collect();
    if summary.errors.is_empty() && summary.requests_failed > 0 {
        // Failures without kinds (a summary before format 1.4, a vLLM result file): every one
        // counts, of a kind nobody said.
        failures.push(("unknown", summary.requests_failed));
    }
    let failed: u64 = failures.iter().map(|(_, n)| n).sum();
    let mut parts = Vec::new();
    if failed > 0 {
        let kinds: Vec<String> = failures.iter().map(|(k, n)| format!("{k}: {n}")).collect();
        parts.push(format!(
            "{failed} of {scheduled} failed ({:.1} %: {})",
            failed as f64 * 100.0 / scheduled.max(1) as f64,
            kinds.join(", ")
        ));
    }
    for &(kind, words) in RUN_ENDS {
        let n = ended_as(summary, kind);
        if n > 0 {
            parts.push(format!("{n} {words}"));
        }
    }
    if let Some(lost) = summary.requests_lost.filter(|n| *n > 0) {
        parts.push(format!("{lost} lost with their parts"));
    }
    if !summary.shards_missing.is_empty() {
        let missing: Vec<String> = summary.shards_missing.iter().map(u32::to_string).collect();
        parts.push(format!("shard(s) {} missing", missing.join(", ")));
    }
    if scheduled == 0 {
        return Check::fail("no requests");
    }
    if parts.is_empty() {
        Check::pass(format!("all {scheduled} requests ended ok"))
    } else {
        Check::fail(format!("incomplete: {}", parts.join(", ")))
    }
}

fn client(summary: &Summary) -> Check {
    match (summary.client_kept_up, &summary.client_not_judged) {
        (None, _) => Check::not_judged("no client record"),
        (Some(false), _) => Check::fail(format!(
            "the client did not keep up: {}",
            summary
                .client_warnings
                .first()
                .map_or("see its warnings", String::as_str)
        )),
        (Some(true), Some(why)) => Check::not_judged(why.clone()),
        (Some(true), None) => Check::pass("the client kept up"),
    }
}

fn server(summary: &Summary) -> Option<Check> {
    let pairs = [
        (
            "requests",
            summary.server_requests_succeeded,
            summary.requests_ok,
        ),
        (
            "output tokens",
            summary.server_generation_tokens,
            summary.output_tokens,
        ),
        (
            "prompt tokens",
            summary.server_prompt_tokens,
            summary.input_tokens,
        ),
    ];
    if pairs.iter().all(|(_, server, _)| server.is_none()) {
        return None;
    }
    if summary.window.is_some() {
        return Some(Check::not_judged(
            "the summary covers a window of the run, the server's counters the whole of it",
        ));
    }
    let mut disagree = Vec::new();
    let mut compared = Vec::new();
    for (what, server, client) in pairs {
        let Some(server) = server else { continue };
        compared.push(what);
        let tolerance = if what == "requests" {
            (client as f64 * SERVER_REQUESTS_TOLERANCE).max(SERVER_REQUESTS_SLACK as f64)
        } else {
            client as f64 * SERVER_TOKENS_TOLERANCE
        };
        if (server as f64 - client as f64).abs() > tolerance {
            disagree.push(format!("{what}: server {server}, client {client}"));
        }
    }
    Some(if disagree.is_empty() {
        Check::pass(format!(
            "the server's counts agree ({})",
            compared.join(", ")
        ))
    } else {
        Check::fail(format!(
            "the server's counts disagree ({})",
            disagree.join("; ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(ok: u64, errors: &[(&str, u64)]) -> Summary {
        let failed: u64 = errors.iter().map(|(_, n)| n).sum();
        Summary {
            requests_ok: ok,
            requests_failed: failed,
            requests_scheduled: Some(ok + failed),
            errors: errors.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            client_kept_up: Some(true),
            output_tokens: ok * 100,
            input_tokens: ok * 1000,
            ..Summary::default()
        }
    }

    #[test]
    fn a_whole_run_is_comparable() {
        let v = Verdict::of(&summary(32, &[]));
        assert!(v.comparable);
        assert_eq!(v.reason, "comparable");
        assert_eq!(v.complete, Check::pass("all 32 requests ended ok"));
        assert_eq!(v.client, Check::pass("the client kept up"));
        assert_eq!(v.server, None);
    }

    #[test]
    fn failures_name_their_rate_and_kinds_and_the_run_s_own_ends_apart() {
        let v = Verdict::of(&summary(
            24,
            &[
                ("http", 6),
                ("timeout", 2),
                ("cancelled", 1),
                ("not_sent", 3),
            ],
        ));
        assert!(!v.comparable);
        assert_eq!(
            v.reason,
            "incomplete: 8 of 36 failed (22.2 %: http: 6, timeout: 2), 1 cancelled, 3 not sent"
        );
        let mut kindless = summary(10, &[]);
        kindless.requests_failed = 10;
        kindless.requests_scheduled = Some(20);
        assert_eq!(
            Verdict::of(&kindless).reason,
            "incomplete: 10 of 20 failed (50.0 %: unknown: 10)"
        );
        let stopped = Verdict::of(&summary(11, &[("cancelled", 2), ("not_sent", 87)]));
        assert_eq!(stopped.reason, "incomplete: 2 cancelled, 87 not sent");
        assert!(!Verdict::of(&summary(0, &[])).comparable);
        let mut part = summary(10, &[]);
        part.shards_missing = vec![2, 3];
        assert_eq!(
            Verdict::of(&part).reason,
            "incomplete: shard(s) 2, 3 missing"
        );
    }

    #[test]
    fn the_client_check_fails_on_a_slow_client_and_is_not_judged_without_evidence() {
        let mut s = summary(10, &[]);
        s.client_kept_up = Some(false);
        s.client_warnings = vec!["5 of 10 requests left more than 1.00 ms late".into()];
        let v = Verdict::of(&s);
        assert!(!v.comparable);
        assert_eq!(
            v.reason,
            "the client did not keep up: 5 of 10 requests left more than 1.00 ms late"
        );
        s.client_kept_up = None;
        assert_eq!(Verdict::of(&s).client.ok, None);
        assert!(Verdict::of(&s).comparable);
        s.client_kept_up = Some(true);
        s.client_not_judged = Some("too short to judge: 3 requests".into());
        let short = Verdict::of(&s);
        assert!(short.comparable);
        assert_eq!(
            short.client,
            Check::not_judged("too short to judge: 3 requests")
        );
    }

    #[test]
    fn the_server_check_compares_counts_within_the_tolerances() {
        let mut s = summary(200, &[]);
        s.server_requests_succeeded = Some(202);
        s.server_generation_tokens = Some(20_300);
        s.server_prompt_tokens = Some(200_000);
        let v = Verdict::of(&s);
        assert!(v.comparable, "{}", v.reason);
        assert_eq!(
            v.server,
            Some(Check::pass(
                "the server's counts agree (requests, output tokens, prompt tokens)"
            ))
        );
        s.server_requests_succeeded = Some(180);
        s.server_generation_tokens = Some(18_000);
        let v = Verdict::of(&s);
        assert!(!v.comparable);
        assert_eq!(
            v.reason,
            "the server's counts disagree (requests: server 180, client 200; output tokens: server 18000, client 20000)"
        );
        // One request either way is within the slack of the smallest run.
        let mut small = summary(3, &[]);
        small.server_requests_succeeded = Some(4);
        assert!(Verdict::of(&small).comparable);
        small.window = Some(crate::MeasuredWindow::default());
        assert_eq!(Verdict::of(&small).server.and_then(|c| c.ok), None);
    }
}
