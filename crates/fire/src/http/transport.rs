//! How fire is to connect, as plain values (`cli` fills them from `--cacert`, `--insecure`,
//! `--http2`, `--connections`, `--preconnect`): the client's options they make, the warnings
//! they call for, and what of them the output header records.

use super::{Options, Trust};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How fire connects to the server: one value for the run, so that the client, the pre-connect
/// and the header agree on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transport {
    /// Trust only the CA certificates in this PEM file over https, instead of the system's.
    pub cacert: Option<PathBuf>,
    /// Accept any certificate over https (a self-signed test server).
    pub insecure: bool,
    /// Speak HTTP/2 only (h2c with prior knowledge for http://, ALPN h2 for https://).
    pub http2: bool,
    /// HTTP/2 connections to spread requests over, in turn.
    pub connections: u32,
    /// Whether to open connections before the clock starts; `None` leaves it to the loop
    /// (on for a closed loop, off for an open one).
    pub preconnect: Option<bool>,
}

impl Default for Transport {
    fn default() -> Self {
        Self {
            cacert: None,
            insecure: false,
            http2: false,
            connections: 1,
            preconnect: None,
        }
    }
}

impl Transport {
    /// The client's options for a run that keeps at most `in_flight` requests in flight
    /// (`None`: an open loop without a cap).
    pub fn options(&self, https: bool, in_flight: Option<u64>) -> Options {
        let trust = if self.insecure {
            Trust::Insecure
        } else if let Some(file) = &self.cacert {
            Trust::CaFile(file.clone())
        } else {
            Trust::System
        };
        Options {
            trust,
            http2: self.http2,
            connections: usize::try_from(self.connections).unwrap_or(1),
            max_idle: in_flight
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(usize::MAX),
            https,
            connect_timeout: None,
        }
    }

    /// How many connections to open before the run, if any: on by default for a closed loop
    /// (`closed`), whose first wave is `in_flight` requests sent at once; an open loop's
    /// requests arrive spread out, and connections opened long before use would meet the
    /// server's idle timeout (a few seconds on some servers). Needs a bound on requests in
    /// flight; without one it is refused with a warning.
    pub fn to_preconnect(&self, closed: bool, in_flight: Option<u64>) -> Option<usize> {
        if !self.preconnect.unwrap_or(closed) {
            return None;
        }
        if self.http2 {
            return usize::try_from(self.connections).ok();
        }
        match in_flight.and_then(|n| usize::try_from(n).ok()) {
            Some(n) => Some(n),
            None => {
                eprintln!(
                    "fire: warning: --preconnect needs a bound on requests in flight (a closed loop, or an open loop with max_concurrency); connecting as requests go"
                );
                None
            }
        }
    }

    /// Warnings the settings call for, said once before the run.
    pub fn warn(&self, https: bool) {
        if self.insecure {
            eprintln!(
                "fire: warning: --insecure: the server's certificate is not checked; use it only with a test server you run"
            );
        }
        if !https && (self.insecure || self.cacert.is_some()) {
            eprintln!("fire: warning: --cacert and --insecure apply to https:// URLs; this one is http://");
        }
    }

    /// The header's `transport` parameter: protocol, trust, connections, pre-connect.
    pub fn record(&self, params: &mut BTreeMap<String, serde_json::Value>, opened_before: u64) {
        let trust = self.options(false, None).trust;
        params.insert(
            "transport".into(),
            serde_json::json!({
                "http": if self.http2 { "2" } else { "1.1" },
                "connections": self.http2.then_some(self.connections),
                "trust": trust.name(),
                "preconnected": opened_before,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(preconnect: Option<bool>) -> Transport {
        Transport {
            preconnect,
            ..Transport::default()
        }
    }

    #[test]
    fn preconnect_defaults_to_closed_loops() {
        assert_eq!(with(None).to_preconnect(true, Some(8)), Some(8));
        assert_eq!(with(None).to_preconnect(false, Some(8)), None);
        assert_eq!(with(Some(true)).to_preconnect(false, Some(8)), Some(8));
        assert_eq!(with(Some(false)).to_preconnect(true, Some(8)), None);
        assert_eq!(with(Some(true)).to_preconnect(false, None), None);
        let h2 = Transport {
            http2: true,
            connections: 3,
            ..Transport::default()
        };
        assert_eq!(h2.to_preconnect(true, Some(1000)), Some(3));
    }

    #[test]
    fn the_pool_is_sized_to_what_can_be_in_flight() {
        assert_eq!(Transport::default().options(false, Some(16)).max_idle, 16);
        assert_eq!(
            Transport::default().options(false, None).max_idle,
            usize::MAX
        );
        let insecure = Transport {
            insecure: true,
            ..Transport::default()
        };
        assert_eq!(insecure.options(true, None).trust, Trust::Insecure);
    }
}
