//! `--server-metrics`: the server's Prometheus `/metrics` read once before the first request and
//! once after the last (or when the run is stopped), each kept as a `server_metrics` record so
//! that `reduce` can set the server's own counts and latencies beside the client's.
//!
//! A scrape is advice: one that fails (no route, no answer in [`SCRAPE_TIMEOUT`], a body past
//! [`MAX_METRICS_BYTES`]) is one warning on stderr and no record, never a failed run. Only the
//! engines' samples are kept ([`tokenpipe_format::ENGINE_PREFIXES`]: vLLM's `vllm:` and llama.cpp's
//! `llamacpp:`), and from a `--scrape` endpoint also the exporters'
//! ([`tokenpipe_format::EXPORTER_PREFIXES`]: DCGM's, the node exporter's load and memory), at
//! most [`MAX_SCRAPE_SAMPLES`] of them. A stop (Ctrl-C) cuts the
//! scrape before the run short, and leaves the one after it [`STOPPED_SCRAPE_TIMEOUT`].
//!
//! `--server-metrics-every` scrapes every endpoint during the run too ([`every`]), leaving out
//! the histograms' `_bucket` series, which reduce reads from the scrapes around the run only.
//!
//! The run's API key and `-H` headers go only to the host the requests go to: metrics read
//! elsewhere (another port, a sidecar) get none, so a key never leaks to a host it was not
//! given for. Credentials in the metrics URL (`http://user:pass@host/metrics`) go to its host
//! alone, as Basic auth. Such a host is read over HTTP/1.1 even when the run speaks HTTP/2, as vLLM's and
//! most exporters' `/metrics` are.

use crate::error::Error;
use crate::failure::error_chain;
use crate::http::{HttpClient, Transport};
use crate::stop::Stop;
use http_body_util::BodyExt;
use hyper::header::HeaderMap;
use hyper::Uri;
use std::collections::BTreeMap;
use std::time::Duration;
use tokenpipe_format::{
    parse_exposition, Record, ScrapePhase, ServerMetrics, ENGINE_PREFIXES, EXPORTER_PREFIXES,
    MAX_SCRAPE_SAMPLES,
};

pub mod every;

/// The longest a scrape may take.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest the scrape after a stopped run may take: the user asked to end.
pub const STOPPED_SCRAPE_TIMEOUT: Duration = Duration::from_secs(1);
/// The most of a metrics page read (a real vLLM's is some tens of KiB).
pub const MAX_METRICS_BYTES: usize = 16 << 20;

/// The metrics URL: `given` if not empty, else the base URL without its `/v1`, then `/metrics`
/// (where vLLM serves it).
/// `flag` names the endpoint in errors.
fn endpoint_uri(base_url: &str, given: &str, flag: &'static str) -> Result<Uri, Error> {
    let text = if given.is_empty() {
        let base = base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}/metrics")
    } else {
        given.to_string()
    };
    if !(text.starts_with("http://") || text.starts_with("https://")) {
        return Err(Error::Flag(format!(
            "{flag} {text}: expected an http:// or https:// URL"
        )));
    }
    text.parse::<Uri>().map_err(|source| Error::Url {
        flag,
        value: text,
        source,
    })
}

/// Where the server's metrics are read, with what headers and through which client.
pub struct Scraper {
    uri: Uri,
    /// The run's headers where the metrics share the requests' scheme, host and port; none
    /// elsewhere.
    headers: HeaderMap,
    /// An HTTP/1.1 client of its own, for another host when the run speaks HTTP/2.
    own_client: Option<HttpClient>,
    /// The flag that named the endpoint, for its warnings.
    flag: &'static str,
    /// Whether the exporters' samples are kept too (`--scrape`).
    exporters: bool,
    /// Whether a scrape during the run has failed already: one warning is enough.
    warned_during: std::sync::atomic::AtomicBool,
}

impl Scraper {
    /// The scraper for `--server-metrics[=given]` on a run against `base_url` with
    /// `run_headers`. Builds a client, so it must be called inside the runtime.
    pub fn new(
        base_url: &str,
        given: &str,
        run_headers: &HeaderMap,
        transport: &Transport,
    ) -> Result<Self, Error> {
        Self::build(base_url, given, run_headers, transport, "--server-metrics")
    }

    /// The scraper of a `--scrape URL` endpoint: as [`Scraper::new`], keeping the exporters'
    /// samples too.
    pub fn other(
        base_url: &str,
        url: &str,
        run_headers: &HeaderMap,
        transport: &Transport,
    ) -> Result<Self, Error> {
        if url.is_empty() {
            return Err(Error::Flag("--scrape needs a URL".into()));
        }
        let mut scraper = Self::build(base_url, url, run_headers, transport, "--scrape")?;
        scraper.exporters = true;
        Ok(scraper)
    }

    fn build(
        base_url: &str,
        given: &str,
        run_headers: &HeaderMap,
        transport: &Transport,
        flag: &'static str,
    ) -> Result<Self, Error> {
        // Credentials in either URL are taken out of it: the metrics URL's own become Basic
        // auth to its host, and the --url's go with the run's headers to the same host only.
        let base_url = crate::userinfo::split("--url", base_url)
            .map_err(Error::Flag)?
            .url;
        let own = crate::userinfo::split(flag, given).map_err(Error::Flag)?;
        let uri = endpoint_uri(&base_url, &own.url, flag)?;
        let same_host = base_url
            .parse::<Uri>()
            .is_ok_and(|base| base.scheme() == uri.scheme() && base.authority() == uri.authority());
        let mut headers = if same_host {
            run_headers.clone()
        } else {
            HeaderMap::new()
        };
        if let Some(basic) = own.basic {
            headers.insert(hyper::header::AUTHORIZATION, basic);
        }
        let own_client = if !same_host && transport.http2 {
            let mut options = transport.options(uri.scheme_str() == Some("https"), Some(1));
            options.http2 = false;
            options.connect_timeout = Some(SCRAPE_TIMEOUT);
            Some(HttpClient::new(&options)?)
        } else {
            None
        };
        Ok(Self {
            uri,
            headers,
            own_client,
            flag,
            exporters: false,
            warned_during: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Scrapes the metrics and makes the record for `phase`, stamped by `now_ns` once the
    /// answer was read; `None` (after one warning on stderr) if the scrape failed, and `None`
    /// at once if `stop` comes first before the run.
    pub async fn scrape(
        &self,
        run_client: &HttpClient,
        phase: ScrapePhase,
        now_ns: impl FnOnce() -> u64,
        stop: &Stop,
    ) -> Option<Record> {
        let client = self.own_client.as_ref().unwrap_or(run_client);
        let limit = if stop.is_stopped() {
            STOPPED_SCRAPE_TIMEOUT
        } else {
            SCRAPE_TIMEOUT
        };
        let keep = Keep {
            exporters: self.exporters,
            buckets: phase != ScrapePhase::During,
        };
        let fetched = tokio::time::timeout(limit, fetch(client, &self.uri, &self.headers, keep));
        let outcome = match phase {
            ScrapePhase::Before => tokio::select! {
                outcome = fetched => outcome,
                () = stop.stopped() => return None,
            },
            ScrapePhase::After | ScrapePhase::During => fetched.await,
        };
        let outcome =
            outcome.unwrap_or_else(|_| Err(format!("no answer within {} s", limit.as_secs_f64())));
        let which = match phase {
            ScrapePhase::Before => "before",
            ScrapePhase::After => "after",
            ScrapePhase::During => "during",
        };
        match outcome {
            Ok(samples) => Some(Record::ServerMetrics(ServerMetrics {
                at_ns: now_ns(),
                phase,
                url: self.uri.to_string(),
                samples,
            })),
            Err(problem) => {
                let (uri, flag) = (&self.uri, self.flag);
                let again = phase == ScrapePhase::During
                    && self
                        .warned_during
                        .swap(true, std::sync::atomic::Ordering::Relaxed);
                if !again {
                    eprintln!(
                        "fire: warning: {flag}: GET {uri} {which} the run: {problem}; no server_metrics record"
                    );
                }
                None
            }
        }
    }
}

/// Which samples a scrape keeps besides the engines'.
#[derive(Debug, Clone, Copy)]
struct Keep {
    /// The exporters' too (`--scrape`).
    exporters: bool,
    /// Histogram buckets too (not during the run).
    buckets: bool,
}

async fn fetch(
    client: &HttpClient,
    uri: &Uri,
    headers: &HeaderMap,
    keep: Keep,
) -> Result<BTreeMap<String, f64>, String> {
    let mut req = hyper::Request::get(uri.clone())
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .map_err(|e| e.to_string())?;
    req.headers_mut().clone_from(headers);
    let resp = client.request(req).await.map_err(|e| error_chain(&e))?;
    let status = resp.status();
    if !status.is_success() {
        return Err(format!("HTTP {status}"));
    }
    let mut body = resp.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| error_chain(&e))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_METRICS_BYTES {
                return Err(format!(
                    "the page is larger than {} MiB, the most fire reads",
                    MAX_METRICS_BYTES >> 20
                ));
            }
            bytes.extend_from_slice(&data);
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut samples = if keep.exporters {
        kept_samples(&text)?
    } else {
        engine_samples(&text)?
    };
    if !keep.buckets {
        samples.retain(|series, _| !tokenpipe_format::series_name(series).ends_with("_bucket"));
    }
    Ok(samples)
}

/// The samples of a `--scrape` endpoint: the engines' and the exporters', at most
/// [`MAX_SCRAPE_SAMPLES`]; an error when it has none.
fn kept_samples(text: &str) -> Result<BTreeMap<String, f64>, String> {
    let mut samples = BTreeMap::new();
    for prefix in ENGINE_PREFIXES.iter().chain(&EXPORTER_PREFIXES) {
        for (series, value) in parse_exposition(text, prefix) {
            if samples.len() >= MAX_SCRAPE_SAMPLES {
                break;
            }
            samples.insert(series, value);
        }
    }
    if samples.is_empty() {
        let all: Vec<&str> = ENGINE_PREFIXES
            .iter()
            .chain(&EXPORTER_PREFIXES)
            .copied()
            .collect();
        return Err(format!("no {} metrics on the page", all.join(", ")));
    }
    Ok(samples)
}

/// The samples of every engine the page has metrics of; an error when it has none.
fn engine_samples(text: &str) -> Result<BTreeMap<String, f64>, String> {
    let mut samples = BTreeMap::new();
    for prefix in ENGINE_PREFIXES {
        samples.extend(parse_exposition(text, prefix));
    }
    if samples.is_empty() {
        return Err(format!(
            "no {} metrics on the page",
            ENGINE_PREFIXES.join(" or ")
        ));
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_cli::ToolError;

    #[test]
    fn the_metrics_url_is_the_base_without_v1() {
        let uri = |base: &str, given: &str| {
            endpoint_uri(base, given, "--server-metrics")
                .unwrap()
                .to_string()
        };
        assert_eq!(uri("http://h:8000/v1", ""), "http://h:8000/metrics");
        assert_eq!(uri("http://h:8000/v1/", ""), "http://h:8000/metrics");
        assert_eq!(uri("https://h/api", ""), "https://h/api/metrics");
        assert_eq!(
            uri("http://h:8000/v1", "http://h:9000/metrics"),
            "http://h:9000/metrics"
        );
        let bad = endpoint_uri("http://h/v1", "h:9000/metrics", "--server-metrics").unwrap_err();
        assert_eq!(bad.ending(), tokenpipe_cli::Ending::BadInput);
        let bad = endpoint_uri("http://h/v1", "http://exa mple/metrics", "--scrape").unwrap_err();
        assert!(tokenpipe_cli::message(&bad).starts_with("--scrape http://exa mple/metrics: "));
        assert_eq!(bad.ending(), tokenpipe_cli::Ending::BadInput);
    }

    #[test]
    fn vllm_and_llama_cpp_samples_are_kept_and_others_are_not() {
        // As `llama-server --metrics` writes them: counters and gauges, no labels.
        let llama = "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed\n\
            # TYPE llamacpp:prompt_tokens_total counter\n\
            llamacpp:prompt_tokens_total 4800\n\
            llamacpp:tokens_predicted_seconds_total 1.25\n\
            process_cpu_seconds_total 3\n";
        let samples = engine_samples(llama).unwrap();
        assert_eq!(samples.len(), 2);
        assert_eq!(samples["llamacpp:prompt_tokens_total"], 4800.0);
        assert_eq!(samples["llamacpp:tokens_predicted_seconds_total"], 1.25);
        let vllm = engine_samples("vllm:num_requests_running{engine=\"0\"} 2\n").unwrap();
        assert_eq!(vllm["vllm:num_requests_running{engine=\"0\"}"], 2.0);
        let none = engine_samples("process_cpu_seconds_total 3\n").unwrap_err();
        assert_eq!(none, "no vllm: or llamacpp: metrics on the page");
    }

    #[test]
    fn a_recorded_dcgm_exporter_page_keeps_its_gpu_series() {
        let page = include_str!("../../../tests/fixtures/fire/dcgm-exporter.prom");
        let samples = kept_samples(page).unwrap();
        let power = tokenpipe_format::sum_series(&samples, "DCGM_FI_DEV_POWER_USAGE", |_| true);
        assert_eq!(power, Some(71.304 + 69.852));
        let energy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION";
        let gpu1 = samples
            .iter()
            .find(|(k, _)| k.starts_with(energy) && k.contains("gpu=\"1\""))
            .unwrap();
        assert_eq!(*gpu1.1, 51_733_998_455.0);
        assert!(
            gpu1.0.contains("modelName=\"NVIDIA H100 80GB HBM3\""),
            "{}",
            gpu1.0
        );
        assert!(!samples.keys().any(|k| k.starts_with("go_")), "{samples:?}");
        assert!(kept_samples("go_goroutines 9\n").is_err());
        let many: String = (0..MAX_SCRAPE_SAMPLES + 10)
            .map(|i| format!("node_load1{{i=\"{i}\"}} 1\n"))
            .collect();
        assert_eq!(kept_samples(&many).unwrap().len(), MAX_SCRAPE_SAMPLES);
    }
}
