use super::*;
use crate::engine::fixed::Fixed;
use crate::engine::{Admission, Due, Engine, Ticket};
use crate::fault::select::Asked;
use crate::fault::FaultKind;
use crate::render::Renderer;
use crate::waiter::TokenTimer;
use http_body_util::BodyExt;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokenpipe_format::clock::monotonic_ns;
use tokio::time::Instant;

fn request(kind: Kind, max_tokens: u64, include_usage: bool) -> GenerationRequest {
    GenerationRequest {
        kind,
        max_tokens,
        stream: true,
        include_usage,
        continuous_usage: false,
        prompt_tokens: 6,
        fault: Asked::default(),
    }
}

fn stream(req: &GenerationRequest, ttft_ms: u64, itl_ms: u64) -> StreamedAnswer {
    stream_on(&TokenTimer::tokio(), req, ttft_ms, itl_ms, None).0
}

/// The fixed engine, noting every departure.
struct Spy {
    fixed: Fixed,
    departed: Mutex<Vec<Departure>>,
}

impl Engine for Spy {
    fn admit(&self, admission: &Admission) -> Ticket {
        self.fixed.admit(admission)
    }

    fn due(&self, ticket: &Ticket, k: u64, now_ns: u64) -> Due {
        self.fixed.due(ticket, k, now_ns)
    }

    fn depart(&self, ticket: &Ticket, why: Departure) {
        self.departed.lock().unwrap().push(why);
        self.fixed.depart(ticket, why);
    }
}

fn stream_on(
    timer: &TokenTimer,
    req: &GenerationRequest,
    ttft_ms: u64,
    itl_ms: u64,
    fault: Option<Fault>,
) -> (StreamedAnswer, Arc<Spy>) {
    let engine = Arc::new(Spy {
        fixed: Fixed {
            ttft: Duration::from_millis(ttft_ms),
            itl: Duration::from_millis(itl_ms),
        },
        departed: Mutex::default(),
    });
    let admission = Admission {
        arrival_ns: timer.now_ns(),
        prompt_tokens: req.prompt_tokens,
        max_tokens: req.max_tokens,
        prefix_blocks: Vec::new(),
    };
    let timetable = Timetable::admit(engine.clone(), timer, &admission);
    let chunks = Renderer::new("sim").chunks(req.kind, 1, 0, req.max_tokens);
    let stamps = RequestStamps::new(None, None, admission.arrival_ns);
    let body = StreamedAnswer::new(req, chunks, timetable, stamps, fault);
    (body, engine)
}

/// Every event of the stream with the virtual time (since the start) it became ready.
async fn collect(mut body: StreamedAnswer) -> Vec<(Duration, String)> {
    let start = Instant::now();
    let mut events = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.unwrap().into_data() else {
            panic!("not a data frame")
        };
        let text = String::from_utf8(data.to_vec()).unwrap();
        let payload = text
            .strip_prefix("data: ")
            .and_then(|t| t.strip_suffix("\n\n"))
            .unwrap_or_else(|| panic!("not one SSE event: {text:?}"));
        events.push((start.elapsed(), payload.to_string()));
    }
    assert!(body.is_end_stream());
    events
}

fn check_sequence(kind: Kind, n: u64, usage: bool, events: &[(Duration, String)]) {
    let role = usize::from(kind == Kind::Chat);
    let want = role + n as usize + usize::from(usage) + 1;
    assert_eq!(events.len(), want, "{events:?}");
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let json: Vec<Value> = events[..want - 1]
        .iter()
        .map(|(_, p)| serde_json::from_str(p).unwrap_or_else(|e| panic!("{p}: {e}")))
        .collect();
    if kind == Kind::Chat {
        assert_eq!(json[0]["choices"][0]["delta"]["role"], "assistant");
        assert_eq!(json[0]["choices"][0]["delta"]["content"], "");
    }
    let tokens = &json[role..role + n as usize];
    for (i, t) in tokens.iter().enumerate() {
        let choice = &t["choices"][0];
        let text = match kind {
            Kind::Completions => &choice["text"],
            Kind::Chat => &choice["delta"]["content"],
        };
        assert!(text.as_str().is_some_and(|s| s.starts_with(' ')), "{t}");
        let want = if i + 1 == n as usize { "length" } else { "" };
        assert_eq!(choice["finish_reason"].as_str().unwrap_or(""), want, "{t}");
    }
    if usage {
        let u = &json[want - 2];
        assert_eq!(u["choices"], serde_json::json!([]));
        assert_eq!(u["usage"]["completion_tokens"], n);
        assert_eq!(u["usage"]["prompt_tokens"], 6);
        assert_eq!(u["usage"]["total_tokens"], n + 6);
    }
    for (_, p) in &events[role + n as usize..want - 1] {
        assert!(p.contains("\"usage\""), "{p}");
    }
}

#[tokio::test(start_paused = true)]
async fn event_sequences() {
    for kind in [Kind::Completions, Kind::Chat] {
        for usage in [false, true] {
            for n in [1, 2, 17] {
                let events = collect(stream(&request(kind, n, usage), 5, 1)).await;
                check_sequence(kind, n, usage, &events);
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn tokens_are_ready_exactly_on_their_deadlines() {
    let (ttft, itl, n) = (50, 10, 100);
    for kind in [Kind::Completions, Kind::Chat] {
        let events = collect(stream(&request(kind, n, true), ttft, itl)).await;
        let role = usize::from(kind == Kind::Chat);
        if role == 1 {
            // As vLLM: the role chunk leaves with the first output, right before token 1.
            assert_eq!(events[0].0, Duration::from_millis(ttft), "role chunk");
            assert!(events[0].1.contains(r#""role":"assistant""#));
        }
        for k in 1..=n {
            let at = events[role + k as usize - 1].0;
            assert_eq!(at, Duration::from_millis(ttft + (k - 1) * itl), "token {k}");
        }
        // Usage and [DONE] follow the last token without delay.
        let last = Duration::from_millis(ttft + (n - 1) * itl);
        assert!(events[role + n as usize..].iter().all(|(t, _)| *t == last));
    }
}

#[tokio::test(start_paused = true)]
async fn a_late_reader_gets_overdue_tokens_at_once_and_stays_on_its_timetable() {
    let mut body = stream(&request(Kind::Completions, 10, false), 10, 10);
    let start = Instant::now();
    tokio::time::sleep(Duration::from_millis(35)).await;
    // Tokens 1..=3 (due at 10, 20, 30 ms) are ready without waiting.
    for _ in 0..3 {
        body.frame().await.unwrap().unwrap();
        assert_eq!(start.elapsed(), Duration::from_millis(35));
    }
    body.frame().await.unwrap().unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(40));
}

/// On the real clock with the shared timerfd: every token at or after its deadline, the
/// sequence intact, and soon after the deadline (loosely: the machine may be loaded).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn precise_pacing_is_never_early() {
    let timer = TokenTimer::start();
    assert!(
        matches!(timer, TokenTimer::Precise(_)),
        "a timerfd on Linux"
    );
    let (ttft, itl, n) = (10, 2, 20);
    let (mut body, _) = stream_on(
        &timer,
        &request(Kind::Completions, n, false),
        ttft,
        itl,
        None,
    );
    let origin = body.timetable.arrival_ns();
    let mut late = Vec::new();
    for k in 1..=n {
        body.frame().await.unwrap().unwrap();
        let due = origin + (ttft + (k - 1) * itl) * 1_000_000;
        let now = monotonic_ns();
        assert!(now >= due, "token {k} early by {} ns", due - now);
        late.push(now - due);
    }
    // [DONE] follows at once.
    body.frame().await.unwrap().unwrap();
    assert!(body.frame().await.is_none());
    late.sort_unstable();
    assert!(late[late.len() / 2] < 5_000_000, "{late:?}");
}

/// How a stream ended.
#[derive(Debug, PartialEq, Eq)]
enum Ending {
    /// The body ended (hyper writes the final chunk).
    Clean,
    /// The body failed (hyper drops the connection).
    Reset,
    /// Nothing for ten (virtual) seconds.
    Stalled,
}

/// Every event, the virtual time it was ready, and how the stream ended.
async fn run(mut body: StreamedAnswer) -> (Vec<(Duration, String)>, Ending) {
    let start = Instant::now();
    let mut events = Vec::new();
    loop {
        let frame = match tokio::time::timeout(Duration::from_secs(10), body.frame()).await {
            Err(_) => return (events, Ending::Stalled),
            Ok(None) => {
                assert!(body.is_end_stream());
                return (events, Ending::Clean);
            }
            Ok(Some(Err(Reset))) => return (events, Ending::Reset),
            Ok(Some(Ok(frame))) => frame,
        };
        let data = frame.into_data().unwrap();
        let text = String::from_utf8(data.to_vec()).unwrap();
        let payload = text
            .strip_prefix("data: ")
            .and_then(|t| t.strip_suffix("\n\n"))
            .unwrap_or_else(|| panic!("not one SSE event: {text:?}"));
        events.push((start.elapsed(), payload.to_string()));
    }
}

/// A stream of `n` tokens (5 ms to the first, then 1 ms apart) with usage, failing as `kind`
/// after `after` tokens; its events, ending and the engine's departures.
async fn faulty(
    kind: Kind,
    fault: FaultKind,
    n: u64,
    after: u64,
) -> (Vec<(Duration, String)>, Ending, Vec<Departure>) {
    let fault = Fault { kind: fault, after };
    let timer = TokenTimer::tokio();
    let (body, engine) = stream_on(&timer, &request(kind, n, true), 5, 1, Some(fault));
    let (events, ending) = run(body).await;
    let departed = engine.departed.lock().unwrap().clone();
    (events, ending, departed)
}

fn is_token(payload: &str) -> bool {
    payload.contains(r#""text":" "#) || payload.contains(r#""content":" "#)
}

fn says_finish(payload: &str) -> bool {
    payload.contains(r#""finish_reason":"length""#)
}

/// The tokens of `events`, checked to be the first ones in order, each at its deadline.
fn tokens_on_time(events: &[(Duration, String)]) -> usize {
    let tokens: Vec<_> = events.iter().filter(|(_, p)| is_token(p)).collect();
    for (i, (at, _)) in tokens.iter().enumerate() {
        assert_eq!(*at, Duration::from_millis(5 + i as u64), "token {}", i + 1);
    }
    tokens.len()
}

#[tokio::test(start_paused = true)]
async fn each_fault_acts_when_the_next_token_is_due() {
    // Token 3 is due at 5 + 2 = 7 ms: the fault acts then.
    let at = Duration::from_millis(7);
    let (ev, end, departed) = faulty(Kind::Completions, FaultKind::Truncate, 6, 2).await;
    assert_eq!((tokens_on_time(&ev), ev.len(), end), (2, 2, Ending::Clean));
    assert!(!ev.iter().any(|(_, p)| says_finish(p)), "{ev:?}");
    assert_eq!(departed, [Departure::Failed]);

    let (ev, end, departed) = faulty(Kind::Completions, FaultKind::BareDone, 6, 2).await;
    assert_eq!((tokens_on_time(&ev), ev.len(), end), (2, 3, Ending::Clean));
    assert_eq!(ev[2], (at, "[DONE]".to_string()));
    assert!(!ev
        .iter()
        .any(|(_, p)| says_finish(p) || p.contains("usage")));
    assert_eq!(departed, [Departure::Failed]);

    let (ev, end, departed) = faulty(Kind::Chat, FaultKind::Error, 6, 2).await;
    assert_eq!((tokens_on_time(&ev), ev.len(), end), (2, 5, Ending::Clean));
    assert!(ev[0].1.contains(r#""role":"assistant""#));
    let error: Value = serde_json::from_str(&ev[3].1).unwrap();
    assert_eq!(ev[3].0, at);
    assert_eq!(error["error"]["code"], 500);
    assert_eq!(error["error"]["type"], "server_error");
    assert!(error["error"]["message"].is_string());
    assert_eq!(ev[4].1, "[DONE]");
    assert!(!ev.iter().any(|(_, p)| says_finish(p)));
    assert_eq!(departed, [Departure::Failed]);

    let (ev, end, departed) = faulty(Kind::Completions, FaultKind::Reset, 6, 2).await;
    assert_eq!((tokens_on_time(&ev), ev.len(), end), (2, 2, Ending::Reset));
    assert_eq!(departed, [Departure::Failed]);

    let (ev, end, departed) = faulty(Kind::Completions, FaultKind::Stall, 6, 2).await;
    assert_eq!(
        (tokens_on_time(&ev), ev.len(), end),
        (2, 2, Ending::Stalled)
    );
    assert_eq!(departed, [Departure::Failed]);

    // Garbage goes in where token 3 was due, and the answer goes on to its normal end.
    let (ev, end, departed) = faulty(Kind::Completions, FaultKind::Garbage, 6, 2).await;
    assert_eq!((tokens_on_time(&ev), ev.len(), end), (6, 9, Ending::Clean));
    assert_eq!(ev[2].0, at);
    assert!(
        serde_json::from_str::<Value>(&ev[2].1).is_err(),
        "{}",
        ev[2].1
    );
    assert!(says_finish(&ev[6].1));
    assert!(ev[7].1.contains(r#""completion_tokens":6"#));
    assert_eq!(ev[8].1, "[DONE]");
    assert_eq!(departed, [Departure::Finished]);
}

#[tokio::test(start_paused = true)]
async fn a_fault_after_all_tokens_acts_right_after_the_last() {
    let (ev, end, _) = faulty(Kind::Completions, FaultKind::Truncate, 3, 3).await;
    assert_eq!((tokens_on_time(&ev), ev.len(), end), (3, 3, Ending::Clean));
    assert!(!ev.iter().any(|(_, p)| says_finish(p)), "no finish_reason");
    let (ev, end, _) = faulty(Kind::Completions, FaultKind::BareDone, 3, 3).await;
    assert_eq!((tokens_on_time(&ev), ev.len(), end), (3, 4, Ending::Clean));
    assert_eq!(ev[3], (Duration::from_millis(7), "[DONE]".to_string()));
    assert!(!ev.iter().any(|(_, p)| says_finish(p)));
    // Garbage after the last token: the token says finish_reason, usage and [DONE] follow.
    let (ev, end, departed) = faulty(Kind::Chat, FaultKind::Garbage, 3, 3).await;
    assert_eq!((tokens_on_time(&ev), ev.len(), end), (3, 7, Ending::Clean));
    assert!(says_finish(&ev[3].1));
    assert!(serde_json::from_str::<Value>(&ev[4].1).is_err());
    assert_eq!(ev[6].1, "[DONE]");
    assert_eq!(departed, [Departure::Finished]);
}

#[tokio::test(start_paused = true)]
async fn a_fault_after_no_tokens_acts_at_the_first_deadline() {
    let (ev, end, _) = faulty(Kind::Chat, FaultKind::Truncate, 4, 0).await;
    assert_eq!((tokens_on_time(&ev), ev.len(), end), (0, 1, Ending::Clean));
    assert!(
        ev[0].1.contains(r#""role":"assistant""#),
        "the role chunk still leads"
    );
    assert_eq!(ev[0].0, Duration::from_millis(5), "with the first output");
    let (ev, end, _) = faulty(Kind::Completions, FaultKind::Error, 4, 0).await;
    assert_eq!(ev[0].0, Duration::from_millis(5));
    assert!(ev[0].1.starts_with(r#"{"error":"#));
    assert_eq!((ev.len(), end), (2, Ending::Clean));
}

#[tokio::test(start_paused = true)]
async fn a_pause_after_no_token_comes_between_the_role_chunk_and_the_first_token() {
    let timer = TokenTimer::tokio();
    let (mut body, _) = stream_on(&timer, &request(Kind::Chat, 2, false), 5, 1, None);
    body.timetable.pause_after(0, Duration::from_millis(100));
    let events = collect(body).await;
    assert!(events[0].1.contains(r#""role":"assistant""#), "{events:?}");
    let at: Vec<_> = events.iter().map(|(t, _)| t.as_millis()).collect();
    assert_eq!(at, [5, 105, 106, 106], "{events:?}");
}

#[tokio::test(start_paused = true)]
async fn an_answer_without_fault_departs_finished_and_a_dropped_one_gone() {
    let timer = TokenTimer::tokio();
    let (body, engine) = stream_on(&timer, &request(Kind::Completions, 3, false), 5, 1, None);
    let (_, end) = run(body).await;
    assert_eq!(end, Ending::Clean);
    assert_eq!(*engine.departed.lock().unwrap(), [Departure::Finished]);
    let (mut body, engine) = stream_on(&timer, &request(Kind::Completions, 3, false), 5, 1, None);
    body.frame().await.unwrap().unwrap();
    drop(body);
    assert_eq!(*engine.departed.lock().unwrap(), [Departure::Gone]);
}
