//! Statistical checks of the arrival processes on long schedules: each draws a schedule as the
//! command line would and tests what a user relies on. Seeds are fixed, so every check is
//! deterministic; the thresholds are those of the named tests at the stated levels, and each
//! test also shows that a wrong hypothesis fails, so the checks can fail.

use clap::Parser;
use tokenpipe_arrivals::{write_schedule, Args};
use tokenpipe_format::{Record, RecordReader, Request, Schedule};

/// The schedule record and the requests of `arrivals ARGS`.
fn schedule(args: &[&str]) -> (Schedule, Vec<Request>) {
    let argv: Vec<String> = std::iter::once("arrivals")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    let parsed = Args::try_parse_from(&argv).expect("valid arguments");
    let mut out = vec![];
    write_schedule(&parsed, argv, &mut out).expect("schedule written");
    let mut reader = RecordReader::new(&out[..], "arrivals");
    let (mut sched, mut requests) = (None, vec![]);
    while let Some(record) = reader.next_record().expect("valid output") {
        match record {
            Record::Schedule(s) => sched = Some(s),
            Record::Request(r) => requests.push(r),
            _ => {}
        }
    }
    (sched.expect("a schedule record"), requests)
}

fn offsets_s(requests: &[Request]) -> Vec<f64> {
    requests
        .iter()
        .map(|r| r.offset_ns.expect("open loop") as f64 / 1e9)
        .collect()
}

fn gaps_s(requests: &[Request]) -> Vec<f64> {
    offsets_s(requests)
        .windows(2)
        .map(|w| w[1] - w[0])
        .collect()
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let mut a = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised lower incomplete gamma function P(a, x): the CDF of Gamma(a, 1) at x.
fn gamma_p(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let front = (-x + a * x.ln() - ln_gamma(a)).exp();
    if x < a + 1.0 {
        // Series.
        let (mut ap, mut del, mut sum) = (a, 1.0 / a, 1.0 / a);
        for _ in 0..10_000 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-15 {
                break;
            }
        }
        sum * front
    } else {
        // Continued fraction for Q (modified Lentz).
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-15 {
                break;
            }
        }
        1.0 - front * h
    }
}

/// The Kolmogorov–Smirnov statistic of `sample` against the CDF `cdf`.
fn ks_statistic(sample: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut xs = sample.to_vec();
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

/// The KS critical value at the 1 % level for `n` observations (asymptotic, 1.628/√n).
fn ks_critical(n: usize) -> f64 {
    1.628 / (n as f64).sqrt()
}

#[test]
fn the_cdf_is_right_where_it_is_known() {
    // Gamma(1) is exponential; Gamma(2) has CDF 1 − e^{−x}(1 + x).
    for x in [0.1, 1.0, 3.0, 10.0] {
        assert!((gamma_p(1.0, x) - (1.0 - (-x).exp())).abs() < 1e-12);
        let want = 1.0 - (-x).exp() * (1.0 + x);
        assert!((gamma_p(2.0, x) - want).abs() < 1e-12, "{x}");
    }
    assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
    assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
}

#[test]
fn gaps_pass_a_kolmogorov_smirnov_test_against_their_gamma() {
    let rate = 5.0;
    for (k, seed) in [(0.3, "1"), (0.7, "2"), (1.0, "3"), (2.0, "4"), (8.0, "5")] {
        let (_, requests) = schedule(&[
            "--rate",
            "5",
            "--burstiness",
            &k.to_string(),
            "-n",
            "10001",
            "--seed",
            seed,
            "--input-tokens",
            "0",
            "--no-salt",
        ]);
        let gaps = gaps_s(&requests);
        // Gamma(k, θ = 1/(R·k)): P(k, x/θ).
        let theta = 1.0 / (rate * k);
        let d = ks_statistic(&gaps, |x| gamma_p(k, x / theta));
        let critical = ks_critical(gaps.len());
        assert!(d < critical, "k {k}: D = {d:.5} ≥ {critical:.5}");
        // The same gaps are far from a gamma of another shape: the test has power.
        let other = if k < 1.5 { k * 3.0 } else { k / 3.0 };
        let theta_other = 1.0 / (rate * other);
        let d_other = ks_statistic(&gaps, |x| gamma_p(other, x / theta_other));
        assert!(
            d_other > 3.0 * critical,
            "k {k} against {other}: D = {d_other:.5}"
        );
    }
}

#[test]
fn the_achieved_rate_is_within_two_percent_over_ten_thousand_requests() {
    for (rate, k, seed) in [
        ("0.3", "0.7", "42"),
        ("1.5", "1", "7"),
        ("20", "0.25", "9"),
        ("200", "4", "11"),
    ] {
        let (_, requests) = schedule(&[
            "--rate",
            rate,
            "--burstiness",
            k,
            "-n",
            "10000",
            "--seed",
            seed,
            "--input-tokens",
            "0",
            "--no-salt",
        ]);
        let span = *offsets_s(&requests).last().unwrap();
        let achieved = (requests.len() - 1) as f64 / span;
        let want: f64 = rate.parse().unwrap();
        assert!(
            (achieved / want - 1.0).abs() < 0.02,
            "rate {rate} k {k}: achieved {achieved:.4}/s"
        );
    }
}

#[test]
fn vllm_compatible_schedules_end_at_n_over_rate_exactly() {
    for (n, rate, k) in [("40", "2", "1"), ("200", "0.3", "0.7"), ("300", "1.5", "1")] {
        let (_, requests) = schedule(&[
            "--rate",
            rate,
            "--burstiness",
            k,
            "-n",
            n,
            "--vllm-compatible",
            "--seed",
            "42",
            "--input-tokens",
            "0",
        ]);
        let n: f64 = n.parse().unwrap();
        let rate: f64 = rate.parse().unwrap();
        let last = requests.last().unwrap().offset_ns.unwrap();
        assert_eq!(last, (n / rate * 1e9).round() as u64);
        assert!(requests[0].offset_ns.unwrap() > 0);
    }
    // Our default is a true renewal process: it starts at 0 and does not end on N/rate.
    let (_, plain) = schedule(&["--rate", "2", "-n", "40", "--seed", "42"]);
    assert_eq!(plain[0].offset_ns, Some(0));
    assert_ne!(plain.last().unwrap().offset_ns, Some(20_000_000_000));
}

#[test]
fn constant_arrivals_are_evenly_spaced() {
    let (_, requests) = schedule(&["--rate", "8", "--arrival", "constant", "-n", "9"]);
    let offsets: Vec<u64> = requests.iter().map(|r| r.offset_ns.unwrap()).collect();
    let want: Vec<u64> = (0..9).map(|i| i * 125_000_000).collect();
    assert_eq!(offsets, want);
}

#[test]
fn a_ramp_over_time_puts_the_expected_count_in_each_half() {
    // Linear 1 → 9 per second over 100 s: Λ(50) = 50 + 8·50²/200 = 150 expected arrivals in
    // the first half and 350 in the second. Poisson counts: within 4 standard deviations.
    let (_, requests) = schedule(&[
        "--ramp",
        "100s",
        "--ramp-from",
        "1",
        "--ramp-to",
        "9",
        "--duration",
        "100s",
        "--seed",
        "3",
        "--input-tokens",
        "0",
    ]);
    let offsets = offsets_s(&requests);
    let first = offsets.iter().filter(|&&t| t < 50.0).count() as f64;
    let second = offsets.iter().filter(|&&t| t >= 50.0).count() as f64;
    assert!((first - 150.0).abs() < 4.0 * 150f64.sqrt(), "{first}");
    assert!((second - 350.0).abs() < 4.0 * 350f64.sqrt(), "{second}");
    assert!(offsets.iter().all(|&t| t < 100.0));
}

#[test]
fn the_union_of_the_shards_is_the_unsharded_schedule() {
    for base in [
        &[
            "--rate",
            "3",
            "-n",
            "101",
            "--seed",
            "5",
            "--input-tokens",
            "9",
        ][..],
        &["--concurrency", "7", "-n", "50", "--input-tokens", "5"],
        &["--batch", "5", "--runs", "3", "--input-tokens", "5"],
        &[
            "--rate",
            "1",
            "--turns",
            "3",
            "-n",
            "10",
            "--input-tokens",
            "4",
        ],
    ] {
        let (whole_sched, whole) = schedule(base);
        let count = 3;
        let mut parts = vec![];
        let mut concurrency = 0;
        for i in 0..count {
            let shard = format!("{i}/{count}");
            let args: Vec<&str> = base.iter().copied().chain(["--shard", &shard]).collect();
            let (sched, requests) = schedule(&args);
            assert_eq!(sched.requests, Some(requests.len() as u64), "{args:?}");
            concurrency += sched.concurrency.unwrap_or(0);
            parts.extend(requests);
        }
        parts.sort_by_key(|r| r.id);
        assert_eq!(parts, whole, "{base:?}");
        assert_eq!(
            whole_sched.concurrency.unwrap_or(0),
            concurrency,
            "{base:?}"
        );
    }
}

#[test]
fn a_range_ratio_spreads_both_lengths_over_vllms_integer_bounds() {
    let (_, requests) = schedule(&[
        "--range-ratio",
        "0.2",
        "--input-tokens",
        "100",
        "--output-tokens",
        "50",
        "-n",
        "3000",
        "--token-ids",
        "10..20",
        "--no-salt",
    ]);
    let inputs: Vec<u64> = requests.iter().map(|r| r.prompt_tokens.unwrap()).collect();
    let outputs: Vec<u64> = requests.iter().map(|r| r.max_tokens).collect();
    assert_eq!(
        (inputs.iter().min(), inputs.iter().max()),
        (Some(&80), Some(&120))
    );
    assert_eq!(
        (outputs.iter().min(), outputs.iter().max()),
        (Some(&40), Some(&60))
    );
    // Token-id prompts are exactly as long as they say.
    assert!(requests
        .iter()
        .all(|r| r.prompt_token_ids.as_ref().unwrap().len() as u64 == r.prompt_tokens.unwrap()));
}
