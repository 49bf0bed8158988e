//! Who may use the server and how soon it answers: the `--api-key` check (OpenAI's 401 for a
//! missing or wrong bearer token) and the `--headers-delay-ms` wait before a generation answer's
//! response head, so that clients can be tested against a server that requires a key or that is
//! slow to answer at all.

use hyper::header::{HeaderMap, AUTHORIZATION};
use std::time::Duration;

/// The access settings of a server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Access {
    /// The bearer token every `/v1` request must carry, when one is required.
    pub api_key: Option<String>,
    /// How long a generation answer's status and headers are held back.
    pub headers_delay: Duration,
}

/// The message of the 401 answer, in OpenAI's words (without echoing what was sent).
pub const UNAUTHORIZED_MESSAGE: &str =
    "Incorrect API key provided. Send the server's key as `Authorization: Bearer KEY`.";

impl Access {
    /// True when the request may be served: no key is required, or it carries
    /// `Authorization: Bearer KEY` with the right key.
    pub fn allows(&self, headers: &HeaderMap) -> bool {
        let Some(key) = &self.api_key else {
            return true;
        };
        headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|given| given.trim() == key)
    }

    /// Holds a generation answer's response head back for `--headers-delay-ms`.
    pub async fn delay_headers(&self) {
        if !self.headers_delay.is_zero() {
            tokio::time::sleep(self.headers_delay).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn only_the_right_bearer_token_passes() {
        let open = Access::default();
        let mut headers = HeaderMap::new();
        assert!(open.allows(&headers));
        let locked = Access {
            api_key: Some("sk-test".into()),
            ..Access::default()
        };
        assert!(!locked.allows(&headers));
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer sk-wrong"));
        assert!(!locked.allows(&headers));
        headers.insert(AUTHORIZATION, HeaderValue::from_static("sk-test"));
        assert!(!locked.allows(&headers));
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer sk-test"));
        assert!(locked.allows(&headers));
    }
}
