//! The faults that leave an answer well formed but change its shape: a pause mid-stream
//! (`stall=MS`), a late response head (`slow-headers=MS`), an answer that never ends
//! (`endless`), one far longer than asked (`long=N`), and one the server's `/metrics` never
//! counts (`uncounted`).
//!
//! They are carried out by the server before the answer starts, by changing what the answer is
//! (its length, its head's delay, its timetable), so the stream body knows nothing of them.

use super::{Fault, FaultKind};
use crate::api::GenerationRequest;
use std::time::Duration;

/// The tokens an `endless` answer is admitted with: 2^32 − 1, more than a week of tokens even
/// at 1 ms apart, so that only the client ends it. The engine sees a request that keeps
/// generating, which is what a runaway generation is.
pub const ENDLESS_TOKENS: u64 = u32::MAX as u64;

/// How a reshaping fault changes an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reshape {
    /// How long the response head is held back (`slow-headers=MS`).
    pub headers_delay: Duration,
    /// Tokens after the first `.0` are due `.1` later than the engine says (`stall=MS`).
    pub pause: Option<(u64, Duration)>,
    /// The answer's length instead of `max_tokens` (`long=N`, `endless`).
    pub tokens: Option<u64>,
    /// The answer never ends (`endless`): not streamed, it is never sent.
    pub endless: bool,
    /// The request is answered as asked but left out of `/metrics` (`uncounted`).
    pub uncounted: bool,
}

impl Reshape {
    /// Gives the request the length this fault answers with.
    pub fn apply_to(&self, req: &mut GenerationRequest) {
        if let Some(tokens) = self.tokens {
            req.max_tokens = tokens;
        }
    }

    /// Holds the response head back as `slow-headers=MS` asks; the tokens' deadlines stay
    /// where they were, so those due meanwhile leave together once the head is out.
    pub async fn hold_head(&self) {
        if !self.headers_delay.is_zero() {
            tokio::time::sleep(self.headers_delay).await;
        }
    }
}

impl Fault {
    /// How this fault reshapes the answer; `None` for the kinds that break it.
    pub fn reshape(&self) -> Option<Reshape> {
        let none = Reshape::default();
        Some(match self.kind {
            FaultKind::StallFor(ms) => Reshape {
                pause: Some((self.after, Duration::from_millis(ms))),
                ..none
            },
            FaultKind::SlowHeaders(ms) => Reshape {
                headers_delay: Duration::from_millis(ms),
                ..none
            },
            FaultKind::Endless => Reshape {
                tokens: Some(ENDLESS_TOKENS),
                endless: true,
                ..none
            },
            FaultKind::Long(n) => Reshape {
                tokens: Some(n),
                ..none
            },
            FaultKind::Uncounted => Reshape {
                uncounted: true,
                ..none
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_shape_kinds_reshape() {
        let fault = |kind| Fault { kind, after: 3 };
        assert_eq!(
            fault(FaultKind::StallFor(250)).reshape(),
            Some(Reshape {
                pause: Some((3, Duration::from_millis(250))),
                ..Reshape::default()
            })
        );
        assert_eq!(
            fault(FaultKind::SlowHeaders(40))
                .reshape()
                .map(|r| r.headers_delay),
            Some(Duration::from_millis(40))
        );
        let endless = fault(FaultKind::Endless).reshape().unwrap();
        assert!(endless.endless);
        assert_eq!(endless.tokens, Some(ENDLESS_TOKENS));
        assert_eq!(
            fault(FaultKind::Long(10_000)).reshape().map(|r| r.tokens),
            Some(Some(10_000))
        );
        assert_eq!(
            fault(FaultKind::Uncounted).reshape(),
            Some(Reshape {
                uncounted: true,
                ..Reshape::default()
            })
        );
        for kind in [
            FaultKind::Stall,
            FaultKind::Reset,
            FaultKind::Http(429),
            FaultKind::Garbage,
            FaultKind::Json,
        ] {
            assert_eq!(fault(kind).reshape(), None, "{kind}");
        }
    }
}
