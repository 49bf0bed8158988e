//! One batch's sums and extremes over its successful requests (llama-benchy's `valid_results`
//! in `_process_batch`), and the batch figures read from them: prefill and generation
//! throughput and the peak throughput over every token stamp of the batch.

use super::stamps::{peak_tps, Stamps};

const NS_PER_S: f64 = 1e9;

/// What one batch has gathered so far.
#[derive(Debug, Clone, Default)]
pub struct BatchSums {
    /// Every request of the batch, failed ones included: its size.
    pub members: u64,
    /// Its successful requests.
    pub valid: u64,
    prompt_tokens: u64,
    /// A request's prompt length was unknown (no expected length and no usage): no pp figure.
    prompt_tokens_unknown: bool,
    /// Σ of the requests' decode tokens (stamps after their first).
    decode_tokens: u64,
    min_start_ns: Option<u64>,
    min_first_token_ns: Option<u64>,
    max_first_token_ns: Option<u64>,
    /// The latest last stamp (a request without stamps gives its end).
    max_last_ns: Option<f64>,
    /// Every token stamp of the batch, until [`BatchSums::close`] reads its peak.
    stamps: Vec<f64>,
    /// The peak throughput, once closed.
    peak: Option<f64>,
    closed: bool,
}

impl BatchSums {
    /// Adds one successful request started at `start`, with its prompt length (when known)
    /// and its stamps. Returns `None` when the prompt total would pass 2^64.
    pub fn add(&mut self, start: u64, r: &RequestOfBatch, stamps: &Stamps) -> Option<()> {
        self.valid += 1;
        match r.prompt_tokens {
            Some(p) => self.prompt_tokens = self.prompt_tokens.checked_add(p)?,
            None => self.prompt_tokens_unknown = true,
        }
        self.decode_tokens = self.decode_tokens.saturating_add(stamps.decode_tokens());
        keep(&mut self.min_start_ns, start, u64::min);
        if let Some(first) = r.first_token_ns {
            keep(&mut self.min_first_token_ns, first, u64::min);
            keep(&mut self.max_first_token_ns, first, u64::max);
        }
        let last = stamps
            .ends()
            .map(|(_, last)| last)
            .or(r.done_ns.map(|d| d as f64));
        if let Some(last) = last {
            keep(&mut self.max_last_ns, last, f64::max);
        }
        if !self.closed {
            self.stamps.extend_from_slice(&stamps.at_ns);
        }
        Some(())
    }

    /// Reads the peak from the stamps gathered and lets them go: the batch is complete.
    pub fn close(&mut self) {
        if !self.closed {
            self.peak = peak_tps(&mut self.stamps);
            self.stamps = Vec::new();
            self.closed = true;
        }
    }

    /// `Σ prompt_tokens / (max first_token − min start)`, in tokens per second.
    pub fn pp_tps(&self) -> Option<f64> {
        let span = self.max_first_token_ns?.checked_sub(self.min_start_ns?)?;
        (span > 0 && !self.prompt_tokens_unknown).then_some(())?;
        Some(self.prompt_tokens as f64 * NS_PER_S / span as f64)
    }

    /// `Σ decode_tokens / (max last stamp − min first_token)`, when both are above 0.
    pub fn tg_tps(&self) -> Option<f64> {
        let span = self.max_last_ns? - self.min_first_token_ns? as f64;
        (span > 0.0 && self.decode_tokens > 0).then(|| self.decode_tokens as f64 * NS_PER_S / span)
    }

    /// The peak throughput over every stamp of the batch; `None` before [`BatchSums::close`]
    /// or without stamps.
    pub fn peak_tps(&self) -> Option<f64> {
        self.peak
    }
}

/// What a batch needs of one successful request beyond its stamps.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestOfBatch {
    /// llama-benchy's prompt length of the request, when known.
    pub prompt_tokens: Option<u64>,
    /// Its first content.
    pub first_token_ns: Option<u64>,
    /// Its end.
    pub done_ns: Option<u64>,
}

fn keep<T: Copy>(slot: &mut Option<T>, x: T, pick: fn(T, T) -> T) {
    *slot = Some(slot.map_or(x, |v| pick(v, x)));
}
