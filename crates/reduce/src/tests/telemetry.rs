//! The server seen while the run went on, with timings set exactly: gauges over the measured
//! window, power and energy per output token from a DCGM exporter's counter or from the
//! integral of its power gauge, tokens per streamed event, and the gauges of `--every`'s
//! interval records.

use super::*;
use tokenpipe_format::Record;

const DCGM: &str = "http://gpu:9400/metrics";
const ENGINE: &str = "http://h:8000/metrics";

fn scrape(at_ms: u64, phase: &str, url: &str, samples: &[(&str, f64)]) -> String {
    let samples: serde_json::Map<String, serde_json::Value> = samples
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
        .collect();
    serde_json::json!({"type": "server_metrics", "at_ns": at_ms * MS, "phase": phase,
        "url": url, "samples": samples})
    .to_string()
}

/// DCGM's two series for GPUs 0 and 1: energy counter (mJ) and power (W).
fn gpus(energy: Option<[f64; 2]>, power: [f64; 2]) -> Vec<(&'static str, f64)> {
    let mut out = vec![
        (
            "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"}",
            power[0],
        ),
        (
            "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-b\"}",
            power[1],
        ),
    ];
    if let Some([e0, e1]) = energy {
        out.push((
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-a\"}",
            e0,
        ));
        out.push((
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"1\",UUID=\"GPU-b\"}",
            e1,
        ));
    }
    out
}

/// One request from 1 s to 2 s: 10 events carrying 20 tokens (usage), so 20 tokens/s.
fn request() -> Vec<String> {
    let mut lines = vec![sent(1, 1_000 * MS, 1_000 * MS)];
    for i in 1..=10 {
        lines.push(token(1, (1_000 + 90 * i) * MS, 1));
    }
    lines.push(done(
        1,
        2_000 * MS,
        true,
        r#","prompt_tokens":5,"completion_tokens":20"#,
    ));
    lines
}

fn summary(lines: Vec<String>, every_ns: Option<u64>) -> (Summary, Vec<Record>) {
    let opts = SummaryOptions {
        every_ns,
        ..SummaryOptions::default()
    };
    let (records, _) = drive(
        vec![("run", stream(&lines))],
        &[],
        &opts,
        Default::default(),
    )
    .expect("reduces");
    let summary = records
        .iter()
        .find_map(|r| match r {
            Record::Summary(s) => Some((**s).clone()),
            _ => None,
        })
        .expect("a summary");
    (summary, records)
}

#[test]
fn energy_from_the_counter_over_the_scrapes_around_the_window() {
    let mut lines = vec![scrape(
        0,
        "before",
        DCGM,
        &gpus(Some([0.0, 0.0]), [100.0, 100.0]),
    )];
    lines.extend(request());
    // The counter at the window's start (1 s) and end (2 s): GPU 0 drew 150 J, GPU 1 100 J.
    lines.insert(
        1,
        scrape(
            1_000,
            "during",
            DCGM,
            &gpus(Some([100e3, 100e3]), [150.0, 100.0]),
        ),
    );
    lines.push(scrape(
        2_000,
        "after",
        DCGM,
        &gpus(Some([250e3, 200e3]), [150.0, 100.0]),
    ));
    let (s, _) = summary(lines, None);
    assert_eq!(s.output_throughput_tokens_per_s, 20.0);
    assert_eq!(s.power_w_mean, Some(250.0));
    assert_eq!(s.energy_j_per_output_token, Some(12.5));
    assert_eq!(s.power_w_mean_per_gpu["0"], 150.0);
    assert_eq!(s.power_w_mean_per_gpu["1"], 100.0);
    assert_eq!(s.energy_j_per_output_token_per_gpu["0"], 7.5);
    assert_eq!(s.energy_j_per_output_token_per_gpu["1"], 5.0);
    assert_eq!(s.tokens_per_event, Some(2.0));
    // The power gauge's samples in the window: 150 + 100 W at 1 s and at 2 s.
    let power = &s.gauges["power_w"];
    assert_eq!((power.mean, power.max), (250.0, 250.0));
}

#[test]
fn energy_from_the_power_integral_without_a_counter() {
    let mut lines = request();
    for (at, p) in [(0, 100.0), (1_000, 100.0), (1_500, 200.0), (2_000, 200.0)] {
        let phase = if at == 0 { "before" } else { "during" };
        lines.push(scrape(at, phase, DCGM, &gpus(None, [p, 0.0])));
    }
    let (s, _) = summary(lines, None);
    // Trapezoids from 1 s to 2 s: 0.5 s at 150 W mean, 0.5 s at 200 W: 175 J in 1 s.
    assert_eq!(s.power_w_mean, Some(175.0));
    assert_eq!(s.energy_j_per_output_token, Some(8.75));
    assert_eq!(s.power_w_mean_per_gpu["1"], 0.0);
}

#[test]
fn gauges_over_the_window_and_in_the_intervals() {
    let mut lines = request();
    let engine = |kv: f64, running: f64| {
        vec![
            ("vllm:kv_cache_usage_perc{engine=\"0\"}", kv),
            ("vllm:gpu_cache_usage_perc{engine=\"0\"}", kv),
            ("vllm:num_requests_running{engine=\"0\"}", running),
            ("vllm:num_requests_waiting{engine=\"0\"}", 0.0),
        ]
    };
    lines.insert(0, scrape(0, "before", ENGINE, &engine(0.9, 9.0)));
    lines.insert(5, scrape(1_200, "during", ENGINE, &engine(0.2, 1.0)));
    lines.insert(9, scrape(1_800, "during", ENGINE, &engine(0.6, 3.0)));
    let (s, records) = summary(lines, Some(500 * MS));
    let kv = &s.gauges["kv_cache_usage"];
    assert!((kv.mean - 0.4).abs() < 1e-12 && kv.max == 0.6, "{kv:?}");
    let running = &s.gauges["requests_running"];
    assert_eq!((running.mean, running.max), (2.0, 3.0));
    assert_eq!(s.gauges["requests_waiting"].max, 0.0);
    assert_eq!(s.power_w_mean, None, "no GPU readings");
    assert_eq!(s.spec_acceptance_rate, None);
    let intervals: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::Interval(i) => Some(i),
            _ => None,
        })
        .collect();
    let at = |start: f64| intervals.iter().find(|i| i.start_s == start).unwrap();
    assert_eq!(at(0.0).gauges["kv_cache_usage"], 0.9);
    assert_eq!(at(1.0).gauges["requests_running"], 1.0);
    assert_eq!(at(1.5).gauges["kv_cache_usage"], 0.6);
    assert!(at(0.5).gauges.is_empty());
}
