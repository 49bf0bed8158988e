//! The flag values parsed by hand: reduce's `--slo`, arrivals' `--trace-columns`, fire's
//! `--extra-body`, sweep's `--scan`, `--find`, `--resolution`, `--slo` and its command's
//! `{NAME}` (and the durations they share): no panic on any text, and what is accepted means
//! what it says (written back, it parses to the same; an extra body's members reach every
//! request body, once each, and never replace fire's own; a scan's values are in range and in
//! order, a search's bisection stays inside its bracket, a checked command has no `{NAME}` left
//! once the value is in).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use tokenpipe_arrivals::process::parse_columns;
use tokenpipe_fire::api::Api;
use tokenpipe_format::Request;
use tokenpipe_fuzz::same_json;

/// The member names of a JSON object, repeats kept (a Map would keep only the last).
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some((k, IgnoredAny)) = m.next_entry::<String, IgnoredAny>()? {
                    keys.push(k);
                }
                Ok(Keys(keys))
            }
        }
        d.deserialize_map(V)
    }
}

fn slo(text: &str) {
    let Ok(bound) = tokenpipe_reduce::parse_slo_bound(text) else {
        return;
    };
    assert!(
        bound.bound_ns.is_finite() && bound.bound_ns >= 0.0,
        "{bound:?}"
    );
    let name = bound.metric.name();
    let again = tokenpipe_reduce::parse_slo_bound(&format!("{name}={}ns", bound.bound_ns))
        .expect("a bound written back parses");
    assert_eq!(again.metric, bound.metric);
    let tolerance = 1.0 + bound.bound_ns * 1e-12;
    assert!(
        (again.bound_ns - bound.bound_ns).abs() <= tolerance,
        "{bound:?} vs {again:?}"
    );
}

fn columns(text: &str) {
    let Ok(columns) = parse_columns(text) else {
        return;
    };
    let parts: Vec<String> = [
        ("time", &columns.time),
        ("input", &columns.input),
        ("output", &columns.output),
    ]
    .into_iter()
    .filter_map(|(role, name)| name.as_ref().map(|n| format!("{role}={n}")))
    .collect();
    assert!(!parts.is_empty(), "{text:?} names no column");
    for name in [&columns.time, &columns.input, &columns.output]
        .into_iter()
        .flatten()
    {
        assert!(
            !name.is_empty() && !name.contains(',') && name.trim() == name,
            "{name:?}"
        );
    }
    assert_eq!(parse_columns(&parts.join(",")), Ok(columns));
}

fn extra_body(text: &str, temperature: bool) {
    let mut config = tokenpipe_fire::Config::new("http://127.0.0.1:1/v1");
    config.extra_body = Some(text.to_string());
    config.temperature = temperature.then_some(0.5);
    let Ok(opts) = config.body_options() else {
        return;
    };
    let extra = opts.extra.clone().expect("an extra body was given");
    let req = Request {
        id: 1,
        prompt: Some("hello".into()),
        max_tokens: 3,
        ..Request::default()
    };
    for api in [Api::Completions, Api::Chat] {
        let body = api
            .dialect()
            .encode(&req, &[], &opts)
            .expect("a text prompt encodes");
        let Keys(keys) = serde_json::from_slice(&body).expect("a body is a JSON object");
        let mut unique = keys.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), keys.len(), "a member twice: {keys:?}");
        let body: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&body).expect("a body is a JSON object");
        assert_eq!(body["stream"], true);
        assert_eq!(body["max_tokens"], 3);
        for (k, v) in &extra {
            if k == "temperature" && temperature {
                assert_eq!(body[k], 0.5);
            } else {
                // serde_json's default float parser is best-effort: a float may come back one
                // ulp off (BENCHMARKS.md, "Fuzzing": found by this target, left as it is).
                assert!(
                    same_json(&body[k], v),
                    "member {k}: {} sent for {v}",
                    body[k]
                );
            }
        }
    }
}

/// sweep's `--scan` and `--find` (with `--resolution`): the values in order, positive and
/// finite, whole when said so; a bisection of the range stays strictly inside it.
fn sweep_values(text: &str, find: bool, resolution: &str) {
    use tokenpipe_sweep::{parse_find, parse_resolution, parse_scan, MAX_SCAN_VALUES};
    let parsed = if find {
        parse_find(text)
    } else {
        parse_scan(text)
    };
    let Ok(spec) = parsed else {
        return;
    };
    assert!(!spec.name.is_empty());
    assert!(!spec.values.is_empty() && spec.values.len() <= MAX_SCAN_VALUES);
    assert!(
        spec.values.windows(2).all(|w| w[0] < w[1]),
        "{:?}",
        spec.values
    );
    for &v in &spec.values {
        assert!(v.is_finite() && v > 0.0, "{v} in {text:?}");
        assert!(!spec.integer || v.fract() == 0.0, "{v} in {text:?}");
    }
    if !find {
        return;
    }
    assert_eq!(spec.values.len(), 2);
    let resolution = (!resolution.is_empty()).then_some(resolution);
    let Ok(domain) = parse_resolution(resolution, spec.integer) else {
        return;
    };
    let (mut lo, mut hi) = (spec.values[0], spec.values[1]);
    // Halving toward the low end then the high end: each middle strictly inside, and an end
    // within a hundred halvings of a bracket of up to 10^12.
    for step in 0..200 {
        let Some(mid) = domain.middle(lo, hi) else {
            return;
        };
        assert!(
            lo < mid && mid < hi,
            "{mid} outside ({lo}, {hi}) for {text:?}"
        );
        if step % 2 == 0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    panic!("no end to the bisection of {text:?} at {domain:?}");
}

/// sweep's `METRIC.pQ<=DURATION` and the command's `{NAME}`: a bound in range whose member key
/// reads back; a command that passes the check has no `{NAME}` left once the value is in.
fn sweep_text(text: &str, template: bool) {
    if template {
        let (name, command) = text.split_once('\n').unwrap_or(("c", text));
        if tokenpipe_sweep::check_template(command, name).is_ok() {
            let run = tokenpipe_sweep::substitute(command, name, "8");
            assert!(!run.contains(&format!("{{{name}}}")), "{run:?}");
        }
        return;
    }
    let Ok(bound) = tokenpipe_sweep::parse_bound(text) else {
        return;
    };
    assert!((0.0..=100.0).contains(&bound.percentile), "{bound:?}");
    assert!(
        bound.bound_ms.is_finite() && bound.bound_ms >= 0.0,
        "{bound:?}"
    );
    let key = bound.key();
    assert!(tokenpipe_format::parse_stat_key(&key).is_some(), "{key}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, text)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    match mode % 8 {
        0 => slo(text),
        1 => columns(text),
        2 => extra_body(text, mode & 8 != 0),
        3 => {
            let _ = tokenpipe_cli::parse_duration(text);
        }
        4 | 5 => {
            let (spec, resolution) = text.split_once(' ').unwrap_or((text, ""));
            sweep_values(spec, mode % 8 == 5, resolution);
        }
        _ => sweep_text(text, mode % 8 == 7),
    }
});
