//! How a figure varies over repeated runs: mean, sample standard deviation, CV % and the
//! Student-t 95 % interval of the mean (docs/metrics.md, "Several runs").

use tokenpipe_format::AcrossRuns;

/// The 0.975 quantile of Student's t for 1 to 30 degrees of freedom (two-sided 95 %).
const T975: [f64; 30] = [
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
    2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687,
    2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
];

/// The 0.975 quantile of the standard normal distribution: t's limit as df grows.
const Z975: f64 = 1.959964;

/// The 0.975 quantile of Student's t with `df` degrees of freedom: the table up to 30, then
/// linear in 1/df between df = 30 and the normal quantile (within 0.001 of the exact value).
pub fn t975(df: u64) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df as usize - 1],
        _ => Z975 + (T975[29] - Z975) * 30.0 / df as f64,
    }
}

/// The spread of `values` over runs; `None` for fewer than two values, where no sample
/// standard deviation exists.
///
/// mean = Σx / n; sd = √(Σ(x − mean)² / (n − 1)); cv_pct = 100 · sd / mean;
/// ci95 = mean ± t₀.₉₇₅(n − 1) · sd / √n.
pub fn across(values: &[f64]) -> Option<AcrossRuns> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mean = values.iter().sum::<f64>() / nf;
    let ss: f64 = values.iter().map(|x| (x - mean).powi(2)).sum();
    let sd = (ss / (nf - 1.0)).sqrt();
    let half = t975(n as u64 - 1) * sd / nf.sqrt();
    Some(AcrossRuns {
        n: n as u64,
        mean,
        sd,
        cv_pct: (mean != 0.0).then(|| 100.0 * sd / mean),
        ci95: [mean - half, mean + half],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_known_values() {
        assert_eq!(t975(2), 4.3027);
        assert_eq!(t975(4), 2.7764);
        assert_eq!(t975(9), 2.2622);
        for (df, exact) in [(40, 2.0211), (60, 2.0003), (120, 1.9799), (1000, 1.9623)] {
            assert!((t975(df) - exact).abs() < 1e-3, "df {df}: {}", t975(df));
        }
        assert!(t975(0).is_nan());
    }

    #[test]
    fn spread_of_three_values() {
        // mean 20, squared deviations 100 + 0 + 100, sd = √(200/2) = 10.
        let a = across(&[10.0, 20.0, 30.0]).unwrap();
        assert_eq!((a.n, a.mean, a.sd), (3, 20.0, 10.0));
        assert_eq!(a.cv_pct, Some(50.0));
        let half = 4.3027 * 10.0 / 3f64.sqrt();
        assert!((a.ci95[0] - (20.0 - half)).abs() < 1e-12, "{a:?}");
        assert!((a.ci95[1] - (20.0 + half)).abs() < 1e-12, "{a:?}");
        assert_eq!(across(&[5.0]), None);
        assert_eq!(across(&[0.0, 0.0]).unwrap().cv_pct, None);
    }
}
