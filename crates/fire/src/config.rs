//! What a run is to do, as plain values: the input of [`crate::run()`], which `cli` builds from the
//! flags and a program may build itself. The checks of the values that only make sense
//! together (the endpoint's URI, the headers, the body settings) and what of them the output
//! header records live here, so that every caller gets the same checks and the same header.

use crate::api::{self, Api, StreamUsage};
use crate::benchy::LatencyMode;
use crate::error::Error;
use crate::headers;
use crate::http::Transport;
use crate::sink::DEFAULT_OUTPUT_BUFFER;
use crate::userinfo;
use hyper::header::HeaderMap;
use hyper::Uri;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::vocab;
use tokenpipe_format::Header;

/// A run's settings. Each field is one of fire's flags (named in its doc); `fire --help` says
/// what each does.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The schedule to read (`FILE`); stdin when `None` or `-`.
    pub schedule: Option<PathBuf>,
    /// Base URL of the API, up to and including `/v1` (`--url`); credentials in it become
    /// Basic auth to its host and are written as `user:***`.
    pub url: String,
    /// Which endpoint to call (`--api`); `None` picks by the schedule: the chat API for a
    /// batch schedule (llama-benchy's), completions otherwise.
    pub api: Option<Api>,
    /// Batch schedules: send llama-benchy's two warm-up requests before the first batch
    /// (unless `--no-warmup`).
    pub warmup: bool,
    /// Batch schedules: shorten the prompts by the warm-up's token delta when the schedule
    /// names its tokenizer, as llama-benchy adapts them (unless `--no-adapt-prompt`).
    pub adapt_prompt: bool,
    /// Batch schedules: how the network latency is measured before the first batch
    /// (`--latency-mode`).
    pub latency_mode: LatencyMode,
    /// The model to send; asked of the server when `None` (`--model`).
    pub model: Option<String>,
    /// Bearer token for the `Authorization` header (`--api-key`); never written anywhere.
    pub api_key: Option<String>,
    /// Path (or whole URL) of the generation endpoint, instead of `{url}` + the API's path
    /// (`--endpoint`).
    pub endpoint: Option<String>,
    /// Extra headers on every request, each `Name: value` (`-H`).
    pub headers: Vec<String>,
    /// A JSON object merged into every body (`--extra-body`), as given.
    pub extra_body: Option<String>,
    /// Sampling temperature sent in every body (`--temperature`).
    pub temperature: Option<f64>,
    /// Usage reporting asked of the stream (`--stream-usage`).
    pub stream_usage: StreamUsage,
    /// Requests kept in flight by a closed loop, instead of the schedule's (`--concurrency`).
    pub concurrency: Option<u64>,
    /// Longest a request may take from send to the end of its stream (`--timeout`).
    pub timeout: Duration,
    /// Longest wait for a TCP connection (`--connect-timeout`).
    pub connect_timeout: Duration,
    /// Longest wait from the send to the first event with content (`--first-token-timeout`).
    pub first_token_timeout: Option<Duration>,
    /// Longest silence between two reads of a body; `None` is no limit (`--idle-timeout 0`).
    pub idle_timeout: Option<Duration>,
    /// Run every request even when they fail to connect (`--keep-going`).
    pub keep_going: bool,
    /// Wait for a server that stopped accepting connections, at most this long in all, instead
    /// of stopping the run (`--retry-connect`); `None` stops it.
    pub retry_connect: Option<Duration>,
    /// Send `ignore_eos: true` (unless `--no-ignore-eos`).
    pub ignore_eos: bool,
    /// Write each request's generated text in its `done` record (`--record-text`).
    pub record_text: bool,
    /// Network threads (`--threads`).
    pub threads: u16,
    /// Show the progress view even when stderr is not a terminal (`--progress`).
    pub progress: bool,
    /// No progress view and no end-of-run counts (`--quiet`).
    pub quiet: bool,
    /// Also write the events to this file (`--save`).
    pub save: Option<PathBuf>,
    /// Output bytes held for a slow reader before fire waits for it (`--output-buffer`).
    pub output_buffer: u64,
    /// Scrape the server's metrics before and after the run: `Some("")` at the default URL,
    /// `Some(url)` at that one (`--server-metrics`).
    pub server_metrics: Option<String>,
    /// TLS, HTTP/2 and connections.
    pub transport: Transport,
    /// The host label and the instant to start at (`--host`, `--start-at`).
    pub start: crate::start_at::Start,
    /// The command line to record in the header (secrets are redacted before it is written).
    pub argv: Vec<String>,
}

impl Config {
    /// What the run does when requests keep failing to connect: `--retry-connect` waits,
    /// `--keep-going` sends on, and otherwise the run stops.
    pub(crate) fn on_unreachable(&self) -> crate::verdict::OnUnreachable {
        use crate::verdict::OnUnreachable;
        match (self.retry_connect, self.keep_going) {
            (Some(limit), _) => OnUnreachable::Retry(limit),
            (None, true) => OnUnreachable::KeepGoing,
            (None, false) => OnUnreachable::Stop,
        }
    }

    /// A run against `url` with every other setting at its flag's default.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            schedule: None,
            url: url.into(),
            api: None,
            warmup: true,
            adapt_prompt: true,
            latency_mode: LatencyMode::Api,
            model: None,
            api_key: None,
            endpoint: None,
            headers: Vec::new(),
            extra_body: None,
            temperature: None,
            stream_usage: StreamUsage::On,
            concurrency: None,
            timeout: Duration::from_secs(30 * 60),
            connect_timeout: Duration::from_secs(10),
            first_token_timeout: None,
            idle_timeout: Some(Duration::from_secs(60)),
            keep_going: false,
            retry_connect: None,
            ignore_eos: true,
            record_text: false,
            threads: 1,
            progress: false,
            quiet: false,
            save: None,
            output_buffer: DEFAULT_OUTPUT_BUFFER,
            server_metrics: None,
            transport: Transport::default(),
            start: crate::start_at::Start::default(),
            argv: Vec::new(),
        }
    }

    /// The API requests go to: `--api`, or completions where the schedule has not chosen yet.
    pub(crate) fn chosen_api(&self) -> Api {
        self.api.unwrap_or(Api::Completions)
    }

    /// The endpoint's URI and the model list's: `{url}` + the API's path (or `endpoint`: a path
    /// on the same host, or a whole URL), and `{url}/models`.
    /// Credentials in the URLs are taken out first (they become Basic auth, see
    /// [`Config::request_headers`]).
    pub(crate) fn endpoints(&self) -> Result<(Uri, Uri), Error> {
        let url = userinfo::split("--url", &self.url).map_err(Error::Flag)?;
        let path = match &self.endpoint {
            Some(e) => Some(userinfo::split("--endpoint", e).map_err(Error::Flag)?.url),
            None => None,
        };
        endpoint(&url.url, self.chosen_api(), path.as_deref())
    }

    /// The extra headers of the generation requests and of the model list's, checked: `-H`,
    /// then the URL's credentials as `Authorization: Basic`, sent only to that URL's host, then
    /// `--api-key`. An `-H Authorization` wins over both; credentials in the URL win over
    /// `--api-key` for their host (a key from the environment must not silently replace them).
    pub(crate) fn request_headers(&self) -> Result<(HeaderMap, HeaderMap), Error> {
        let url = userinfo::split("--url", &self.url).map_err(Error::Flag)?;
        let (generate, models) = self.endpoints()?;
        // The generation endpoint's credentials: its own when it is a whole URL that has them,
        // the --url's when it is on the same host, none elsewhere.
        let generate_basic = match &self.endpoint {
            Some(e) => match userinfo::split("--endpoint", e).map_err(Error::Flag)? {
                userinfo::Split { basic: Some(b), .. } => Some(b),
                _ => url
                    .basic
                    .clone()
                    .filter(|_| same_origin(&generate, &models)),
            },
            None => url.basic.clone(),
        };
        let with = |basic| {
            userinfo::request_headers(&self.headers, self.api_key.as_deref(), basic)
                .map_err(Error::Flag)
        };
        Ok((with(generate_basic)?, with(url.basic)?))
    }

    /// The body settings that come from the run (`--temperature`, `--extra-body`,
    /// `--stream-usage`, `ignore_eos`), checked; the model is filled in once it is known.
    /// Public so that the fuzz targets (`fuzz/`) reach the `--extra-body` check.
    pub fn body_options(&self) -> Result<api::BodyOptions, Error> {
        if let Some(t) = self.temperature {
            if !t.is_finite() || t < 0.0 {
                return Err(Error::Flag(format!(
                    "--temperature {t}: expected a finite number, zero or more"
                )));
            }
        }
        let extra = match &self.extra_body {
            None => None,
            Some(text) => {
                let value: serde_json::Value =
                    serde_json::from_str(text).map_err(Error::ExtraBody)?;
                let serde_json::Value::Object(map) = value else {
                    return Err(Error::Flag(
                        "--extra-body: expected a JSON object such as '{\"top_p\":0.9}'".into(),
                    ));
                };
                if let Some(own) = map.keys().find(|k| api::is_own_member(k)) {
                    return Err(Error::Flag(format!(
                        "--extra-body: member \"{own}\" is set by fire itself and cannot be replaced (use its own flag)"
                    )));
                }
                Some(map)
            }
        };
        Ok(api::BodyOptions {
            temperature: self.temperature,
            extra,
            stream_usage: self.stream_usage,
            ignore_eos: self.ignore_eos,
            model: None,
        })
    }

    /// The header of fire's output: how the run was made, with the upstream chain.
    pub(crate) fn header(
        &self,
        upstream: &Header,
        clock: &RunClock,
        run_hash: u64,
        model: &Option<String>,
    ) -> Header {
        let mut params = BTreeMap::new();
        params.insert(
            vocab::URL.key.to_string(),
            serde_json::json!(userinfo::redact(&self.url)),
        );
        params.insert(
            vocab::API.key.to_string(),
            serde_json::json!(self.chosen_api()),
        );
        params.insert(vocab::MODEL.key.to_string(), serde_json::json!(model));
        params.insert(
            "timeout_s".to_string(),
            serde_json::json!(self.timeout.as_secs_f64()),
        );
        params.insert(
            "connect_timeout_s".to_string(),
            serde_json::json!(self.connect_timeout.as_secs_f64()),
        );
        params.insert(
            "first_token_timeout_s".to_string(),
            serde_json::json!(self.first_token_timeout.map(|d| d.as_secs_f64())),
        );
        params.insert(
            "idle_timeout_s".to_string(),
            serde_json::json!(self.idle_timeout.map(|d| d.as_secs_f64())),
        );
        params.insert(
            "stream_usage".to_string(),
            serde_json::json!(self.stream_usage),
        );
        params.insert("keep_going".to_string(), serde_json::json!(self.keep_going));
        params.insert(
            "record_text".to_string(),
            serde_json::json!(self.record_text),
        );
        // Only whether a key was given: its value is never written.
        params.insert(
            "api_key".to_string(),
            serde_json::json!(self.api_key.is_some()),
        );
        if let Some(e) = &self.endpoint {
            params.insert(
                "endpoint".to_string(),
                serde_json::json!(userinfo::redact(e)),
            );
        }
        if !self.headers.is_empty() {
            params.insert(
                "headers".to_string(),
                serde_json::Value::Object(headers::recorded(&self.headers)),
            );
        }
        if let Some(t) = self.temperature {
            params.insert("temperature".to_string(), serde_json::json!(t));
        }
        if let Some(e) = &self.extra_body {
            // Checked by `body_options` before the header is written.
            let parsed = serde_json::from_str::<serde_json::Value>(e).unwrap_or_default();
            params.insert("extra_body".to_string(), parsed);
        }
        params.insert("ignore_eos".to_string(), serde_json::json!(self.ignore_eos));
        if let Some(c) = self.concurrency {
            params.insert(vocab::CONCURRENCY.key.to_string(), serde_json::json!(c));
        }
        let mut header = Header::measured(
            "fire",
            format!("fire-{run_hash:016x}"),
            headers::redact_argv(self.argv.clone())
                .iter()
                .map(|a| userinfo::redact(a))
                .collect(),
            clock,
        );
        header.params = params;
        // A shard's run is that part of the schedule: say so on fire's own header too, so that
        // merged runs tell their parts apart without reading the chain.
        header.shard = upstream.shard;
        if let Some(host) = &self.start.host {
            header.host = Some(host.clone());
        }
        header.upstream = Header::chain(upstream);
        header
    }
}

/// True when two URIs share scheme, host and port: credentials given for one may go to the
/// other.
fn same_origin(a: &Uri, b: &Uri) -> bool {
    a.scheme() == b.scheme() && a.authority() == b.authority()
}

/// The endpoint's URI and the model list's, from the base URL, the API and `--endpoint`.
fn endpoint(base: &str, api: Api, path: Option<&str>) -> Result<(Uri, Uri), Error> {
    let base = base.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(Error::Flag(format!(
            "--url {base}: expected an http:// or https:// URL"
        )));
    }
    let parse = |flag: &'static str, value: String| {
        value.parse::<Uri>().map_err(|source| Error::Url {
            flag,
            value,
            source,
        })
    };
    let models = parse("--url", format!("{base}/models"))?;
    let generate = match path {
        None => parse("--url", format!("{base}{}", api.path()))?,
        Some(p) if p.starts_with("http://") || p.starts_with("https://") => {
            parse("--endpoint", p.to_string())?
        }
        Some(p) if p.starts_with('/') => {
            let scheme = models.scheme_str().unwrap_or("http");
            let host = models.authority().map(|a| a.as_str()).unwrap_or_default();
            parse("--endpoint", format!("{scheme}://{host}{p}"))?
        }
        Some(p) => {
            return Err(Error::Flag(format!(
            "--endpoint {p}: expected a path starting with / (or a whole http:// or https:// URL)"
        )))
        }
    };
    Ok((generate, models))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_cli::{message, Ending, ToolError};

    #[test]
    fn endpoints_and_bad_urls() {
        let (u, m) = endpoint("http://127.0.0.1:8000/v1/", Api::Chat, None).unwrap();
        assert_eq!(u.to_string(), "http://127.0.0.1:8000/v1/chat/completions");
        assert_eq!(m.to_string(), "http://127.0.0.1:8000/v1/models");
        let (u, m) = endpoint("http://h:1/v1", Api::Chat, Some("/gw/generate")).unwrap();
        assert_eq!(u.to_string(), "http://h:1/gw/generate");
        assert_eq!(m.to_string(), "http://h:1/v1/models");
        let (u, _) = endpoint("http://h:1/v1", Api::Chat, Some("http://o:2/x")).unwrap();
        assert_eq!(u.to_string(), "http://o:2/x");
        let bad = endpoint("http://h/v1", Api::Chat, Some("gw/generate")).unwrap_err();
        assert_eq!(bad.ending(), Ending::BadInput);
        let (u, _) = endpoint("https://x:8443/v1", Api::Completions, None).unwrap();
        assert_eq!(u.to_string(), "https://x:8443/v1/completions");
        let (u, _) = endpoint("https://x:8443/v1", Api::Chat, Some("/gw")).unwrap();
        assert_eq!(u.to_string(), "https://x:8443/gw");
        let bad = endpoint("ftp://x/v1", Api::Chat, None).unwrap_err();
        assert_eq!(bad.ending(), Ending::BadInput);
        let bad = endpoint("http://exa mple/v1", Api::Chat, None).unwrap_err();
        assert!(message(&bad).starts_with("--url http://exa mple/v1/models: "));
        assert_eq!(bad.ending(), Ending::BadInput);
    }

    #[test]
    fn body_settings_are_checked() {
        let config = Config {
            extra_body: Some(r#"{"top_p":0.5}"#.into()),
            temperature: Some(0.0),
            ..Config::new("http://x/v1")
        };
        let opts = config.body_options().unwrap();
        assert_eq!(opts.temperature, Some(0.0));
        assert_eq!(opts.extra.unwrap()["top_p"], 0.5);
        let extra = |text: &str| Config {
            extra_body: Some(text.into()),
            ..Config::new("http://x/v1")
        };
        let temperature = |t: f64| Config {
            temperature: Some(t),
            ..Config::new("http://x/v1")
        };
        for (flag, bad) in [
            ("--extra-body", extra("[1]")),
            ("--extra-body", extra("{oops")),
            ("--extra-body", extra(r#"{"stream":false}"#)),
            ("--temperature", temperature(-1.0)),
            ("--temperature", temperature(f64::NAN)),
        ] {
            let e = bad.body_options().err().unwrap();
            assert_eq!(e.ending(), Ending::BadInput);
            let e = message(&e);
            assert!(e.starts_with(flag), "{e}");
        }
    }
}
