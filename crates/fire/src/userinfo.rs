//! Credentials in a URL (`http://user:pass@host/v1`): taken out of the URL before it is used,
//! sent as HTTP Basic auth to that URL's host only, and replaced by `***` wherever fire writes
//! the URL (argv, params, messages, records), the way the API key is kept out.

use crate::headers::REDACTED;
use base64::Engine;
use hyper::header::{HeaderMap, HeaderValue, AUTHORIZATION};

/// A URL without its credentials, and the `Authorization: Basic …` value they make.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// The URL with `user[:pass]@` taken out, so that `Host` is `host[:port]` only.
    pub url: String,
    /// `Basic base64(user:pass)` (sensitive) when the URL held credentials.
    pub basic: Option<HeaderValue>,
}

/// Where the userinfo of the URL that starts at `text`'s `://` lies: the byte range of
/// `user[:pass]` (without the `@`), if any.
fn userinfo_at(text: &str, after_scheme: usize) -> Option<(usize, usize)> {
    let rest = &text[after_scheme..];
    let authority_len = rest
        .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
        .unwrap_or(rest.len());
    let at = rest[..authority_len].rfind('@')?;
    Some((after_scheme, after_scheme + at))
}

/// Takes the credentials out of `url`; `flag` names it in the error. The user and password may
/// be percent-encoded (`p%40ss` for `p@ss`).
pub fn split(flag: &str, url: &str) -> Result<Split, String> {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return Ok(Split {
            url: url.to_string(),
            basic: None,
        });
    };
    let Some((start, end)) = userinfo_at(url, scheme_end) else {
        return Ok(Split {
            url: url.to_string(),
            basic: None,
        });
    };
    let info = &url[start..end];
    let (user, pass) = info.split_once(':').unwrap_or((info, ""));
    let decode = |part: &str| {
        percent_decode(part).ok_or_else(|| {
            format!(
                "{flag} {}: the user or password in the URL is not valid percent-encoded UTF-8",
                redact(url)
            )
        })
    };
    let pair = format!("{}:{}", decode(user)?, decode(pass)?);
    let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
    let mut basic = HeaderValue::from_str(&format!("Basic {encoded}"))
        .map_err(|_| format!("{flag}: the credentials in the URL cannot be sent"))?;
    basic.set_sensitive(true);
    Ok(Split {
        url: format!("{}{}", &url[..start], &url[end + 1..]),
        basic: Some(basic),
    })
}

/// `text` with the credentials of every URL in it replaced: `http://alice:***@host/v1`, and
/// `http://***@host/v1` for a user without a password (which may be a token).
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let after_scheme = from + found + 3;
        out.push_str(&text[from..after_scheme]);
        from = after_scheme;
        if let Some((start, end)) = userinfo_at(text, after_scheme) {
            match text[start..end].split_once(':') {
                Some((user, _)) => out.push_str(&format!("{user}:{REDACTED}")),
                None => out.push_str(REDACTED),
            }
            from = end;
        }
    }
    out.push_str(&text[from..]);
    out
}

/// The extra headers of requests to one host: the `-H` headers, then `basic` (that host's URL
/// credentials) as `Authorization`, else `--api-key`'s bearer token. An `-H Authorization`
/// wins over both; the URL's credentials win over the key.
pub fn request_headers(
    args: &[String],
    api_key: Option<&str>,
    basic: Option<HeaderValue>,
) -> Result<HeaderMap, String> {
    let mut map = crate::headers::request_headers(args, None)?;
    match basic {
        Some(b) if !map.contains_key(AUTHORIZATION) => {
            map.insert(AUTHORIZATION, b);
            Ok(map)
        }
        _ => crate::headers::request_headers(args, api_key),
    }
}

/// Decodes `%XX` escapes; `None` when one is malformed or the bytes are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_become_basic_auth_and_leave_the_url() {
        let s = split("--url", "http://alice:pw@host:8000/v1").unwrap();
        assert_eq!(s.url, "http://host:8000/v1");
        let basic = s.basic.unwrap();
        assert_eq!(basic, "Basic YWxpY2U6cHc="); // base64("alice:pw")
        assert!(basic.is_sensitive());
        let s = split("--url", "https://u:p%40ss@h/v1?x=a@b").unwrap();
        assert_eq!(s.url, "https://h/v1?x=a@b");
        assert_eq!(s.basic.unwrap(), "Basic dTpwQHNz"); // base64("u:p@ss")
        let s = split("--url", "http://h:1/v1").unwrap();
        assert_eq!((s.url.as_str(), s.basic), ("http://h:1/v1", None));
        let e = split("--url", "http://u:p%zz@h/v1").unwrap_err();
        assert!(e.contains("percent-encoded") && !e.contains("p%zz"), "{e}");
    }

    #[test]
    fn an_explicit_header_beats_the_url_which_beats_the_key() {
        let basic = || split("--url", "http://a:b@h/v1").unwrap().basic;
        let m = request_headers(&[], Some("sk-1"), basic()).unwrap();
        assert_eq!(m[AUTHORIZATION], "Basic YTpi"); // base64("a:b")
        let m = request_headers(&["Authorization: Bearer t".into()], Some("sk-1"), basic());
        assert_eq!(m.unwrap()[AUTHORIZATION], "Bearer t");
        let m = request_headers(&[], Some("sk-1"), None).unwrap();
        assert_eq!(m[AUTHORIZATION], "Bearer sk-1");
    }

    #[test]
    fn redaction_keeps_the_user_and_hides_the_password() {
        assert_eq!(
            redact("http://alice:pw@host/v1"),
            "http://alice:***@host/v1"
        );
        assert_eq!(
            redact("--url=http://alice:pw@h/v1 and https://tok@g:2/m?a=b@c"),
            "--url=http://alice:***@h/v1 and https://***@g:2/m?a=b@c"
        );
        assert_eq!(redact("http://h/v1"), "http://h/v1");
        assert_eq!(redact("no url"), "no url");
    }

    #[test]
    fn url_credentials_go_only_to_their_host() {
        let auth = |c: &crate::config::Config| {
            let (generate, models) = c.request_headers().unwrap();
            let get = |m: &HeaderMap| m.get(AUTHORIZATION).cloned();
            (get(&generate), get(&models))
        };
        let alice = Some(HeaderValue::from_static("Basic YTpw")); // "a:p"
        let mut c = crate::config::Config::new("http://a:p@h:1/v1");
        assert_eq!(
            c.endpoints().unwrap().0.to_string(),
            "http://h:1/v1/completions"
        );
        assert_eq!(auth(&c), (alice.clone(), alice.clone()));
        c.endpoint = Some("/gw".into());
        assert_eq!(auth(&c), (alice.clone(), alice.clone()));
        c.endpoint = Some("http://other:2/x".into());
        assert_eq!(auth(&c), (None, alice.clone()));
        c.endpoint = Some("http://b:q@other:2/x".into());
        assert_eq!(c.endpoints().unwrap().0.to_string(), "http://other:2/x");
        let bob = Some(HeaderValue::from_static("Basic Yjpx")); // "b:q"
        assert_eq!(auth(&c), (bob, alice));
    }
}
