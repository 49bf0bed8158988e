//! The profile table and the choice of engine; the calibrations on virtual time: of
//! `spark-gpt-oss-120b` by llama-benchy's formulas (the benchmark `simserve_calibration` measures
//! the same through the real binaries), of `multinode-tp4` by `vllm bench serve`'s.

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
    let err = choose(Some("spark-gpt-oss-120b"), true, &none)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--ttft-ms"), "{err}");
    let seqs = Overrides {
        max_num_seqs: Some(4),
        prefix_cache: Some(false),
        ..Overrides::default()
    };
    let err = choose(None, true, &seqs).unwrap_err().to_string();
    assert!(err.contains("--max-num-seqs"), "{err}");
    let EngineSettings::Batching(s) = choose(Some("multinode-tp4"), false, &seqs).unwrap() else {
        panic!("multinode-tp4 is a batching profile");
    };
    assert_eq!((s.params.max_num_seqs, s.params.prefix_cache), (4, false));
    let err = choose(Some("h100"), false, &none).unwrap_err().to_string();
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

/// vLLM's benchmark figures (`vllm bench serve`) for one block's workload on `params`: every
/// prompt admitted at instant 0, each token's instant from the model, on virtual time. The
/// prompts are random, so no two share a cached block: the prefix cache is left out.
fn serve_bench(params: &Params, block: &ServeBlock) -> ServeBlock {
    let mut model = Model::new(Params {
        prefix_cache: false,
        ..params.clone()
    });
    let n = block.output_tokens;
    let slots: Vec<usize> = (0..block.prompts)
        .map(|_| model.admit(0, block.prompt_tokens, n))
        .collect();
    let (mut ttft, mut tpot, mut end) = (Vec::new(), Vec::new(), 0u64);
    for &slot in &slots {
        let mut now = 0;
        let mut first = 0;
        for k in 1..=n {
            let at = loop {
                match model.due(slot, k, now) {
                    Ok(at) => break at,
                    Err(ask) => now = ask,
                }
            };
            now = now.max(at);
            if k == 1 {
                first = at;
            }
        }
        ttft.push(first as f64 / 1e6);
        tpot.push((now - first) as f64 / 1e6 / (n - 1) as f64);
        end = end.max(now);
        model.depart(slot);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let duration_s = end as f64 / 1e9;
    ServeBlock {
        mean_ttft_ms: mean(&ttft),
        median_ttft_ms: percentile(&mut ttft, 50.0),
        mean_tpot_ms: mean(&tpot),
        duration_s,
        output_tps: (block.prompts * n) as f64 / duration_s,
        ..*block
    }
}

/// numpy's `percentile` (and `median` at 50), as vLLM reads them: the sorted values joined by
/// straight lines, value i at position i / (n − 1).
fn percentile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let pos = (v.len() - 1) as f64 * q / 100.0;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Each figure of each block as (label, published, simulated), in the order of vLLM's output.
fn figures(published: &ServeBlock, simulated: &ServeBlock) -> [(&'static str, f64, f64); 5] {
    let (p, s) = (published, simulated);
    [
        ("mean TTFT (ms)", p.mean_ttft_ms, s.mean_ttft_ms),
        ("median TTFT (ms)", p.median_ttft_ms, s.median_ttft_ms),
        ("mean TPOT (ms)", p.mean_tpot_ms, s.mean_tpot_ms),
        ("duration (s)", p.duration_s, s.duration_s),
        ("output (tok/s)", p.output_tps, s.output_tps),
    ]
}

#[test]
fn percentiles_as_numpy_reads_them() {
    assert_eq!(percentile(&mut [3.0, 1.0, 2.0], 50.0), 2.0);
    assert_eq!(percentile(&mut [4.0, 1.0, 3.0, 2.0], 50.0), 2.5);
    assert_eq!(percentile(&mut [7.0], 50.0), 7.0);
    // numpy.percentile(range(10), 99) == 8.91
    let mut ten: Vec<f64> = (0..10).map(f64::from).collect();
    assert!((percentile(&mut ten, 99.0) - 8.91).abs() < 1e-12);
}

#[test]
fn serve_bench_reads_vllm_figures_off_the_model() {
    // One request: a first step of 10 ms + 1,000 tokens at 10,000 t/s = 110 ms, then one token
    // every 10 ms: the 11th at 210 ms.
    let params = Params {
        decode_ms: Curve::parse_cost("10").unwrap(),
        prefill_tps: Curve::parse_rate("10000").unwrap(),
        max_num_seqs: 8,
        max_batched_tokens: 4096,
        kv_tokens: 100_000,
        prefix_cache: true,
    };
    let block = ServeBlock {
        prompts: 1,
        prompt_tokens: 1000,
        output_tokens: 11,
        ..MULTINODE_PUBLISHED[0]
    };
    let got = serve_bench(&params, &block);
    assert!((got.mean_ttft_ms - 110.0).abs() < 1e-6, "{got:?}");
    assert_eq!(got.median_ttft_ms, got.mean_ttft_ms);
    assert!((got.mean_tpot_ms - 10.0).abs() < 1e-6, "{got:?}");
    assert!((got.duration_s - 0.21).abs() < 1e-9, "{got:?}");
    assert!((got.output_tps - 11.0 / 0.21).abs() < 1e-6, "{got:?}");
}

#[test]
fn multinode_profile_reproduces_seed_002() {
    let params = find("multinode-tp4").unwrap().settings().unwrap().params;
    let mut table = String::from(
        "| prompts | figure | published | simulated | ratio |\n|---|---|---|---|---|\n",
    );
    let mut worst: f64 = 0.0;
    for block in MULTINODE_PUBLISHED {
        let got = serve_bench(&params, block);
        for (what, want, sim) in figures(block, &got) {
            let ratio = sim / want;
            worst = worst.max((ratio - 1.0).abs());
            table.push_str(&format!(
                "| {} | {what} | {want:.2} | {sim:.2} | {ratio:.3} |\n",
                block.prompts
            ));
        }
    }
    println!("{table}worst: {:.1} %", worst * 100.0);
    assert!(worst < 0.10, "a figure is more than 10 % off:\n{table}");
}
