//! The profile table and the choice of engine; the calibration of `spark-gpt-oss-120b` on
//! virtual time, by llama-benchy's formulas (the benchmark `simserve_calibration` measures the
//! same through the real binaries).

use super::*;
use crate::engine::batching::model::Model;

const MS: u64 = 1_000_000;

/// llama-benchy's figures for `runs` batches of `c` requests of 1,024 prompt tokens and 128
/// out, sent together on an idle engine, 10 ms apart batch to batch: (pp t/s, tg t/s), per
/// request at c = 1 and per batch above, averaged over the batches.
fn benchy(params: &Params, c: u64, runs: u64) -> (f64, f64) {
    let mut model = Model::new(params.clone());
    let (mut pp, mut tg) = (0.0, 0.0);
    let mut start = 0;
    for run in 0..runs {
        // Distinct prompts, as a salted run's are: no prefix shared between requests.
        let slots: Vec<usize> = (0..c)
            .map(|i| {
                let blocks = (0..64).map(|b| (run * 1000 + i) * 100 + b).collect();
                model.admit_blocks(start, 1024, 128, blocks)
            })
            .collect();
        let mut first = Vec::new();
        let mut last = Vec::new();
        for &slot in &slots {
            let mut now = start;
            let mut times = Vec::new();
            for k in 1..=128 {
                let at = loop {
                    match model.due(slot, k, now) {
                        Ok(at) => break at,
                        Err(ask) => now = ask,
                    }
                };
                now = now.max(at);
                times.push(at);
            }
            first.push(times[0]);
            last.push(times[127]);
            model.depart(slot);
        }
        let (min_first, max_first) = (first.iter().min().unwrap(), first.iter().max().unwrap());
        let max_last = *last.iter().max().unwrap();
        let s = |ns: u64| ns as f64 / 1e9;
        pp += (c * 1024) as f64 / s(max_first - start);
        tg += (c * 127) as f64 / s(max_last - min_first);
        start = max_last + 10 * MS;
    }
    (pp / runs as f64, tg / runs as f64)
}

fn spark() -> Params {
    find("spark-gpt-oss-120b")
        .unwrap()
        .settings()
        .unwrap()
        .params
}

#[test]
fn spark_profile_reproduces_seed_001() {
    let params = spark();
    for &(c, tg_want, pp_want) in SPARK_PUBLISHED {
        let (pp, tg) = benchy(&params, c, 3);
        let off = |got: f64, want: f64| (got / want - 1.0).abs();
        assert!(off(tg, tg_want) < 0.05, "c={c}: tg {tg:.1} vs {tg_want}");
        if let Some(pp_want) = pp_want {
            assert!(off(pp, pp_want) < 0.05, "c={c}: pp {pp:.0} vs {pp_want}");
        }
    }
}

/// Prints the fit (`cargo test -p tokenpipe-sim print_spark_fit -- --ignored --nocapture`).
#[test]
#[ignore = "a tool for refitting the profile, not a check"]
fn print_spark_fit() {
    let params = spark();
    for &(c, tg_want, pp_want) in SPARK_PUBLISHED {
        let (pp, tg) = benchy(&params, c, 3);
        println!(
            "c={c:>2} tg {tg:>7.2} / {tg_want:>7.2} = {:.3}   pp {pp:>7.0} / {:>5.0} = {:.3}",
            tg / tg_want,
            pp_want.unwrap_or(f64::NAN),
            pp / pp_want.unwrap_or(f64::NAN)
        );
    }
}

#[test]
fn every_profile_parses_and_has_a_source() {
    for p in PROFILES {
        let s = p.settings().unwrap();
        assert!(!p.source.is_empty());
        assert!(s.params.decode_ms.at(1.0) > 0.0, "{}", p.name);
        assert!(s.params.prefill_tps.at(1024.0) > 0.0, "{}", p.name);
    }
    assert!(find(DEFAULT_PROFILE).is_some());
    assert!(names().contains(&FIXED_PROFILE));
}

#[test]
fn timing_flags_choose_the_fixed_timetable_and_nothing_else_does() {
    let none = Overrides::default();
    assert_eq!(choose(None, true, &none), Ok(EngineSettings::Fixed));
    assert_eq!(
        choose(Some("fixed"), false, &none),
        Ok(EngineSettings::Fixed)
    );
    let EngineSettings::Batching(default) = choose(None, false, &none).unwrap() else {
        panic!("the default is a batching profile");
    };
    assert_eq!(default.profile, DEFAULT_PROFILE);
    let err = choose(Some("spark-gpt-oss-120b"), true, &none).unwrap_err();
    assert!(err.contains("--ttft-ms"), "{err}");
    let seqs = Overrides {
        max_num_seqs: Some(4),
        prefix_cache: Some(false),
        ..Overrides::default()
    };
    let err = choose(None, true, &seqs).unwrap_err();
    assert!(err.contains("--max-num-seqs"), "{err}");
    let EngineSettings::Batching(s) = choose(Some("multinode-tp4"), false, &seqs).unwrap() else {
        panic!("multinode-tp4 is a batching profile");
    };
    assert_eq!((s.params.max_num_seqs, s.params.prefix_cache), (4, false));
    let err = choose(Some("h100"), false, &none).unwrap_err();
    assert!(
        err.contains("unknown profile `h100`") && err.contains("small-gpu"),
        "{err}"
    );
}

/// Refits the spark curves by fixed-point iteration and prints them
/// (`cargo test -p tokenpipe-sim refit_spark -- --ignored --nocapture`).
#[test]
#[ignore = "a tool for refitting the profile, not a check"]
fn refit_spark() {
    let mut params = spark();
    let cs = [1u64, 2, 4, 8, 16, 32, 64];
    let mut decode: Vec<(f64, f64)> = cs
        .iter()
        .map(|&c| (c as f64, params.decode_ms.at(c as f64)))
        .collect();
    let pp_at = [
        (1024.0, 1u64, 3310.0),
        (3072.0, 4, 4579.0),
        (8192.0, 16, 6918.0),
    ];
    let mut prefill: Vec<(f64, f64)> = pp_at
        .iter()
        .map(|&(p, _, _)| (p, params.prefill_tps.at(p)))
        .collect();
    for _ in 0..30 {
        params.decode_ms = Curve::new(
            decode.clone(),
            super::super::batching::curve::Beyond::Extend,
        )
        .unwrap();
        params.prefill_tps =
            Curve::new(prefill.clone(), super::super::batching::curve::Beyond::Flat).unwrap();
        for (i, &(c, tg_want, _)) in SPARK_PUBLISHED.iter().enumerate() {
            let (_, tg) = benchy(&params, c, 2);
            decode[i].1 *= (tg / tg_want).powf(0.7);
        }
        for (i, &(_, c, pp_want)) in pp_at.iter().enumerate() {
            let (pp, _) = benchy(&params, c, 2);
            prefill[i].1 *= (pp_want / pp).powf(0.7);
        }
    }
    let fmt = |v: &[(f64, f64)], d: usize| {
        v.iter()
            .map(|(x, y)| format!("{x}:{y:.d$}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    println!("decode {}", fmt(&decode, 1));
    println!("prefill {}", fmt(&prefill, 0));
}
