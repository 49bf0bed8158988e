//! A request's fault asked through its `x-tokenpipe-fault` header, so that a client that can
//! set headers but not body members (a gateway, another benchmark tool, `fire -H` or a
//! schedule's per-request `headers`) can mix faults within one run.
//!
//! The value is `KIND[;after=N]`: a kind as `--fault` names it (or `none`, which spares the
//! request), then optionally the tokens sent before the fault acts. For example
//! `x-tokenpipe-fault: reset;after=3` or `x-tokenpipe-fault: http=429`.
//!
//! Precedence, from strongest: the header, then the body members `tokenpipe_fault` and
//! `tokenpipe_fault_after`, then the `--fault` flags and `--fault-after`. The header's kind and
//! its `after` each override their body counterpart on their own: a header without `after`
//! keeps the body's `tokenpipe_fault_after`.

use super::select::{Asked, Choice};
use super::{FaultKind, KindError, KIND_NAMES};
use hyper::HeaderMap;

/// The header's name.
pub const NAME: &str = "x-tokenpipe-fault";

/// What is wrong with a request's header, for its 400 answer; each message names the header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The header appears more than once.
    #[error("header {NAME}: given more than once")]
    Repeated,
    /// The value is not visible ASCII.
    #[error("header {NAME}: not ASCII text")]
    NotText,
    /// The kind is not one `--fault` names, nor `none`.
    #[error("header {NAME}: {0}, or none")]
    Kind(KindError),
    /// A part after the kind is not `after=N`.
    #[error("header {NAME}: `{part}`: expected KIND[;after=N] (KIND one of {KIND_NAMES})")]
    Part {
        /// The part as given.
        part: String,
    },
    /// `after` is given twice.
    #[error("header {NAME}: `after` given twice")]
    AfterTwice,
    /// `after` is not an integer from 0 to the most tokens a request may ask.
    #[error("header {NAME}: `{part}`: after must be an integer from 0 to {max}")]
    After {
        /// The part as given.
        part: String,
        /// The largest accepted.
        max: u64,
    },
}

/// Reads the header from `headers` (`Asked::default()` when absent); an error names the header
/// and what was wrong, for a 400 answer.
pub fn asked(headers: &HeaderMap, max_after: u64) -> Result<Asked, HeaderError> {
    let mut values = headers.get_all(NAME).iter();
    let Some(value) = values.next() else {
        return Ok(Asked::default());
    };
    if values.next().is_some() {
        return Err(HeaderError::Repeated);
    }
    let text = value.to_str().map_err(|_| HeaderError::NotText)?;
    parse(text, max_after)
}

/// Parses a value, `KIND[;after=N]` (spaces around the parts are ignored).
fn parse(text: &str, max_after: u64) -> Result<Asked, HeaderError> {
    let mut parts = text.split(';').map(str::trim);
    let kind = parts.next().unwrap_or_default();
    let choice = match kind {
        "none" => Choice::Spared,
        _ => Choice::Kind(FaultKind::parse(kind).map_err(HeaderError::Kind)?),
    };
    let mut after = None;
    for part in parts {
        let value = part
            .strip_prefix("after=")
            .ok_or_else(|| HeaderError::Part {
                part: part.to_owned(),
            })?;
        match value.trim().parse::<u64>() {
            Ok(n) if n <= max_after && after.is_none() => after = Some(n),
            Ok(_) if after.is_some() => return Err(HeaderError::AfterTwice),
            _ => {
                return Err(HeaderError::After {
                    part: part.to_owned(),
                    max: max_after,
                })
            }
        }
    }
    Ok(Asked { choice, after })
}

impl Asked {
    /// This (the header's) choice over `lower` (the body's): each of the kind and `after`
    /// taken from here when given, else from `lower`.
    pub fn over(self, lower: Asked) -> Asked {
        Asked {
            choice: match self.choice {
                Choice::Flags => lower.choice,
                own => own,
            },
            after: self.after.or(lower.after),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn with(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(NAME, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn values_parse() {
        assert_eq!(asked(&with(&[]), 10), Ok(Asked::default()));
        assert_eq!(
            asked(&with(&["reset;after=3"]), 10),
            Ok(Asked {
                choice: Choice::Kind(FaultKind::Reset),
                after: Some(3)
            })
        );
        assert_eq!(
            asked(&with(&[" stall=250 ; after=0 "]), 10),
            Ok(Asked {
                choice: Choice::Kind(FaultKind::StallFor(250)),
                after: Some(0)
            })
        );
        assert_eq!(
            asked(&with(&["none"]), 10).map(|a| a.choice),
            Ok(Choice::Spared)
        );
        assert_eq!(
            asked(&with(&["http=429"]), 10).map(|a| a.choice),
            Ok(Choice::Kind(FaultKind::Http(429)))
        );
        for (bad, want) in [
            ("boom", "unknown fault `boom`"),
            ("", "unknown fault"),
            ("reset;after=11", "from 0 to 10"),
            ("reset;after=x", "from 0 to 10"),
            ("reset;at=1", "expected KIND[;after=N]"),
            ("reset;after=1;after=2", "twice"),
        ] {
            let e = asked(&with(&[bad]), 10).unwrap_err().to_string();
            assert!(e.starts_with("header x-tokenpipe-fault: "), "{e}");
            assert!(e.contains(want), "{bad}: {e}");
        }
        let e = asked(&with(&["reset", "stall"]), 10).unwrap_err();
        assert_eq!(e, HeaderError::Repeated);
        assert_eq!(
            e.to_string(),
            "header x-tokenpipe-fault: given more than once"
        );
    }

    #[test]
    fn the_header_beats_the_body_part_by_part() {
        let body = Asked {
            choice: Choice::Kind(FaultKind::Error),
            after: Some(2),
        };
        let header = Asked {
            choice: Choice::Kind(FaultKind::Reset),
            after: None,
        };
        assert_eq!(
            header.over(body),
            Asked {
                choice: Choice::Kind(FaultKind::Reset),
                after: Some(2)
            }
        );
        assert_eq!(Asked::default().over(body), body);
        let spare = Asked {
            choice: Choice::Spared,
            after: None,
        };
        assert_eq!(spare.over(body).choice, Choice::Spared);
    }
}
