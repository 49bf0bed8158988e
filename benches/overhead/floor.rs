//! The floor: the least a client must do to send `fire`'s schedule and read its answers, so that
//! `fire`'s CPU, memory and lateness can be read against it rather than against zero.
//!
//! It runs as its own process (the benchmark re-executes itself with `--floor`), so its CPU and
//! peak RSS come from `wait4` exactly like `fire`'s. It does what `fire` must do and nothing
//! else: the same runtime flavour (current-thread tokio), the same hyper 1.x pooled keep-alive
//! client with `TCP_NODELAY`, the same bodies (encoded by `fire`'s own dialect on a dispatcher
//! thread that sleeps then spins to each send instant), the same headers (`x-request-id` in
//! `fire`'s shape, so the server's stamps join). Then it only counts response bytes and notes
//! the instant of every body frame that carries tokens, once per token in it (the chat stream's
//! first frame is a role-only delta, not a token). No SSE splitting, no chunk parsing, no
//! records: its per-request results stay in memory and are written once, at the end, but for
//! the token instants, which each request appends in binary to `OUT.tokens` as it ends (so that
//! memory holds the requests in flight, as `fire`'s does).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::CONTENT_TYPE;
use hyper::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::io::{BufReader, BufWriter, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokenpipe_fire::api::{Api, BodyOptions};
use tokenpipe_fire::exchange::request_uuid;
use tokenpipe_format::clock::monotonic_ns;
use tokenpipe_format::{LoopMode, OrOther, Record, RecordReader, RecordType};
use tokio::sync::{mpsc, Semaphore};

/// One request as the floor saw it; times on `CLOCK_MONOTONIC`.
pub struct Seen {
    pub id: u64,
    pub scheduled_ns: u64,
    pub sent_ns: u64,
    /// The first body frame with a token in it (0: none came).
    pub first_token_ns: u64,
    pub bytes: u64,
    pub max_tokens: u64,
    pub ok: bool,
}

/// A request released by the dispatcher thread.
struct Job {
    id: u64,
    scheduled_ns: Option<u64>,
    max_tokens: u64,
    body: Bytes,
}

/// The run hash in the floor's request ids (any constant: the floor runs against its own server).
const RUN_HASH: u64 = 0x0f10_0f10_0f10_0f10;

/// Where each request's token instants go as it ends: `id: u64, n: u32, n × instant: u64`,
/// little-endian (read by `itl::read_floor`).
type TokenFile = Arc<Mutex<BufWriter<std::fs::File>>>;

/// The bytes of `"content":"` before a chat delta's text, and how many bytes of a frame may
/// hold the start of one whose text begins in the next frame.
const CONTENT: &[u8] = b"\"content\":\"";
const CARRY: usize = CONTENT.len();

/// `--floor URL SCHEDULE OUT`: runs the schedule and writes one line per request to OUT, and
/// every token's instant to `OUT.tokens`.
pub fn main(args: &[String]) -> Result<(), String> {
    let [url, schedule, out] = args else {
        return Err("usage: --floor URL SCHEDULE OUT".into());
    };
    tokenpipe_cli::raise_fd_limit();
    let uri: Uri = format!("{url}{}", Api::Chat.path())
        .parse()
        .map_err(|e| format!("{url}: {e}"))?;
    let file = std::fs::File::open(schedule).map_err(|e| format!("{schedule}: {e}"))?;
    let mut reader = RecordReader::new(BufReader::new(file), "schedule")
        .keep(&[RecordType::Schedule, RecordType::Request]);
    reader.read_header().map_err(|e| e.to_string())?;
    let first = reader.next_record().map_err(|e| e.to_string())?;
    let closed = match &first {
        Some(Record::Schedule(s)) if s.mode == OrOther::Known(LoopMode::Closed) => {
            Some(s.concurrency.unwrap_or(1).max(1) as usize)
        }
        _ => None,
    };
    let origin = monotonic_ns();
    let (tx, rx) = mpsc::channel::<Job>(4096);
    let dispatcher =
        std::thread::spawn(move || dispatch(reader, first, closed.is_none(), origin, tx));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let tokens_path = format!("{out}.tokens");
    let tokens = std::fs::File::create(&tokens_path).map_err(|e| format!("{tokens_path}: {e}"))?;
    let tokens: TokenFile = Arc::new(Mutex::new(BufWriter::with_capacity(1 << 16, tokens)));
    let seen = runtime.block_on(send_all(uri, rx, closed, tokens.clone()));
    let mut tokens = tokens
        .lock()
        .map_err(|_| "token file lock poisoned".to_string())?;
    tokens.flush().map_err(|e| format!("{tokens_path}: {e}"))?;
    dispatcher
        .join()
        .map_err(|_| "dispatcher panicked".to_string())??;
    let mut w = std::io::BufWriter::new(std::fs::File::create(out).map_err(|e| e.to_string())?);
    for s in seen {
        writeln!(
            w,
            "{} {} {} {} {} {} {}",
            s.id, s.scheduled_ns, s.sent_ns, s.first_token_ns, s.bytes, s.max_tokens, s.ok as u8
        )
        .map_err(|e| e.to_string())?;
    }
    w.flush().map_err(|e| e.to_string())
}

/// Reads the schedule, encodes bodies with `fire`'s chat dialect and releases them: an open
/// loop at each offset (sleep, then spin the last 150 µs, as `fire` does), a closed loop at once.
fn dispatch(
    mut reader: RecordReader<BufReader<std::fs::File>>,
    mut pending: Option<Record>,
    open: bool,
    origin: u64,
    tx: mpsc::Sender<Job>,
) -> Result<(), String> {
    let opts = BodyOptions {
        model: None,
        ignore_eos: true,
        ..BodyOptions::default()
    };
    let dialect = Api::Chat.dialect();
    loop {
        let record = match pending.take() {
            Some(r) => r,
            None => match reader.next_record().map_err(|e| e.to_string())? {
                Some(r) => r,
                None => return Ok(()),
            },
        };
        let Record::Request(req) = record else {
            continue;
        };
        let body = dialect
            .encode(&req, &[], &opts)
            .map_err(|e| e.to_string())?;
        let scheduled_ns = match (open, req.offset_ns) {
            (true, Some(offset)) => {
                let at = origin + offset;
                loop {
                    let now = monotonic_ns();
                    if now >= at {
                        break;
                    }
                    if at - now > 150_000 {
                        std::thread::sleep(Duration::from_nanos(at - now - 150_000));
                    } else {
                        std::hint::spin_loop();
                    }
                }
                Some(at)
            }
            _ => None,
        };
        let job = Job {
            id: req.id,
            scheduled_ns,
            max_tokens: req.max_tokens,
            body,
        };
        if tx.blocking_send(job).is_err() {
            return Ok(());
        }
    }
}

type FloorClient = Client<HttpConnector, Full<Bytes>>;

async fn send_all(
    uri: Uri,
    mut rx: mpsc::Receiver<Job>,
    closed: Option<usize>,
    token_file: TokenFile,
) -> Vec<Seen> {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.enforce_http(true);
    let client: FloorClient = Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .timer(TokioTimer::new())
        .pool_max_idle_per_host(usize::MAX)
        .pool_idle_timeout(Duration::from_secs(90))
        .build(http);
    let slots = Arc::new(Semaphore::new(closed.unwrap_or(Semaphore::MAX_PERMITS)));
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(job) = rx.recv().await {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            break;
        };
        // As in `fire`: a closed loop's request is due the moment its slot frees.
        let scheduled_ns = job.scheduled_ns.unwrap_or_else(monotonic_ns);
        let (client, uri, token_file) = (client.clone(), uri.clone(), token_file.clone());
        tasks.spawn(async move {
            let mut token_ns = Vec::with_capacity(job.max_tokens as usize);
            let seen = one(&client, uri, job, scheduled_ns, &mut token_ns).await;
            write_tokens(&token_file, seen.id, &token_ns);
            drop(permit);
            seen
        });
    }
    let mut seen = Vec::new();
    while let Some(r) = tasks.join_next().await {
        if let Ok(s) = r {
            seen.push(s);
        }
    }
    seen
}

/// Appends one request's token instants to the token file.
fn write_tokens(file: &TokenFile, id: u64, token_ns: &[u64]) {
    let Ok(mut w) = file.lock() else { return };
    let n = u32::try_from(token_ns.len()).unwrap_or(u32::MAX);
    let _ = w.write_all(&id.to_le_bytes());
    let _ = w.write_all(&n.to_le_bytes());
    for t in &token_ns[..n as usize] {
        let _ = w.write_all(&t.to_le_bytes());
    }
}

/// Sends one request and reads its body to the end, counting bytes and noting the instant of
/// each token in `token_ns` (one entry per token; a frame's tokens share its instant).
async fn one(
    client: &FloorClient,
    uri: Uri,
    job: Job,
    scheduled_ns: u64,
    token_ns: &mut Vec<u64>,
) -> Seen {
    let sent_ns = monotonic_ns();
    let mut seen = Seen {
        id: job.id,
        scheduled_ns,
        sent_ns,
        first_token_ns: 0,
        bytes: 0,
        max_tokens: job.max_tokens,
        ok: false,
    };
    let req = hyper::Request::post(uri)
        .header(CONTENT_TYPE, "application/json")
        .header("x-request-id", request_uuid(RUN_HASH, job.id))
        .body(Full::new(job.body));
    let Ok(req) = req else { return seen };
    let Ok(resp) = client.request(req).await else {
        return seen;
    };
    let status_ok = resp.status().is_success();
    let mut body = resp.into_body();
    let finder = memchr::memmem::Finder::new(CONTENT);
    let mut carry = Vec::with_capacity(2 * CARRY);
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { return seen };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let n = count_tokens(&finder, &mut carry, &data);
        if n > 0 {
            let now = monotonic_ns();
            if seen.first_token_ns == 0 {
                seen.first_token_ns = now;
            }
            token_ns.extend(std::iter::repeat_n(now, n));
        }
        seen.bytes += data.len() as u64;
    }
    seen.ok = status_ok;
    seen
}

/// How many chat deltas with non-empty content a frame holds, counting one whose
/// `"content":"` began in the previous frame (`carry`: that frame's last bytes, updated here).
fn count_tokens(finder: &memchr::memmem::Finder<'_>, carry: &mut Vec<u8>, data: &[u8]) -> usize {
    let opens_text = |at: &[u8], i: usize| at.get(i + CONTENT.len()).is_some_and(|&c| c != b'"');
    let mut n = finder
        .find_iter(data)
        .filter(|&i| opens_text(data, i))
        .count();
    if !carry.is_empty() {
        // Only a match that needs a byte of this frame was not counted with the previous one.
        let old = carry.len();
        carry.extend_from_slice(&data[..data.len().min(CARRY)]);
        n += finder
            .find_iter(carry)
            .filter(|&i| i < old && i + CONTENT.len() >= old && opens_text(carry, i))
            .count();
        carry.clear();
    }
    carry.extend_from_slice(&data[data.len().saturating_sub(CARRY)..]);
    n
}
