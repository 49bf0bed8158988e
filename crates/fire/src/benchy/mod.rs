//! What fire does before the first batch of a batch schedule, as llama-benchy 0.4 does before
//! its first run (`runner.py` `run_suite`): the two warm-up requests ([`probe`]), the adapt
//! step that shortens every prompt by the warm-up's token delta ([`adapt`]), and the measured
//! network latency that llama-benchy's figures subtract. All of it happens while no clock
//! runs, before the header is written, and what it found goes into fire's header params
//! (`warmup_prompt_tokens`, `adapt_tokens`, `net_latency_ms`, `latency_mode`).

pub mod adapt;
pub mod probe;

use crate::api::Api;
use crate::error::Error;
use adapt::{Adapt, Deltas};
use hyper::Uri;
use probe::Prober;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use tokenpipe_format::{vocab, Header};

/// How the network latency is measured (`--latency-mode`, llama-benchy's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyMode {
    /// Three `GET {url}/models`, timed to the whole answer (llama-benchy's default).
    Api,
    /// Three streamed one-token requests, timed to the first piece of the answer.
    Generation,
    /// Not measured: 0 ms.
    None,
}

/// What the prelude is to do: the flags and what the schedule's header names.
pub struct Settings {
    /// Send the warm-up requests (unless `--no-warmup`).
    pub warmup: bool,
    /// Adapt the prompts (unless `--no-adapt-prompt`); needs a tokenizer.
    pub adapt_prompt: bool,
    /// How the latency is measured.
    pub latency_mode: LatencyMode,
    /// The tokenizer arrivals made the prompts with, from its header.
    pub tokenizer: Option<PathBuf>,
    /// The schedule's depth (0 when it names none).
    pub depth: u64,
    /// The API the run's requests use, which the warm-up and `generation` probes use too.
    pub api: Api,
    /// Where the run's requests go (`{url}` + the API's path, or `--endpoint`).
    pub generate: Uri,
    /// `{url}/models`.
    pub models: Uri,
}

impl Settings {
    /// The tokenizer and depth the schedule's header (`upstream`) names.
    pub fn from_header(upstream: &Header) -> (Option<PathBuf>, u64) {
        let tokenizer = upstream
            .params
            .get("tokenizer")
            .and_then(Value::as_str)
            .map(PathBuf::from);
        let depth = upstream
            .params
            .get(vocab::DEPTH.key)
            .and_then(Value::as_u64)
            .unwrap_or(0);
        (tokenizer, depth)
    }
}

/// What the prelude found.
pub struct Prelude {
    /// Each warm-up answer's `usage.prompt_tokens`, when they were sent.
    pub warmup_prompt_tokens: Option<[Option<u64>; 2]>,
    /// The measured latency in ms (0 when not measured, as llama-benchy counts it).
    pub net_latency_ms: f64,
    /// How it was measured.
    pub latency_mode: LatencyMode,
    /// The cut every request gets, when prompts are adapted.
    pub adapt: Option<Adapt>,
}

impl Prelude {
    /// The header params it adds to fire's header.
    pub fn params(&self) -> BTreeMap<String, Value> {
        let mut params = BTreeMap::new();
        params.insert(vocab::NET_LATENCY_MS.into(), json!(self.net_latency_ms));
        params.insert("latency_mode".into(), json!(self.latency_mode));
        if let Some(counts) = self.warmup_prompt_tokens {
            params.insert("warmup_prompt_tokens".into(), json!(counts));
        }
        if let Some(adapt) = &self.adapt {
            params.insert(vocab::ADAPT_TOKENS.into(), json!(adapt.tokens()));
        }
        params
    }
}

/// Runs the prelude: loads the tokenizer (when prompts are adapted), sends the warm-up
/// requests (when asked, or when the adapt step needs them, as llama-benchy does), then
/// measures the latency. `Err` is a tokenizer that cannot be loaded or a warm-up that failed.
pub async fn run(prober: &Prober<'_>, settings: &Settings) -> Result<Prelude, Error> {
    let tokenizer = match (&settings.tokenizer, settings.adapt_prompt) {
        (Some(path), true) => Some(adapt::load(path).map_err(|why| Error::Tokenizer {
            path: path.clone(),
            why,
        })?),
        _ => None,
    };
    let warmup_prompt_tokens = if settings.warmup || tokenizer.is_some() {
        let counts = prober
            .warmup(&settings.generate, settings.api)
            .await
            .map_err(|why| Error::Warmup {
                uri: settings.generate.to_string(),
                why,
            })?;
        Some(counts)
    } else {
        None
    };
    let adapt = match (tokenizer, warmup_prompt_tokens) {
        (Some(t), Some(counts)) => {
            let deltas = Deltas::of(counts, &t);
            let delta = if settings.depth == 0 {
                deltas.user
            } else {
                deltas.context
            };
            if delta < 0 {
                eprintln!(
                    "fire: warning: the server counted {} tokens fewer than the schedule's \
                     tokenizer for the warm-up text; llama-benchy would lengthen every prompt by \
                     that much, fire sends them as they are (is this the server's tokenizer?)",
                    -delta
                );
            }
            Some(Adapt::new(t, deltas, settings.depth))
        }
        _ => None,
    };
    let latency = match settings.latency_mode {
        LatencyMode::Api => prober.latency_api(&settings.models).await,
        LatencyMode::Generation => {
            prober
                .latency_generation(&settings.generate, settings.api)
                .await
        }
        LatencyMode::None => None,
    };
    Ok(Prelude {
        warmup_prompt_tokens,
        net_latency_ms: latency.unwrap_or(0.0),
        latency_mode: settings.latency_mode,
        adapt,
    })
}
