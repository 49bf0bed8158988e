//! The HTTP side: the listener, one task per connection (served by [`crate::transport`]: plain
//! TCP or TLS, HTTP/1.1 with keep-alive or HTTP/2, Nagle off), and the routes.
//!
//! `POST /v1/completions` and `POST /v1/chat/completions` read the whole body, note that
//! instant as the request's origin, and answer either with a [`StreamedAnswer`] or, when not
//! streaming, with the whole JSON at the last token's deadline. `GET /v1/models` and
//! `GET /health` answer at once, as do `GET /metrics` ([`crate::metrics`]) and
//! `POST /tokenize` ([`crate::tokenize`]), which, as in vLLM, need no API key. Anything else
//! gets an OpenAI-style error (404, 405, 400, 413).
//!
//! A generation request chosen to fail ([`crate::fault`]) is answered with the fault layer's
//! refusal at once (`http`), or carries its fault into the answer, which carries it out.

use crate::access::{self, Access};
use crate::api::{self, GenerationRequest, Kind};
use crate::config::Config;
use crate::dcgm::Gpus;
use crate::engine::{self, Admission, Departure, Engine};
use crate::fault::select::FaultPlan;
use crate::fault::{self, Fault, NotStream, Reset, WholeDivert};
use crate::metrics::{self, Meter, Metrics};
use crate::prompt_count::PromptCount;
use crate::render::{self, Renderer};
use crate::request_log::RequestLog;
use crate::spec_decode::{Drafter, SpecCounters, SpecDecode};
use crate::stamps::{RequestStamps, StampLog};
use crate::stream_body::StreamedAnswer;
use crate::timetable::Timetable;
use crate::transport::Transport;
use crate::waiter::TokenTimer;
use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokenpipe_format::clock::monotonic_ns;
use tokio::net::{TcpListener, TcpStream};

/// The largest request body read (64 MiB): room for very long prompts, a bound on memory.
pub const MAX_BODY_BYTES: usize = 64 << 20;

/// A response body: a whole buffer or a token stream.
pub type ResponseBody = Either<Full<Bytes>, StreamedAnswer>;

/// A request body the routes can read: hyper's from a connection, or a buffer in tests.
trait RequestBody: hyper::body::Body<Data = Bytes, Error: Into<BoxError>> {}

impl<B: hyper::body::Body<Data = Bytes, Error: Into<BoxError>>> RequestBody for B {}

/// The error type `http_body_util::Limited` reads any body's errors into.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What every connection shares.
struct App {
    renderer: Renderer,
    models: Bytes,
    stamps: Option<Arc<StampLog>>,
    /// When each token is due.
    engine: Arc<dyn Engine>,
    /// The clock every answer waits on.
    timer: TokenTimer,
    /// Which requests fail.
    faults: FaultPlan,
    /// Numbers answers: `cmpl-1`, `chatcmpl-2`, …
    next_id: AtomicU64,
    /// The API key required, and how long response heads wait.
    access: Access,
    /// Where each generation request is logged as it arrives (`--log-requests`).
    request_log: Option<Arc<RequestLog>>,
    /// What `/metrics` reports.
    metrics: Arc<Metrics>,
    /// How prompt tokens are counted.
    prompt_count: PromptCount,
    /// `--spec-decode`: its setting and the server's counters.
    spec: Option<(SpecDecode, Arc<SpecCounters>)>,
    /// `--gpus`: the modelled GPUs.
    gpus: Option<Gpus>,
    /// Whether usage reports the prompt tokens the prefix cache held.
    cache_details: bool,
}

impl App {
    /// What the connections of a server with `config` share, its tokens timed by `timer`.
    fn new(config: Config, stamps: Option<Arc<StampLog>>, timer: TokenTimer) -> Self {
        let renderer = Renderer::new(&config.model).with_reasoning(config.reasoning);
        let engine = engine::from_settings(&config.engine, config.ttft, config.itl);
        let max_model_len = engine
            .max_model_len()
            .unwrap_or(metrics::DEFAULT_MAX_MODEL_LEN);
        let metrics = Arc::new(Metrics::new(&config.model, max_model_len));
        let spec = config.spec_decode.map(|spec| {
            let counters = SpecCounters::new(metrics.labels().to_string(), spec.k);
            (spec, Arc::new(counters))
        });
        let gpus = (config.gpus > 0).then(|| Gpus::new(config.gpus, timer.now_ns()));
        App {
            models: renderer.models(),
            renderer,
            engine,
            faults: config.faults,
            access: config.access,
            stamps,
            timer,
            next_id: AtomicU64::new(1),
            request_log: None,
            metrics,
            prompt_count: config.prompt_count,
            spec,
            gpus,
            cache_details: config.cache_details,
        }
    }
}

impl App {
    /// The drafter of request number `id` under `--spec-decode`; none without it.
    fn drafter(&self, id: u64) -> Option<Drafter> {
        let (spec, counters) = self.spec.as_ref()?;
        Some(Drafter::new(*spec, id, counters.clone()))
    }
}

/// A bound, not yet running server.
pub struct Server {
    listener: TcpListener,
    app: Arc<App>,
    transport: Arc<Transport>,
}

impl Server {
    /// Binds `addr` (a host name is resolved; port 0 picks a free port). Tokens are timed by
    /// the precise timerfd timer where there is one (see [`TokenTimer::start`]).
    pub async fn bind(
        addr: (&str, u16),
        config: Config,
        stamps: Option<Arc<StampLog>>,
    ) -> io::Result<Self> {
        Self::bind_with_timer(addr, config, stamps, TokenTimer::start()).await
    }

    /// Binds `addr` with a chosen `timer`: [`TokenTimer::tokio`] for tests on paused virtual
    /// time.
    pub async fn bind_with_timer(
        addr: (&str, u16),
        config: Config,
        stamps: Option<Arc<StampLog>>,
        timer: TokenTimer,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        Ok(Self {
            listener,
            app: Arc::new(App::new(config, stamps, timer)),
            transport: Arc::new(Transport::plain()),
        })
    }

    /// Logs every generation request to `log` as it arrives.
    pub fn with_request_log(mut self, log: Arc<RequestLog>) -> Self {
        if let Some(app) = Arc::get_mut(&mut self.app) {
            app.request_log = Some(log);
        }
        self
    }

    /// Serves connections with `transport` (TLS, the connection log) instead of plain TCP.
    pub fn with_transport(mut self, transport: Transport) -> Self {
        self.transport = Arc::new(transport);
        self
    }

    /// The address actually bound, with the chosen port.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The base URL clients use: `http://ADDR:PORT/v1` (`https://` with TLS).
    pub fn base_url(&self) -> io::Result<String> {
        let scheme = self.transport.scheme();
        Ok(format!("{scheme}://{}/v1", self.local_addr()?))
    }

    /// Accepts connections until `shutdown` completes. Connections in flight are left to the
    /// runtime; dropping it ends them (their stamps are still written).
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                biased;
                () = &mut shutdown => return,
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let (app, transport) = (self.app.clone(), self.transport.clone());
                        tokio::spawn(serve_connection(stream, peer, app, transport));
                    }
                    Err(e) => {
                        // Out of file descriptors or a connection reset before accept: wait a
                        // little rather than spin, and keep serving.
                        eprintln!("simserve: accept: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                },
            }
        }
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Arc<App>,
    transport: Arc<Transport>,
) {
    let service = hyper::service::service_fn(move |req| {
        let app = app.clone();
        async move { handle(&app, req).await }
    });
    transport.serve(stream, peer, service).await;
}

/// The routes the server knows.
enum Route {
    Generate(Kind),
    Models,
    Health,
    Metrics,
    Tokenize,
}

/// Answers one request; `Err` only for a simulated `reset` of an answer that is not streamed,
/// which makes hyper drop the connection unanswered. Any request body will do, so that tests
/// can answer requests in process, on virtual time.
async fn handle<B: RequestBody>(
    app: &App,
    req: Request<B>,
) -> Result<Response<ResponseBody>, Reset> {
    let route = match req.uri().path() {
        "/v1/completions" => Route::Generate(Kind::Completions),
        "/v1/chat/completions" => Route::Generate(Kind::Chat),
        "/v1/models" => Route::Models,
        "/health" => Route::Health,
        "/metrics" => Route::Metrics,
        "/tokenize" => Route::Tokenize,
        path => {
            let message = format!("no route {path}");
            return Ok(error(StatusCode::NOT_FOUND, "not_found_error", &message));
        }
    };
    // As vLLM, only the /v1 routes ask for the API key.
    let open = matches!(route, Route::Health | Route::Metrics | Route::Tokenize);
    if !open && !app.access.allows(req.headers()) {
        return Ok(error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            access::UNAUTHORIZED_MESSAGE,
        ));
    }
    let method = req.method();
    if let Route::Generate(kind) = route {
        if method == Method::POST {
            return generate(app, kind, req).await;
        }
    }
    if matches!(route, Route::Tokenize) && method == Method::POST {
        return Ok(tokenize(req, app.engine.max_model_len(), &app.prompt_count).await);
    }
    Ok(match route {
        Route::Models if method == Method::GET || method == Method::HEAD => {
            json(StatusCode::OK, app.models.clone())
        }
        Route::Health if method == Method::GET || method == Method::HEAD => {
            full(StatusCode::OK, Bytes::new())
        }
        Route::Metrics if method == Method::GET || method == Method::HEAD => {
            let now_ns = app.timer.now_ns();
            let mut text = app.metrics.render(app.engine.gauges(now_ns));
            if let Some((_, counters)) = &app.spec {
                counters.render(&mut text);
            }
            if let Some(gpus) = &app.gpus {
                gpus.render(&app.metrics.occupancy, now_ns, &mut text);
            }
            let mut response = full(StatusCode::OK, Bytes::from(text));
            response.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static(metrics::CONTENT_TYPE),
            );
            response
        }
        Route::Generate(_) | Route::Tokenize => not_allowed("POST", method),
        Route::Models | Route::Health | Route::Metrics => not_allowed("GET, HEAD", method),
    })
}

/// A generation request's answer, with its `x-request-id` echoed.
async fn generate<B: RequestBody>(
    app: &App,
    kind: Kind,
    req: Request<B>,
) -> Result<Response<ResponseBody>, Reset> {
    let request_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let echo = request_id
        .as_deref()
        .and_then(|id| HeaderValue::from_str(id).ok());
    let mut head_held = false;
    let mut response = answer(app, kind, req, request_id, &mut head_held).await?;
    if !head_held {
        // An answer that never reached the engine (an error) is held here.
        app.access.delay_headers().await;
    }
    if let Some(value) = echo {
        response.headers_mut().insert("x-request-id", value);
    }
    Ok(response)
}

async fn answer<B: RequestBody>(
    app: &App,
    kind: Kind,
    req: Request<B>,
    request_id: Option<String>,
    head_held: &mut bool,
) -> Result<Response<ResponseBody>, Reset> {
    let logged_headers = app.request_log.as_ref().map(|_| req.headers().clone());
    let header_fault = fault::header::asked(req.headers(), api::MAX_TOKENS_LIMIT);
    let body = match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            let message = format!("request body larger than {MAX_BODY_BYTES} bytes");
            return Ok(error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "invalid_request_error",
                &message,
            ));
        }
        Err(e) => {
            let message = format!("cannot read request body: {e}");
            return Ok(error(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &message,
            ));
        }
    };
    // The request's arrival, for the stamps file and on the timer's clock (the same clock when
    // the timer is precise); the stamp is read first so that a token's stamp is never less
    // than `ttft` after it.
    let received_ns = monotonic_ns();
    let arrival_ns = app.timer.now_ns();
    if let (Some(log), Some(headers)) = (&app.request_log, &logged_headers) {
        log.record(request_id.as_deref(), headers, &body);
    }
    // Its line in the stamps file is written when this is dropped, whatever the answer.
    let mut stamps = RequestStamps::new(app.stamps.clone(), request_id, received_ns);
    let Some((parsed, prefix_blocks)) = read_prompt(app, kind, &body).await else {
        let message = "the server is shutting down";
        return Ok(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            message,
        ));
    };
    let (mut parsed, header_fault) = match (parsed, header_fault) {
        (Ok(parsed), Ok(asked)) => (parsed, asked),
        // The body's error first, then the header's.
        (Err(api::ApiError { message }), _) => {
            let bad = error(StatusCode::BAD_REQUEST, "invalid_request_error", &message);
            return Ok(bad);
        }
        (_, Err(header)) => {
            let message = header.to_string();
            let bad = error(StatusCode::BAD_REQUEST, "invalid_request_error", &message);
            return Ok(bad);
        }
    };
    let id = app.next_id.fetch_add(1, Ordering::Relaxed);
    let asked = header_fault.over(parsed.fault);
    let fault = app.faults.choose(id, &asked, parsed.max_tokens);
    if let Some(refusal) = fault.as_ref().and_then(Fault::refusal) {
        let status =
            StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = error(status, refusal.kind, &refusal.message);
        if refusal.retry_after {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(app.faults.retry_after_s()));
        }
        return Ok(response);
    }
    // `stall=MS`, `slow-headers=MS`, `endless`, `long=N`, `uncounted` change the answer (or
    // what the counters say of it), not break it.
    let reshape = fault.as_ref().and_then(Fault::reshape).unwrap_or_default();
    let fault = fault.filter(|f| f.reshape().is_none());
    reshape.apply_to(&mut parsed);
    let not_stream = fault.as_ref().and_then(Fault::not_stream);
    if let Some(NotStream::Html(page)) = not_stream {
        let mut response = full(StatusCode::OK, page);
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        return Ok(response);
    }
    let admission = Admission {
        arrival_ns,
        prompt_tokens: parsed.prompt_tokens,
        max_tokens: parsed.max_tokens,
        prefix_blocks,
    };
    // An answer longer than asked (`long=N`, `endless`) is the fault's point, not a request to
    // refuse for its length.
    if reshape.tokens.is_none() {
        if let Some(message) = app.engine.refuse(&admission) {
            let bad = error(StatusCode::BAD_REQUEST, "BadRequestError", &message);
            return Ok(bad);
        }
    }
    let mut timetable = Timetable::admit(app.engine.clone(), &app.timer, &admission);
    if let Some((after, delay)) = reshape.pause {
        // The stall comes before the last token at the latest, so that a one-token answer
        // stalls too.
        timetable.pause_after(after.min(parsed.max_tokens.saturating_sub(1)), delay);
    }
    // An `uncounted` request is answered as any other but never reaches `/metrics`.
    if !reshape.uncounted {
        let meter = Meter::start(
            app.metrics.clone(),
            app.timer.clone(),
            arrival_ns,
            parsed.prompt_tokens,
        );
        stamps.meter(meter);
    }
    // The head is held back (`--headers-delay-ms`, then `slow-headers=MS`) before any token can
    // leave; the tokens due meanwhile leave together once it is out, which is the point of the
    // hold, not the server's lateness.
    app.access.delay_headers().await;
    *head_held = true;
    reshape.hold_head().await;
    timetable.held_until(app.timer.now_ns());
    if reshape.endless && !parsed.stream {
        // An answer sent whole that never ends is never sent: the client's timeout ends it.
        return std::future::pending().await;
    }
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if not_stream == Some(NotStream::WholeJson) {
        return whole_answer(app, &parsed, timetable, stamps, id, created, None).await;
    }
    if !parsed.stream {
        return whole_answer(app, &parsed, timetable, stamps, id, created, fault).await;
    }
    let chunks = app.renderer.chunks(kind, id, created, parsed.max_tokens);
    let drafter = app.drafter(id);
    let body = StreamedAnswer::new(&parsed, chunks, timetable, stamps, fault)
        .with_drafter(drafter)
        .with_cache_details(app.cache_details);
    let mut response = Response::new(Either::Right(body));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    Ok(response)
}

/// The non-streamed answer, handed over at the last token's deadline, or the fault's
/// whole-answer form at its point.
async fn whole_answer(
    app: &App,
    parsed: &GenerationRequest,
    mut timetable: Timetable,
    mut stamps: RequestStamps,
    id: u64,
    created: u64,
    fault: Option<Fault>,
) -> Result<Response<ResponseBody>, Reset> {
    let Some(fault) = fault else {
        let body = app.renderer.full_response(parsed, id, created);
        // With --spec-decode the answer takes fewer steps than it has tokens.
        let steps = match app.drafter(id) {
            Some(mut drafter) => drafter.steps_for(parsed.max_tokens),
            None => parsed.max_tokens,
        };
        let due_ns = timetable.until(steps).await;
        timetable.depart(Departure::Finished);
        // All tokens leave together, at the last one's deadline: first and last token stamps
        // are the same instant.
        stamps.sent(parsed.max_tokens, || timetable.late_ns(due_ns));
        stamps.finished();
        return Ok(json(StatusCode::OK, body));
    };
    let divert = fault.whole(&app.renderer, parsed, id, created);
    let due_ns = timetable.until(fault.due_token(parsed.max_tokens)).await;
    timetable.depart(Departure::Failed);
    match divert {
        WholeDivert::Reset => Err(Reset),
        // Ends when the client leaves: hyper then drops this future.
        WholeDivert::Stall => std::future::pending().await,
        WholeDivert::Answer { body, tokens } => {
            if tokens > 0 {
                stamps.sent(tokens, || timetable.late_ns(due_ns));
            }
            Ok(json(StatusCode::OK, body))
        }
    }
}

/// The request in `body` parsed, and its prompt's block hashes if the engine wants them (none
/// for a request refused), counted as the server counts prompts; `None` if the runtime shuts
/// down meanwhile.
async fn read_prompt(
    app: &App,
    kind: Kind,
    body: &Bytes,
) -> Option<(Result<GenerationRequest, api::ApiError>, Vec<u64>)> {
    let count = app.prompt_count.clone();
    let wants_blocks = app.engine.wants_prefix_blocks();
    let body = body.clone();
    let read = move || {
        let parsed = api::parse(kind, &body, &count);
        let blocks = match parsed {
            Ok(_) if wants_blocks => crate::prompt_blocks::of_body(kind, &body, &count),
            _ => Vec::new(),
        };
        (parsed, blocks)
    };
    app.prompt_count.off_loop(read).await
}

/// `POST /tokenize`: the prompt's token count and ids, or a 400 naming what was wrong.
async fn tokenize<B: RequestBody>(
    req: Request<B>,
    max_model_len: Option<u64>,
    count: &PromptCount,
) -> Response<ResponseBody> {
    let body = match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            let message = format!("cannot read the request body: {e}");
            return error(StatusCode::BAD_REQUEST, "invalid_request_error", &message);
        }
    };
    let max_model_len = max_model_len.unwrap_or(metrics::DEFAULT_MAX_MODEL_LEN);
    let counting = count.clone();
    let answer = move || crate::tokenize::answer(&body, max_model_len, &counting);
    match count.off_loop(answer).await {
        Some(Ok(answer)) => json(StatusCode::OK, Bytes::from(answer.to_string())),
        Some(Err(e)) => error(StatusCode::BAD_REQUEST, "invalid_request_error", &e.message),
        None => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "the server is shutting down",
        ),
    }
}

fn full(status: StatusCode, body: Bytes) -> Response<ResponseBody> {
    let mut response = Response::new(Either::Left(Full::new(body)));
    *response.status_mut() = status;
    response
}

fn json(status: StatusCode, body: Bytes) -> Response<ResponseBody> {
    let mut response = full(status, body);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn error(status: StatusCode, kind: &str, message: &str) -> Response<ResponseBody> {
    json(status, render::error(status.as_u16(), kind, message))
}

fn not_allowed(allow: &'static str, method: &Method) -> Response<ResponseBody> {
    let message = format!("method {method} not allowed here; use {allow}");
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed_error",
        &message,
    );
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    response
}

#[cfg(test)]
mod tests;
