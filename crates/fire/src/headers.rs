//! Request headers from the command line (`-H "Name: value"`, `--api-key`): parsing them with
//! clear errors, and keeping secret values (keys, tokens, cookies) out of everything `fire`
//! writes: the recorded argv and params, and its messages.

use hyper::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};
use std::collections::BTreeMap;

/// Headers `fire` sets itself on every request, which `-H` may not replace: the body's framing
/// and the per-request id.
const FIRES_OWN: &[&str] = &[
    "content-length",
    "transfer-encoding",
    "host",
    "connection",
    "x-request-id",
];

/// Words that make a header's value secret when they appear in its name.
const SECRET_WORDS: &[&str] = &[
    "authorization",
    "key",
    "token",
    "cookie",
    "secret",
    "password",
];

/// What replaces a secret value wherever fire writes it.
pub const REDACTED: &str = "***";

/// True when a header of this name carries credentials, so that its value is never written.
pub fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| name.contains(w))
}

/// Parses one `-H` argument, `Name: value`. The error never repeats the value, which may be a
/// credential.
pub fn parse(text: &str) -> Result<(HeaderName, HeaderValue), String> {
    let Some((name, value)) = text.split_once(':') else {
        let first_word: String = text
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .chars()
            .take(40)
            .collect();
        return Err(format!(
            "-H: expected \"Name: value\" (a header name, a colon, the value), got text without a colon that starts {first_word:?}"
        ));
    };
    checked(name.trim(), value.trim()).map_err(|e| format!("-H {e}"))
}

/// A request's own headers (the schedule's `headers` member), checked as `-H` headers are; the
/// error names the field and never repeats a value.
pub fn per_request(
    headers: &BTreeMap<String, String>,
) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
    let checked: Vec<(HeaderName, HeaderValue)> = headers
        .iter()
        .map(|(name, value)| {
            checked(name, value.trim()).map_err(|e| format!("field \"headers\": {e}"))
        })
        .collect::<Result<_, _>>()?;
    // Header names ignore case: two members naming one header would silently lose one.
    for (i, (name, _)) in checked.iter().enumerate() {
        if checked[..i].iter().any(|(other, _)| other == name) {
            return Err(format!(
                "field \"headers\": {name} is given twice (header names ignore case)"
            ));
        }
    }
    Ok(checked)
}

/// One header, checked: a valid name that fire does not set itself, a value a header can
/// carry (marked sensitive when the name looks secret). The error starts with the name.
fn checked(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), String> {
    let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        format!("{name:?}: not a valid header name (letters, digits and -_.!#$%&'*+^`|~ only)")
    })?;
    if FIRES_OWN.contains(&header.as_str()) {
        return Err(format!(
            "{name}: fire sets this header itself on every request; it cannot be replaced"
        ));
    }
    let mut value = HeaderValue::from_str(value).map_err(|_| {
        format!("{name}: the value holds characters a header cannot carry (control characters or non-ASCII)")
    })?;
    value.set_sensitive(is_secret(name));
    Ok((header, value))
}

/// The extra headers of every request (models list included): the `-H` headers in order, and
/// `Authorization: Bearer KEY` for `--api-key` unless a `-H Authorization` replaces it.
pub fn request_headers(args: &[String], api_key: Option<&str>) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for text in args {
        let (name, value) = parse(text)?;
        map.append(name, value);
    }
    if let Some(key) = api_key {
        if !map.contains_key(AUTHORIZATION) {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                "--api-key: the key holds characters a header cannot carry".to_string()
            })?;
            value.set_sensitive(true);
            map.insert(AUTHORIZATION, value);
        }
    }
    Ok(map)
}

/// One `-H` argument as fire records it: the value replaced by [`REDACTED`] when the name looks
/// secret (or when there is no name to judge by).
pub fn redact_arg(text: &str) -> String {
    match text.split_once(':') {
        Some((name, _)) if is_secret(name) => format!("{}: {REDACTED}", name.trim()),
        Some(_) => text.to_string(),
        None => REDACTED.to_string(),
    }
}

/// The command line as recorded: the values of `--api-key` and of secret `-H` headers replaced,
/// in every form clap accepts (`--api-key K`, `--api-key=K`, `-H V`, `-HV`, `-H=V`,
/// `--header V`, `--header=V`).
pub fn redact_argv(argv: Vec<String>) -> Vec<String> {
    #[derive(Clone, Copy)]
    enum Next {
        Plain,
        Key,
        Header,
    }
    let mut next = Next::Plain;
    let mut out = Vec::with_capacity(argv.len());
    let mut options_ended = false;
    for a in argv {
        let recorded = match next {
            Next::Key => REDACTED.to_string(),
            Next::Header => redact_arg(&a),
            Next::Plain if options_ended => a,
            Next::Plain => {
                if a == "--" {
                    options_ended = true;
                    a
                } else if a == "--api-key" {
                    next = Next::Key;
                    out.push(a);
                    continue;
                } else if a == "-H" || a == "--header" {
                    next = Next::Header;
                    out.push(a);
                    continue;
                } else if a.starts_with("--api-key=") {
                    format!("--api-key={REDACTED}")
                } else if let Some(v) = a.strip_prefix("--header=") {
                    format!("--header={}", redact_arg(v))
                } else if let Some(v) = a.strip_prefix("-H") {
                    let v = v.strip_prefix('=').unwrap_or(v);
                    format!("-H{}", redact_arg(v))
                } else {
                    a
                }
            }
        };
        next = Next::Plain;
        out.push(recorded);
    }
    out
}

/// The `-H` headers for the output header's params: name to value, secret values redacted.
pub fn recorded(args: &[String]) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    for text in args {
        if let Some((name, value)) = text.split_once(':') {
            let name = name.trim();
            let shown = if is_secret(name) {
                REDACTED
            } else {
                value.trim()
            };
            map.insert(name.to_string(), shown.into());
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn headers_parse_and_refuse_clearly() {
        let (n, v) = parse("X-Tenant:  blue ").unwrap();
        assert_eq!((n.as_str(), v.to_str().unwrap()), ("x-tenant", "blue"));
        assert!(!v.is_sensitive());
        assert!(parse("Authorization: Bearer sk-1")
            .unwrap()
            .1
            .is_sensitive());
        for (bad, says) in [
            ("Authorization Bearer sk-1", "without a colon"),
            (": x", "not a valid header name"),
            ("Bad Name: x", "not a valid header name"),
            ("x-request-id: 1", "itself"),
            ("Content-Length: 3", "itself"),
            ("X-Api-Key: a\u{7}b", "cannot carry"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("sk-1") && !e.contains("a\u{7}b"), "{e}");
        }
    }

    #[test]
    fn an_authorization_header_replaces_the_api_key() {
        let m = request_headers(&strings(&["X-A: 1"]), Some("sk-1")).unwrap();
        assert_eq!(m[AUTHORIZATION], "Bearer sk-1");
        assert!(m[AUTHORIZATION].is_sensitive());
        let m = request_headers(&strings(&["authorization: Basic x"]), Some("sk-1")).unwrap();
        assert_eq!(m.get_all(AUTHORIZATION).iter().count(), 1);
        assert_eq!(m[AUTHORIZATION], "Basic x");
    }

    #[test]
    fn secrets_never_reach_the_recorded_argv() {
        let argv = redact_argv(strings(&[
            "fire",
            "--api-key",
            "sk-1",
            "--api-key=sk-2",
            "-H",
            "Authorization: Bearer sk-3",
            "-HX-Api-Key: sk-4",
            "-H=Cookie: sk-5",
            "--header",
            "X-Auth-Token: sk-6",
            "--header=Proxy-Authorization: sk-7",
            "-H",
            "no colon sk-8",
            "-H",
            "X-Tenant: blue",
            "--url",
            "http://x/v1",
        ]));
        let joined = argv.join(" ");
        assert!(!joined.contains("sk-"), "{joined}");
        assert!(joined.contains("X-Tenant: blue"), "{joined}");
        assert!(joined.contains("-H Authorization: ***"), "{joined}");
        assert!(joined.ends_with("--url http://x/v1"), "{joined}");
        let params = recorded(&strings(&["Authorization: Bearer sk-9", "X-Tenant: blue"]));
        assert_eq!(params["Authorization"], REDACTED);
        assert_eq!(params["X-Tenant"], "blue");
    }

    #[test]
    fn a_schedule_header_named_twice_is_refused() {
        let mut h = BTreeMap::new();
        h.insert("X-Tokenpipe-Fault".to_string(), "reset".to_string());
        assert_eq!(per_request(&h).map(|v| v.len()), Ok(1));
        h.insert("x-tokenpipe-fault".to_string(), "none".to_string());
        let e = per_request(&h).unwrap_err();
        assert!(e.contains("given twice"), "{e}");
    }
}
