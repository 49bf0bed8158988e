//! `simserve`: a simulated OpenAI-compatible LLM server whose token timing is exact by
//! construction, so every tokenpipe command works on a fresh machine and `fire` can measure its
//! own timing error against it.
//!
//! When each token is due is the [`engine`]'s answer: by default a continuous-batching engine
//! ([`engine::batching`]) with a profile's costs ([`engine::profile`]), where each request's
//! tokens depend on what else runs; with `--ttft-ms`/`--itl-ms` (or `--profile fixed`) the
//! fixed timetable ([`engine::fixed`]): token k (1-based) leaves at
//! `received + ttft + (k − 1) · itl`, from absolute deadlines. The streamed body is a
//! hand-written `http_body::Body` ([`stream_body::StreamedAnswer`]) with one wait per request
//! and no task or channel per token, so 1,000 streams at 100 tokens per second stay cheap. With
//! `--stamps` the server writes its own send instants (see [`stamps`]).
//!
//! Tokens are timed on one shared Linux `timerfd` ([`timer`]), not on tokio's millisecond timer,
//! so they leave within microseconds of their deadline, never before it.
//!
//! Modules: [`cli`] (command line), [`config`] (the settings it becomes), [`error`] (what stops
//! the server, and its exit status), [`access`] (API key, slow response heads), [`api`]
//! (request parsing), [`prompt_count`] (words or a tokenizer's tokens), [`engine`] (when tokens are
//! due: the seam and its implementations), [`prompt_blocks`] (prompt block hashes for the
//! prefix cache), [`fault`] (simulated failures: which requests fail,
//! and how), [`timetable`] (one request's place in the engine and its wait), [`timer`] (the
//! shared high-resolution timer), [`transport`] (TLS and HTTP/2), [`waiter`] (the server's clock and how a request waits on it:
//! that timer, or tokio's under virtual time), [`render`] (wire bytes), [`stream_body`] (the
//! streamed body), [`stamps`] (send stamps), [`metrics`] (`/metrics`: vLLM's counters and
//! histograms), [`tokenize`] (`/tokenize`), [`server`] (listener and routes).
//!
//! The names are simserve's own: fire's `Pacer` (its dispatcher), fire's `sse` (its event
//! splitter) and the stream format's `schedule` record are different things.

#![warn(missing_docs)]

pub mod access;
pub(crate) mod api;
pub(crate) mod cli;
pub(crate) mod config;
pub(crate) mod dcgm;
pub mod engine;
pub(crate) mod error;
pub mod fault;
pub(crate) mod fault_kind;
pub(crate) mod metrics;
pub(crate) mod prompt_blocks;
pub mod prompt_count;
pub mod reasoning;
pub(crate) mod render;
pub(crate) mod request_log;
pub(crate) mod server;
pub(crate) mod spec_decode;
pub(crate) mod stamps;
pub(crate) mod stream_body;
pub(crate) mod timer;
pub(crate) mod timetable;
pub(crate) mod tokenize;
pub(crate) mod transport;
pub(crate) mod waiter;

pub use config::{Config, Settings};
pub use error::{DelayError, Error};
pub use prompt_count::{PromptCount, TokenizerError};
pub use request_log::RequestLog;
pub use server::Server;
pub use stamps::StampLog;
pub use transport::{TlsError, TlsFiles, TransportOptions};
pub use waiter::TokenTimer;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};

/// simserve's command line: parses the process arguments and serves until SIGINT or SIGTERM.
/// A reader that closed stdout (`simserve --generate man | head`) is a normal end.
pub fn main() -> Result<(), Error> {
    let Some(settings) = cli::parse()? else {
        return Ok(());
    };
    tokenpipe_cli::raise_fd_limit();
    run(&settings)
}

/// Runs the server `settings` describe: binds, prints the base URL on stdout, serves until a
/// signal, then flushes the stamps file. The library's entry point: a caller that wants the
/// whole process without a command line builds the [`Settings`] itself.
pub fn run(settings: &Settings) -> Result<(), Error> {
    let config = settings.config.clone();
    let transport = transport::Transport::from_options(&settings.transport)?;
    let create = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| Error::Create { path, source }
    };
    let stamps = match &settings.stamps {
        Some(path) => {
            let mut log = StampLog::create(path, stamp_params(&config)).map_err(create(path))?;
            if let Some(tokens) = &settings.token_stamps {
                log = log.with_token_file(tokens).map_err(create(tokens))?;
            }
            Some(Arc::new(log))
        }
        None => None,
    };
    let request_log = match &settings.log_requests {
        Some(path) => Some(Arc::new(RequestLog::create(path).map_err(create(path))?)),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(usize::from(settings.workers.max(1)))
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    let (host, port) = (settings.host.as_str(), settings.port);
    let served = runtime.block_on(async {
        let mut server = Server::bind((host, port), config, stamps.clone())
            .await
            .map_err(|source| Error::Listen {
                addr: format!("{host}:{port}"),
                source,
            })?
            .with_transport(transport);
        if let Some(log) = request_log.clone() {
            server = server.with_request_log(log);
        }
        let shutdown = shutdown_signal()?;
        announce(&server.base_url()?)?;
        server.run(shutdown).await;
        Ok(())
    });
    // Dropping the runtime drops the connections still open; their stamps are written then,
    // so the file is flushed only afterwards.
    runtime.shutdown_timeout(Duration::from_secs(1));
    if let Some(stamps) = &stamps {
        stamps.flush().map_err(Error::Stamps)?;
    }
    served
}

/// The settings a stamps file keeps in its header, so that it says what the server was asked to
/// do.
fn stamp_params(config: &Config) -> std::collections::BTreeMap<String, serde_json::Value> {
    use engine::profile::{EngineSettings, FIXED_PROFILE};
    let mut params = std::collections::BTreeMap::new();
    params.insert("model".into(), config.model.clone().into());
    match &config.engine {
        EngineSettings::Fixed => {
            params.insert("profile".into(), FIXED_PROFILE.into());
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            params.insert("ttft_ms".into(), ms(config.ttft).into());
            params.insert("itl_ms".into(), ms(config.itl).into());
        }
        EngineSettings::Batching(settings) => {
            params.insert("profile".into(), settings.profile.clone().into());
        }
    }
    params
}

/// Prints the one line scripts read to learn the port. A reader that already went away is not
/// an error: the server keeps serving.
fn announce(url: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{url}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Announce(e)),
        _ => Ok(()),
    }
}

/// Completes on the first SIGINT or SIGTERM. The handlers are installed before the URL is
/// printed, so a script that signals right after reading it is never lost.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, Error> {
    let handler = |kind: SignalKind, name: &'static str| {
        signal(kind).map_err(|source| Error::Signal {
            signal: name,
            source,
        })
    };
    let mut interrupt = handler(SignalKind::interrupt(), "SIGINT")?;
    let mut terminate = handler(SignalKind::terminate(), "SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}
