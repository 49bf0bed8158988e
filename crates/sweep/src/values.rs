//! The load variable: its values as the flags give them (`--scan NAME=1,2,4`,
//! `NAME=1..64x2`, `--find NAME=1..256`), how they are spaced ([`Domain`]), how a value is
//! written into the command, and the check of the command's `{NAME}` placeholders.

/// How the variable's values are spaced, and how fine a search goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Domain {
    /// Whole numbers (a concurrency, a batch size): a search stops when the bracket is `step`
    /// wide.
    Integer {
        /// The bracket's width at which a search stops (`--resolution`, default 1).
        step: u64,
    },
    /// Decimals (a rate): a search stops when the bracket's upper end is within `relative` of
    /// its lower end.
    Real {
        /// The relative width at which a search stops (`--resolution`, default 5 %).
        relative: f64,
    },
}

/// The relative resolution of a search over decimals when `--resolution` is not given.
pub const DEFAULT_RELATIVE: f64 = 0.05;

impl Domain {
    /// The value as the command gets it: `8` for a whole number, `0.5` for a decimal.
    pub fn format(self, value: f64) -> String {
        match self {
            Domain::Integer { .. } => format!("{}", value.round() as u64),
            Domain::Real { .. } => format!("{value}"),
        }
    }

    /// Whether a bracket from `lo` (passed) to `hi` (failed) is as narrow as asked.
    pub fn converged(self, lo: f64, hi: f64) -> bool {
        match self {
            Domain::Integer { step } => hi - lo <= step as f64,
            Domain::Real { relative } => hi / lo - 1.0 <= relative,
        }
    }

    /// The value a bisection of `(lo, hi)` tries next: the middle whole number (on `lo`'s grid
    /// of `step`), or for decimals the geometric middle rounded to four significant digits.
    /// `None` when nothing lies strictly between at this resolution.
    pub fn middle(self, lo: f64, hi: f64) -> Option<f64> {
        if self.converged(lo, hi) {
            return None;
        }
        let mid = match self {
            Domain::Integer { step } => {
                let steps = ((hi - lo) / step as f64).floor().max(2.0);
                lo + (steps / 2.0).floor() * step as f64
            }
            Domain::Real { .. } => tidy(lo, hi, (lo * hi).sqrt()),
        };
        (mid > lo && mid < hi).then_some(mid)
    }
}

/// `x` rounded to the fewest significant digits (four or more) that keep it strictly between
/// `lo` and `hi`.
fn tidy(lo: f64, hi: f64, x: f64) -> f64 {
    for digits in 4..=15 {
        let scale = 10f64.powi(digits - 1 - x.log10().floor() as i32);
        let rounded = (x * scale).round() / scale;
        if rounded > lo && rounded < hi {
            return rounded;
        }
    }
    x
}

/// The values of `--scan NAME=SPEC` or `--find NAME=A..B`, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The variable's name, as `{NAME}` in the command.
    pub name: String,
    /// The values (a scan's, in increasing order without repeats) or the two ends (a find's).
    pub values: Vec<f64>,
    /// Whole numbers when every number was written without a point.
    pub integer: bool,
}

/// The most values a scan may have: a typo such as `1..100000` should not start a day of runs.
pub const MAX_SCAN_VALUES: usize = 10_000;

/// Splits `NAME=REST`, checking that NAME is a plain name (`concurrency`, `rate_per_s`).
fn assignment<'a>(flag: &str, text: &'a str, form: &str) -> Result<(&'a str, &'a str), String> {
    let (name, rest) = text
        .split_once('=')
        .ok_or_else(|| format!("{flag}: expected {form}, got `{text}`"))?;
    let name = name.trim();
    if !is_name(name) {
        return Err(format!(
            "{flag}: `{name}` is not a variable name (letters, digits and _, starting with a letter)"
        ));
    }
    Ok((name, rest.trim()))
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One positive number; `integer` is true when written without a point or an exponent.
fn number(flag: &str, text: &str) -> Result<(f64, bool), String> {
    let t = text.trim();
    let integer = !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    let value: f64 = t
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("{flag}: `{t}` is not a number; values are numbers only"))?;
    if value <= 0.0 {
        return Err(format!(
            "{flag}: `{t}` is not above 0; loads are positive numbers"
        ));
    }
    if integer && value > 1e12 {
        return Err(format!("{flag}: `{t}` is too large a load"));
    }
    Ok((value, integer))
}

/// Reads `--scan NAME=LIST` (`1,2,4,8`), `NAME=A..B` (whole numbers, every one) or
/// `NAME=A..BxK` (A, A·K, A·K², … up to B).
pub fn parse_scan(text: &str) -> Result<Spec, String> {
    const FLAG: &str = "--scan";
    let (name, rest) = assignment(FLAG, text, "NAME=LIST, NAME=A..B or NAME=A..BxK")?;
    let (mut values, integer) = if let Some((a, b)) = rest.split_once("..") {
        let (b, factor) = match b.split_once(['x', '*']) {
            Some((b, k)) => (b, Some(number(FLAG, k)?)),
            None => (b, None),
        };
        let ((a, a_int), (b, b_int)) = (number(FLAG, a)?, number(FLAG, b)?);
        if a > b {
            return Err(format!("{FLAG}: the range {rest} runs backwards"));
        }
        match factor {
            None if !(a_int && b_int) => {
                return Err(format!(
                    "{FLAG}: A..B steps by 1 through whole numbers; give decimals as a list or \
                     with a factor (`{name}=0.5..8x2`)"
                ))
            }
            None => {
                let count = (b - a) as usize + 1;
                if count > MAX_SCAN_VALUES {
                    return Err(too_many(count));
                }
                ((0..count).map(|i| a + i as f64).collect(), true)
            }
            Some((k, _)) => {
                if k <= 1.0 {
                    return Err(format!("{FLAG}: the factor x{k} must be above 1"));
                }
                let mut values = vec![];
                let mut v = a;
                while v <= b * (1.0 + 1e-9) {
                    if values.len() >= MAX_SCAN_VALUES {
                        return Err(too_many(values.len() + 1));
                    }
                    // Whole ends keep the values whole (`c=1..64x1.5`: 1, 2, 3, 5, 8, …),
                    // each once after rounding.
                    values.push(if a_int && b_int { v.round() } else { v });
                    v *= k;
                }
                (values, a_int && b_int)
            }
        }
    } else {
        let mut values = vec![];
        let mut integer = true;
        for item in rest.split(',') {
            let (v, int) = number(FLAG, item)?;
            integer &= int;
            values.push(v);
        }
        if values.len() > MAX_SCAN_VALUES {
            return Err(too_many(values.len()));
        }
        (values, integer)
    };
    values.sort_by(f64::total_cmp);
    values.dedup();
    Ok(Spec {
        name: name.into(),
        values,
        integer,
    })
}

fn too_many(count: usize) -> String {
    format!("--scan: {count} values; a scan takes at most {MAX_SCAN_VALUES}")
}

/// Reads `--find NAME=A..B`: the range a search looks in, A below B.
pub fn parse_find(text: &str) -> Result<Spec, String> {
    const FLAG: &str = "--find";
    let (name, rest) = assignment(FLAG, text, "NAME=A..B such as concurrency=1..256")?;
    let (a, b) = rest.split_once("..").ok_or_else(|| {
        format!("{FLAG}: expected NAME=A..B such as concurrency=1..256, got `{text}`")
    })?;
    let ((a, a_int), (b, b_int)) = (number(FLAG, a)?, number(FLAG, b)?);
    if a >= b {
        return Err(format!(
            "{FLAG}: the range {rest} must run from low to high"
        ));
    }
    Ok(Spec {
        name: name.into(),
        values: vec![a, b],
        integer: a_int && b_int,
    })
}

/// Reads `--resolution` for a domain: a whole step for whole numbers (`2`), a relative step
/// for decimals (`5%` or `0.05`).
pub fn parse_resolution(text: Option<&str>, integer: bool) -> Result<Domain, String> {
    const FLAG: &str = "--resolution";
    match (text.map(str::trim), integer) {
        (None, true) => Ok(Domain::Integer { step: 1 }),
        (None, false) => Ok(Domain::Real {
            relative: DEFAULT_RELATIVE,
        }),
        (Some(t), true) => match t.parse::<u64>() {
            Ok(step) if step >= 1 => Ok(Domain::Integer { step }),
            _ => Err(format!(
                "{FLAG}: `{t}` is not a whole step of 1 or more (the range is of whole numbers)"
            )),
        },
        (Some(t), false) => {
            let relative = match t.strip_suffix('%') {
                Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
                None => t.parse::<f64>(),
            };
            match relative {
                Ok(r) if r > 0.0 && r < 1.0 => Ok(Domain::Real { relative: r }),
                _ => Err(format!(
                    "{FLAG}: `{t}` is not a relative step such as 5% or 0.05 (the range is of decimals)"
                )),
            }
        }
    }
}

/// Checks the command's placeholders: `{NAME}` at least once, and no other `{word}` (a `${VAR}`
/// of the shell is left alone), so that a misspelt variable is refused before anything runs.
pub fn check_template(command: &str, name: &str) -> Result<(), String> {
    let wanted = format!("{{{name}}}");
    if !command.contains(&wanted) {
        return Err(format!(
            "the command never uses {wanted}, so every point would run the same load"
        ));
    }
    let bytes = command.as_bytes();
    for (i, _) in command.match_indices('{') {
        if i > 0 && bytes[i - 1] == b'$' {
            continue;
        }
        let rest = &command[i + 1..];
        if let Some(end) = rest.find('}') {
            let word = &rest[..end];
            if is_name(word) && word != name {
                return Err(format!(
                    "the command's {{{word}}} is not the variable {wanted}; only {wanted} is replaced"
                ));
            }
        }
    }
    Ok(())
}

/// The command with every `{NAME}` replaced by the value's text.
pub fn substitute(command: &str, name: &str, value: &str) -> String {
    command.replace(&format!("{{{name}}}"), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_read_lists_ranges_and_factors() {
        let s = parse_scan("concurrency=8,1,2,2").unwrap();
        assert_eq!(
            (s.name.as_str(), &s.values[..], s.integer),
            ("concurrency", &[1.0, 2.0, 8.0][..], true)
        );
        assert_eq!(parse_scan("c=3..6").unwrap().values, [3.0, 4.0, 5.0, 6.0]);
        assert_eq!(
            parse_scan("c=1..100x2").unwrap().values,
            [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        );
        let s = parse_scan("c=1..64x1.5").unwrap();
        assert_eq!(
            s.values,
            [1.0, 2.0, 3.0, 5.0, 8.0, 11.0, 17.0, 26.0, 38.0, 58.0]
        );
        assert!(s.integer);
        let r = parse_scan("rate=0.5..4x2").unwrap();
        assert_eq!(
            (&r.values[..], r.integer),
            (&[0.5, 1.0, 2.0, 4.0][..], false)
        );
        assert!(!parse_scan("rate=0.5,1").unwrap().integer);
    }

    #[test]
    fn bad_values_are_refused_naming_the_flag() {
        for bad in [
            "c=1,two",
            "c=0,1",
            "c=-1..4",
            "c=4..1",
            "c=0.5..2",
            "c=1..8x1",
            "c",
            "1c=1",
            "c=nan",
            "c=1..100000",
        ] {
            let e = parse_scan(bad).unwrap_err();
            assert!(e.starts_with("--scan: "), "{bad}: {e}");
        }
        for bad in ["c=8..8", "c=1,2", "c=a..4", "c=1..inf"] {
            let e = parse_find(bad).unwrap_err();
            assert!(e.starts_with("--find: "), "{bad}: {e}");
        }
        assert!(parse_resolution(Some("0.5"), true).is_err());
        assert!(parse_resolution(Some("2"), false).is_err());
        assert_eq!(
            parse_resolution(Some("2%"), false),
            Ok(Domain::Real { relative: 0.02 })
        );
        assert_eq!(
            parse_resolution(Some("4"), true),
            Ok(Domain::Integer { step: 4 })
        );
    }

    #[test]
    fn templates_need_their_variable_and_no_other() {
        assert!(check_template("arrivals --concurrency {c} | fire --url ${URL}", "c").is_ok());
        assert!(check_template("arrivals --concurrency 4", "c").is_err());
        let e = check_template("arrivals --concurrency {c} --rate {rate}", "c").unwrap_err();
        assert!(e.contains("{rate}"), "{e}");
        assert_eq!(substitute("a {c} b {c}", "c", "8"), "a 8 b 8");
    }

    #[test]
    fn middles_stay_inside_and_stop_at_the_resolution() {
        let int = Domain::Integer { step: 1 };
        assert_eq!(int.middle(4.0, 8.0), Some(6.0));
        assert_eq!(int.middle(4.0, 6.0), Some(5.0));
        assert_eq!(int.middle(4.0, 5.0), None);
        assert_eq!(Domain::Integer { step: 4 }.middle(4.0, 8.0), None);
        let real = Domain::Real { relative: 0.05 };
        assert_eq!(real.middle(1.0, 4.0), Some(2.0));
        assert_eq!(real.middle(1.0, 1.04), None);
        assert_eq!(real.format(0.5), "0.5");
        assert_eq!(int.format(8.0), "8");
    }
}
