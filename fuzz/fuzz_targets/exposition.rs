//! The Prometheus text parser behind fire's `--server-metrics` scrape: no panic on any page;
//! every sample kept is finite and of the asked prefix; and the samples written back as an
//! exposition read back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokenpipe_format::{parse_exposition, series_name, sum_series, ENGINE_PREFIXES};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for prefix in ENGINE_PREFIXES.iter().copied().chain([""]) {
        let samples = parse_exposition(&text, prefix);
        let mut page = String::new();
        for (series, value) in &samples {
            assert!(
                value.is_finite() && series.starts_with(prefix),
                "{series} {value}"
            );
            page.push_str(&format!("{series} {value}\n"));
        }
        if let Some(series) = samples.keys().next() {
            let name = series_name(series);
            assert!(sum_series(&samples, name, |_| true).is_some(), "{series}");
        }
        assert_eq!(
            parse_exposition(&page, prefix),
            samples,
            "written back as {page:?}"
        );
    }
});
