//! The server's gauges read from one scrape, under tokenpipe's names: which engine or exporter
//! series each is read from, and how the series of one scrape are combined (docs/metrics.md,
//! "The server's gauges").

use std::collections::BTreeMap;
use tokenpipe_format::series_name;

/// How the series of one gauge in one scrape become one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Combine {
    /// Their sum: counts of requests, watts.
    Sum,
    /// Their mean: fractions and percentages (several engines' KV caches, several GPUs).
    Mean,
}

/// One gauge: its name in the summary and the interval records, the series it is read from
/// (the first the scrape has wins), and how they combine.
struct Gauge {
    name: &'static str,
    sources: &'static [&'static str],
    combine: Combine,
}

/// Every gauge, in the order they are reported.
const GAUGES: [Gauge; 6] = [
    Gauge {
        name: "kv_cache_usage",
        sources: &[
            "vllm:kv_cache_usage_perc",
            "vllm:gpu_cache_usage_perc",
            "llamacpp:kv_cache_usage_ratio",
        ],
        combine: Combine::Mean,
    },
    Gauge {
        name: "requests_running",
        sources: &["vllm:num_requests_running", "llamacpp:requests_processing"],
        combine: Combine::Sum,
    },
    Gauge {
        name: "requests_waiting",
        sources: &["vllm:num_requests_waiting", "llamacpp:requests_deferred"],
        combine: Combine::Sum,
    },
    Gauge {
        name: "prefix_cache_hit_rate",
        sources: &["vllm:gpu_prefix_cache_hit_rate"],
        combine: Combine::Mean,
    },
    Gauge {
        name: "gpu_util_pct",
        sources: &["DCGM_FI_DEV_GPU_UTIL"],
        combine: Combine::Mean,
    },
    Gauge {
        name: "power_w",
        sources: &["DCGM_FI_DEV_POWER_USAGE"],
        combine: Combine::Sum,
    },
];

/// The gauges a scrape's `samples` hold, by name.
pub(crate) fn values(samples: &BTreeMap<String, f64>) -> Vec<(&'static str, f64)> {
    let mut out = Vec::new();
    for gauge in &GAUGES {
        for source in gauge.sources {
            let (mut sum, mut n) = (0.0, 0u32);
            for (series, value) in samples {
                if series_name(series) == *source {
                    sum += value;
                    n += 1;
                }
            }
            if n > 0 {
                let value = match gauge.combine {
                    Combine::Sum => sum,
                    Combine::Mean => sum / f64::from(n),
                };
                out.push((gauge.name, value));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_source_wins_and_series_combine() {
        let samples: BTreeMap<String, f64> = [
            ("vllm:kv_cache_usage_perc{engine=\"0\"}", 0.2),
            ("vllm:kv_cache_usage_perc{engine=\"1\"}", 0.4),
            ("vllm:gpu_cache_usage_perc{engine=\"0\"}", 0.9),
            ("vllm:num_requests_running{engine=\"0\"}", 3.0),
            ("vllm:num_requests_running{engine=\"1\"}", 4.0),
            ("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"}", 100.0),
            ("DCGM_FI_DEV_POWER_USAGE{gpu=\"1\"}", 150.0),
            ("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"}", 100.0),
            ("DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"}", 50.0),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let got = values(&samples);
        let want = vec![
            ("kv_cache_usage", 0.30000000000000004),
            ("requests_running", 7.0),
            ("gpu_util_pct", 75.0),
            ("power_w", 250.0),
        ];
        assert_eq!(got, want);
        assert!(values(&BTreeMap::new()).is_empty());
    }
}
