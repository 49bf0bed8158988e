//! The ITL error: for every token after a request's first, the client's gap since the previous
//! token minus the server's gap between handing the two to its socket. Token k of the client
//! is joined with token k of the server through the request id; a client late on one token and
//! on time on the next shows as a positive error, then a negative one, so the tail (p99) is
//! what tells how late a client reads a token it could have read at once.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Request id to its tokens' instants (`CLOCK_MONOTONIC` ns), one entry per token.
pub type TokenTimes = HashMap<u64, Vec<u64>>;

/// The last 16 hex digits of an `x-request-id` (fire's request id).
pub fn request_id(rid: &str) -> Option<u64> {
    let hex: String = rid.chars().filter(|c| *c != '-').collect();
    u64::from_str_radix(&hex[hex.len().saturating_sub(16)..], 16).ok()
}

/// Reads `simserve --token-stamps`: one JSON line per request, instants from `origin`.
pub fn read_server(path: &Path, origin: u64) -> TokenTimes {
    let mut out = TokenTimes::new();
    for line in BufReader::new(File::open(path).expect("token stamps")).lines() {
        let line = line.expect("token stamps line");
        let v: serde_json::Value = serde_json::from_str(&line).expect("token stamps JSON");
        let Some(id) = v["request_id"].as_str().and_then(request_id) else {
            continue;
        };
        let times = v["token_ns"].as_array().expect("token_ns");
        let times = times.iter().map(|t| origin + t.as_u64().expect("ns"));
        out.insert(id, times.collect());
    }
    out
}

/// Reads the floor's `OUT.tokens`: `id: u64, n: u32, n × instant: u64`, little-endian.
pub fn read_floor(path: &Path) -> TokenTimes {
    let mut bytes = Vec::new();
    File::open(path)
        .expect("floor tokens")
        .read_to_end(&mut bytes)
        .expect("read floor tokens");
    let word = |at: usize, n: usize| {
        bytes[at..at + n]
            .iter()
            .rev()
            .fold(0u64, |v, b| v << 8 | u64::from(*b))
    };
    let mut out = TokenTimes::new();
    let mut at = 0;
    while at + 12 <= bytes.len() {
        let (id, n) = (word(at, 8), word(at + 8, 4) as usize);
        at += 12;
        assert!(at + 8 * n <= bytes.len(), "floor tokens cut short");
        out.insert(id, (0..n).map(|k| word(at + 8 * k, 8)).collect());
        at += 8 * n;
    }
    out
}

/// Token by token, joined through the request id: the ITL error, the client's gaps and the
/// server's gaps (ms), and the requests whose token counts differ (not joined: a client that
/// lost count).
#[derive(Default)]
pub struct Gaps {
    /// Client gap minus server gap, per token after a request's first.
    pub error_ms: Vec<f64>,
    /// The client's gaps: the ITL it reports.
    pub client_ms: Vec<f64>,
    /// The server's gaps: the ITL it really sent.
    pub server_ms: Vec<f64>,
    /// Requests not joined.
    pub unjoined: usize,
}

/// The [`Gaps`] of every token the client and the server both account for.
pub fn gaps(client: &TokenTimes, server: &TokenTimes) -> Gaps {
    let mut out = Gaps::default();
    for (id, c) in client {
        let Some(s) = server.get(id) else { continue };
        if c.len() != s.len() {
            out.unjoined += 1;
            continue;
        }
        for k in 1..c.len() {
            let client_gap = (c[k] as f64 - c[k - 1] as f64) / 1e6;
            let server_gap = (s[k] as f64 - s[k - 1] as f64) / 1e6;
            out.error_ms.push(client_gap - server_gap);
            out.client_ms.push(client_gap);
            out.server_ms.push(server_gap);
        }
    }
    out
}

/// The formula on timings set exactly, checked each time the benchmark starts (a bench target
/// runs no `#[test]`s): a client 3 ms late on token 1 of 3 and on time after, and one request
/// whose count differs.
pub fn check_formula() {
    let ms = 1_000_000;
    let server = TokenTimes::from([(1, vec![0, 10 * ms, 20 * ms]), (2, vec![0, ms])]);
    let client = TokenTimes::from([(1, vec![ms, 14 * ms, 21 * ms]), (2, vec![ms])]);
    let g = gaps(&client, &server);
    assert_eq!(
        (g.error_ms, g.unjoined),
        (vec![3.0, -3.0], 1),
        "ITL error formula"
    );
    assert_eq!(
        (g.client_ms, g.server_ms),
        (vec![13.0, 7.0], vec![10.0, 10.0])
    );
}
