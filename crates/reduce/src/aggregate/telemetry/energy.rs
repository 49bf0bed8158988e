//! Energy per output token and mean power over the measured window (docs/metrics.md,
//! "Energy"), per GPU and for all of them together, from a DCGM exporter's series.
//!
//! Per GPU, the energy counter `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (mJ) is read at the last
//! scrape at or before the window's start (else the first) and the first at or after its end
//! (else the last): its change over the time between the two scrapes is the mean power. A GPU
//! without the counter (or whose counter went down: a reset) is integrated instead: the
//! trapezoids of its `DCGM_FI_DEV_POWER_USAGE` samples (W) over the same scrapes, over their
//! time, which needs `fire --server-metrics-every` for more than the two ends. Joules per
//! output token are the mean power over the window's output throughput.

use super::Kept;
use crate::aggregate::server_metrics::label;
use std::collections::BTreeMap;
use tokenpipe_format::{series_name, Summary};

const ENERGY: &str = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION";
const POWER: &str = "DCGM_FI_DEV_POWER_USAGE";

/// One GPU's readings over time: (at_ns, value).
type Readings = Vec<(u64, f64)>;

/// What a scrape keeps for the energy figures: per GPU (its `gpu` label), the energy counter
/// (mJ) and the power (W).
#[derive(Debug, Default, Clone)]
pub(super) struct GpuReadings {
    pub energy_mj: BTreeMap<String, f64>,
    pub power_w: BTreeMap<String, f64>,
}

impl GpuReadings {
    /// The DCGM series of one scrape.
    pub fn of(samples: &BTreeMap<String, f64>) -> Self {
        let mut kept = Self::default();
        for (series, &value) in samples {
            let map = match series_name(series) {
                ENERGY => &mut kept.energy_mj,
                POWER => &mut kept.power_w,
                _ => continue,
            };
            let gpu = label(series, "gpu").unwrap_or("");
            *map.entry(gpu.to_string()).or_insert(0.0) += value;
        }
        kept
    }

    pub fn is_empty(&self) -> bool {
        self.energy_mj.is_empty() && self.power_w.is_empty()
    }
}

/// The indices of the readings that bound `[start_ns, end_ns]`: the last at or before the
/// start (else the first) and the first at or after the end (else the last).
fn bounds(readings: &Readings, start_ns: u64, end_ns: u64) -> Option<(usize, usize)> {
    let first = readings
        .iter()
        .rposition(|(t, _)| *t <= start_ns)
        .unwrap_or(0);
    let last = readings
        .iter()
        .position(|(t, _)| *t >= end_ns)
        .unwrap_or(readings.len().checked_sub(1)?);
    (readings[last].0 > readings[first].0).then_some((first, last))
}

/// Mean watts from an energy counter's readings.
fn from_counter(readings: &Readings, start_ns: u64, end_ns: u64) -> Option<f64> {
    let (a, b) = bounds(readings, start_ns, end_ns)?;
    let ((ta, ea), (tb, eb)) = (readings[a], readings[b]);
    (eb >= ea).then(|| (eb - ea) / 1e3 / ((tb - ta) as f64 / 1e9))
}

/// Mean watts from the trapezoids of power readings.
fn from_power(readings: &Readings, start_ns: u64, end_ns: u64) -> Option<f64> {
    let (a, b) = bounds(readings, start_ns, end_ns)?;
    let joules: f64 = readings[a..=b]
        .windows(2)
        .map(|w| (w[0].1 + w[1].1) / 2.0 * (w[1].0 - w[0].0) as f64 / 1e9)
        .sum();
    Some(joules / ((readings[b].0 - readings[a].0) as f64 / 1e9))
}

/// Fills `power_w_mean`, `energy_j_per_output_token` and their per-GPU maps from the
/// scrapes' GPU readings, over the window `[start_ns, end_ns]`.
pub(super) fn fill(scrapes: &[Kept], start_ns: u64, end_ns: u64, s: &mut Summary) {
    // Per endpoint, per GPU: its energy and power readings in time order.
    let mut gpus: BTreeMap<(&str, String), (Readings, Readings)> = BTreeMap::new();
    let mut sorted: Vec<&Kept> = scrapes.iter().filter(|k| !k.gpus.is_empty()).collect();
    sorted.sort_by_key(|k| k.at_ns);
    for kept in &sorted {
        for (gpu, &mj) in &kept.gpus.energy_mj {
            let entry = gpus.entry((kept.url.as_str(), gpu.clone())).or_default();
            entry.0.push((kept.at_ns, mj));
        }
        for (gpu, &w) in &kept.gpus.power_w {
            let entry = gpus.entry((kept.url.as_str(), gpu.clone())).or_default();
            entry.1.push((kept.at_ns, w));
        }
    }
    let endpoints: std::collections::BTreeSet<&str> = gpus.keys().map(|(u, _)| *u).collect();
    let mut total = 0.0;
    let mut per_gpu = BTreeMap::new();
    for ((url, gpu), (energy, power)) in &gpus {
        let Some(watts) =
            from_counter(energy, start_ns, end_ns).or_else(|| from_power(power, start_ns, end_ns))
        else {
            continue;
        };
        let key = if endpoints.len() > 1 {
            format!("{}/{gpu}", authority(url))
        } else {
            gpu.clone()
        };
        total += watts;
        per_gpu.insert(key, watts);
    }
    if per_gpu.is_empty() {
        return;
    }
    s.power_w_mean = Some(total);
    let tps = s.output_throughput_tokens_per_s;
    if tps > 0.0 {
        s.energy_j_per_output_token = Some(total / tps);
        s.energy_j_per_output_token_per_gpu =
            per_gpu.iter().map(|(k, w)| (k.clone(), w / tps)).collect();
    }
    s.power_w_mean_per_gpu = per_gpu;
}

/// `host:port` of a URL.
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}
