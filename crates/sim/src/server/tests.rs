//! Generation answers through the routes themselves, in process and on paused virtual time: when
//! the response head, each token and each whole answer come out under the faults that reshape an
//! answer (`slow-headers=MS`, `stall=MS`, `endless`, `long=N`), asked by header as a client asks.
//!
//! The engine is the fixed timetable (token k at 50 + 10·(k − 1) ms), so every instant is exact.

use super::*;
use crate::engine::profile::{self, Overrides};
use http_body_util::BodyExt;
use serde_json::Value;
use tokio::time::Instant;

const TTFT_MS: u64 = 50;
const ITL_MS: u64 = 10;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// When token `k` (1-based) is due without a fault.
fn due(k: u64) -> Duration {
    ms(TTFT_MS + (k - 1) * ITL_MS)
}

fn config() -> Config {
    Config::from_ms("m", TTFT_MS as f64, ITL_MS as f64).unwrap()
}

/// A server's shared state with `config`, on tokio's clock (paused in these tests).
fn serving(config: Config) -> App {
    App::new(config, None, TokenTimer::tokio())
}

/// A completion of `max_tokens` from a three-word prompt, streamed or not, asking for `fault`
/// with the `x-tokenpipe-fault` header.
fn completion(max_tokens: u64, stream: bool, fault: Option<&str>) -> Request<Full<Bytes>> {
    let body = format!(r#"{{"prompt":"a b c","max_tokens":{max_tokens},"stream":{stream}}}"#);
    let mut req = Request::post("/v1/completions").header(CONTENT_TYPE, "application/json");
    if let Some(fault) = fault {
        req = req.header(fault::header::NAME, fault);
    }
    req.body(Full::new(Bytes::from(body))).unwrap()
}

/// One answer as a client sees it: when its head came, and each body frame with when it came,
/// both from the moment the request was sent.
struct Seen {
    head: Duration,
    status: StatusCode,
    frames: Vec<(Duration, String)>,
}

impl Seen {
    /// The instants of the token events of a stream.
    fn tokens(&self) -> Vec<Duration> {
        self.frames
            .iter()
            .filter(|(_, f)| f.contains(r#""text":" "#))
            .map(|(at, _)| *at)
            .collect()
    }

    /// The one frame of a whole answer, parsed.
    fn json(&self) -> Value {
        assert_eq!(self.frames.len(), 1, "one buffer: {:?}", self.frames);
        serde_json::from_str(&self.frames[0].1).unwrap()
    }
}

async fn send(app: &App, req: Request<Full<Bytes>>) -> Seen {
    let start = Instant::now();
    let response = handle(app, req).await.expect("an answer, not a reset");
    let head = start.elapsed();
    let status = response.status();
    let mut body = response.into_body();
    let mut frames = Vec::new();
    while let Some(frame) = body.frame().await {
        let data = frame.unwrap().into_data().unwrap();
        frames.push((start.elapsed(), String::from_utf8(data.to_vec()).unwrap()));
    }
    Seen {
        head,
        status,
        frames,
    }
}

#[tokio::test(start_paused = true)]
async fn slow_headers_hold_the_head_while_the_tokens_keep_their_schedule() {
    let app = serving(config());
    for held in [20, 75, 200] {
        let fault = format!("slow-headers={held}");
        let seen = send(&app, completion(5, true, Some(&fault))).await;
        assert_eq!(
            (seen.status, seen.head),
            (StatusCode::OK, ms(held)),
            "{fault}"
        );
        // Token k at max(MS, its own deadline): those due while the head was held come with it.
        let want: Vec<_> = (1..=5).map(|k| due(k).max(ms(held))).collect();
        assert_eq!(seen.tokens(), want, "{fault}");
        assert_eq!(
            seen.frames.last().unwrap(),
            &(want[4], "data: [DONE]\n\n".into())
        );
    }
    // An answer sent whole comes at the later of the held head and its last token.
    for (held, at) in [(20, due(5)), (300, ms(300))] {
        let fault = format!("slow-headers={held}");
        let seen = send(&app, completion(5, false, Some(&fault))).await;
        assert_eq!(seen.head, at, "{fault}");
        assert_eq!(seen.json()["usage"]["completion_tokens"], 5);
    }
    // On top of --headers-delay-ms.
    let mut delayed = config();
    delayed.access.headers_delay = ms(30);
    let seen = send(
        &serving(delayed),
        completion(5, true, Some("slow-headers=200")),
    )
    .await;
    assert_eq!(seen.head, ms(230));
    assert_eq!(seen.tokens(), vec![ms(230); 5]);
}

#[tokio::test(start_paused = true)]
async fn a_whole_answer_with_a_timed_stall_comes_that_much_later() {
    let app = serving(config());
    let plain = send(&app, completion(6, false, None)).await;
    assert_eq!(plain.head, due(6));
    let answer = plain.json();
    // Whatever `after` says (the default is half of max_tokens), the stall comes before the
    // last token at the latest, so the whole answer is always 300 ms late, and whole.
    for fault in [
        "stall=300",
        "stall=300;after=0",
        "stall=300;after=5",
        "stall=300;after=6",
    ] {
        let seen = send(&app, completion(6, false, Some(fault))).await;
        assert_eq!(seen.head, due(6) + ms(300), "{fault}");
        let v = seen.json();
        assert_eq!(v["choices"], answer["choices"], "{fault}");
        assert_eq!(v["usage"], answer["usage"], "{fault}");
    }
    // A one-token answer too.
    let seen = send(&app, completion(1, false, Some("stall=300"))).await;
    assert_eq!(seen.head, due(1) + ms(300));
    assert_eq!(seen.json()["usage"]["completion_tokens"], 1);
}

#[tokio::test(start_paused = true)]
async fn a_streamed_one_token_answer_with_a_timed_stall_is_late() {
    let app = serving(config());
    let plain = send(&app, completion(1, true, None)).await;
    assert_eq!(plain.tokens(), [due(1)]);
    // `after` defaults to 1, all of the answer: the pause still comes before its only token.
    for fault in ["stall=300", "stall=300;after=0", "stall=300;after=1"] {
        let seen = send(&app, completion(1, true, Some(fault))).await;
        assert_eq!(seen.head, Duration::ZERO, "{fault}");
        assert_eq!(seen.tokens(), [due(1) + ms(300)], "{fault}");
        let last = seen.frames.last().unwrap();
        assert_eq!(
            last,
            &(due(1) + ms(300), "data: [DONE]\n\n".into()),
            "{fault}"
        );
        assert!(
            seen.frames[0].1.contains(r#""finish_reason":"length""#),
            "{fault}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_whole_endless_answer_never_comes_and_its_client_leaving_frees_the_engine() {
    // The fixed timetable: nothing after an hour.
    let fixed = serving(config());
    let start = Instant::now();
    let hour = Duration::from_secs(3600);
    let waited = tokio::time::timeout(hour, send(&fixed, completion(4, false, Some("endless"))));
    assert!(waited.await.is_err(), "an answer came");
    assert_eq!(start.elapsed(), hour);
    // The batching engine: the request runs on it, unanswered, until the client gives up.
    let mut batching = config();
    batching.engine = profile::choose(Some("small-gpu"), false, &Overrides::default()).unwrap();
    let app = serving(batching);
    let mut request = Box::pin(send(&app, completion(4, false, Some("endless"))));
    assert!(tokio::time::timeout(hour, &mut request).await.is_err());
    let held = app.engine.gauges(app.timer.now_ns());
    assert_eq!(held.running.unwrap_or(0) + held.waiting, 1, "{held:?}");
    drop(request);
    let left = app.engine.gauges(app.timer.now_ns());
    assert_eq!((left.running, left.waiting), (Some(0), 0), "{left:?}");
}

#[tokio::test(start_paused = true)]
async fn a_whole_long_answer_holds_n_tokens_and_its_usage_says_so() {
    let app = serving(config());
    let seen = send(&app, completion(4, false, Some("long=50"))).await;
    // Sent whole at its 50th token's deadline.
    assert_eq!((seen.status, seen.head), (StatusCode::OK, due(50)));
    let v = seen.json();
    let choice = &v["choices"][0];
    assert_eq!(
        choice["text"].as_str().unwrap().split_whitespace().count(),
        50
    );
    assert_eq!(choice["finish_reason"], "length");
    assert_eq!(v["usage"]["completion_tokens"], 50);
    assert_eq!(v["usage"]["prompt_tokens"], 3);
    assert_eq!(v["usage"]["total_tokens"], 53);
}

#[tokio::test(start_paused = true)]
async fn holds_and_stalls_are_not_the_servers_lateness() {
    let path = std::env::temp_dir().join(format!("simserve-held-{}.ndjson", std::process::id()));
    let log = Arc::new(StampLog::create(&path, Default::default()).unwrap());
    let mut held = config();
    held.access.headers_delay = ms(200);
    let plain = App::new(config(), Some(log.clone()), TokenTimer::tokio());
    let delayed = App::new(held, Some(log.clone()), TokenTimer::tokio());
    // Every one of these holds its head or pauses its tokens on purpose; on virtual time the
    // server hands each token over exactly when it can, so none is late.
    for stream in [true, false] {
        let _ = send(&plain, completion(5, stream, Some("stall=300;after=2"))).await;
        let _ = send(&plain, completion(5, stream, Some("slow-headers=200"))).await;
        let _ = send(&delayed, completion(5, stream, None)).await;
    }
    drop((plain, delayed));
    log.flush().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let stamps: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &Value| r["type"] == "stamp")
        .collect();
    assert_eq!(stamps.len(), 6, "{text}");
    for s in &stamps {
        assert_eq!(s["tokens"], 5, "{s}");
        assert_eq!(
            (&s["late_max_ns"], &s["late_sum_ns"]),
            (&0.into(), &0.into()),
            "{s}"
        );
    }
}
