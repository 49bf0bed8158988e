//! The histogram a summary carries for each metric ([`MetricState::hdr`]), and how it is read:
//! the encoding (HdrHistogram's V2 deflated form in base64), its precision, and the value a
//! percentile that falls in a bucket reports. reduce writes these histograms and merges them;
//! table reads them back for distribution charts. Both go through this module, so the two can
//! never read the same bytes differently.

use crate::MetricState;
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
pub use hdrhistogram::Histogram;

/// Significant decimal digits the histograms keep: a percentile is within 0.1% of the exact order
/// statistic.
pub const SIGFIG: u8 = 3;

/// Why a carried histogram cannot be read back.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HistogramError {
    /// `hdr` is not base64.
    #[error("histogram is not base64: {0}")]
    NotBase64(String),
    /// The bytes are not an HdrHistogram encoding.
    #[error("histogram does not decode: {0}")]
    Undecodable(String),
    /// The histogram and the state's `count` disagree.
    #[error("histogram holds {held} samples but count says {count}")]
    CountMismatch {
        /// Samples in the histogram.
        held: u64,
        /// The state's `count`.
        count: u64,
    },
}

/// An empty auto-resizing histogram of [`SIGFIG`] significant figures.
pub fn empty() -> Histogram<u64> {
    Histogram::new(SIGFIG).unwrap_or_else(|_| unreachable!("sigfig 3 is valid"))
}

/// `hist` in the form [`MetricState::hdr`] carries; empty when it cannot be encoded (only
/// histograms HdrHistogram cannot serialise), in which case a merge falls back to the moments.
pub fn encode(hist: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(hist, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(&bytes),
        Err(_) => String::new(),
    }
}

/// Reads back a histogram written by [`encode`], auto-resizing so that more can be added.
pub fn decode(hdr: &str) -> Result<Histogram<u64>, HistogramError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(hdr.as_bytes())
        .map_err(|e| HistogramError::NotBase64(e.to_string()))?;
    let mut hist: Histogram<u64> = Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| HistogramError::Undecodable(format!("{e:?}")))?;
    hist.auto(true);
    Ok(hist)
}

/// The value a percentile that falls in the bucket holding `value` reports: the sample it
/// stands for lies in the bucket's range and within the exact minimum and maximum (`min`,
/// `max`), and the middle of that interval is reported, so the error is at most half a bucket
/// (0.05 %) either way and a metric whose samples are all equal reports that value exactly.
pub fn reported_value(hist: &Histogram<u64>, value: u64, min: f64, max: f64) -> f64 {
    let lo = (hist.lowest_equivalent(value) as f64).max(min);
    let hi = (hist.highest_equivalent(value) as f64).min(max);
    if lo >= hi {
        return lo.min(max);
    }
    lo + (hi - lo) / 2.0
}

/// Every recorded bucket of `hist` in ascending order, as the value a percentile falling in it
/// reports ([`reported_value`]) and the number of samples in it.
pub fn buckets(hist: &Histogram<u64>, min: f64, max: f64) -> Vec<(f64, u64)> {
    hist.iter_recorded()
        .map(|v| {
            (
                reported_value(hist, v.value_iterated_to(), min, max),
                v.count_at_value(),
            )
        })
        .collect()
}

impl MetricState {
    /// The carried histogram, checked against the state's sample count.
    pub fn histogram(&self) -> Result<Histogram<u64>, HistogramError> {
        let hist = decode(&self.hdr)?;
        if hist.len() != self.count {
            return Err(HistogramError::CountMismatch {
                held: hist.len(),
                count: self.count,
            });
        }
        Ok(hist)
    }

    /// The carried histogram's buckets in ascending order ([`buckets`]): what a distribution
    /// chart draws and a bootstrap of the percentiles resamples.
    pub fn buckets(&self) -> Result<Vec<(f64, u64)>, HistogramError> {
        Ok(buckets(&self.histogram()?, self.min_ns, self.max_ns))
    }

    /// The state of whole-number samples, exactly as an accumulator that saw them one by one
    /// would save it: for tools and tests that hold samples rather than an accumulator.
    pub fn of_samples(samples: &[u64]) -> MetricState {
        let mut hist = empty();
        let (mut sum, mut min, mut max) = (0.0, f64::INFINITY, f64::NEG_INFINITY);
        for &s in samples {
            if hist.record(s).is_err() {
                // Only values near u64::MAX cannot be tracked; clamp rather than fail.
                hist.saturating_record(s);
            }
            sum += s as f64;
            min = min.min(s as f64);
            max = max.max(s as f64);
        }
        let count = samples.len() as u64;
        let mean = if count == 0 { 0.0 } else { sum / count as f64 };
        let m2 = samples.iter().map(|&s| (s as f64 - mean).powi(2)).sum();
        MetricState {
            hdr: encode(&hist),
            count,
            sum_ns: sum,
            m2_ns2: m2,
            min_ns: if count == 0 { 0.0 } else { min },
            max_ns: if count == 0 { 0.0 } else { max },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_reads_back_its_buckets() {
        let state = MetricState::of_samples(&[1_000_000, 2_000_000, 2_000_000, 10_000_000]);
        let buckets = state.buckets().unwrap();
        let counts: Vec<u64> = buckets.iter().map(|b| b.1).collect();
        assert_eq!(counts, [1, 2, 1]);
        for ((value, _), sample) in buckets.iter().zip([1e6, 2e6, 10e6]) {
            assert!(
                (value - sample).abs() <= sample * 5e-4,
                "{value} for {sample}"
            );
            assert!(
                (1e6..=10e6).contains(value),
                "{value} outside the samples' range"
            );
        }
        let equal = MetricState::of_samples(&[7_000_000; 3]).buckets().unwrap();
        assert_eq!(
            equal,
            [(7e6, 3)],
            "equal samples report their value exactly"
        );
    }

    #[test]
    fn a_damaged_histogram_says_what_is_wrong() {
        let mut state = MetricState::of_samples(&[5, 6]);
        state.count = 3;
        assert_eq!(
            state.histogram().unwrap_err().to_string(),
            "histogram holds 2 samples but count says 3"
        );
        state.hdr = "not base64!".into();
        assert!(matches!(
            state.histogram(),
            Err(HistogramError::NotBase64(_))
        ));
        state.hdr = "AAAA".into();
        assert!(matches!(
            state.histogram(),
            Err(HistogramError::Undecodable(_))
        ));
    }
}
