//! fire's transport flags (`--cacert`, `--insecure`, `--http2`, `--connections`,
//! `--preconnect`), their checks, and what of them the output header records.

use super::{Options, Trust};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How fire connects to the server.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Transport")]
pub struct TransportArgs {
    /// Trust only the CA certificates in FILE (PEM) for an https:// URL, instead of the system's
    /// (as curl's --cacert).
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub cacert: Option<PathBuf>,

    /// Accept any certificate over https (a self-signed test server); prints a warning.
    #[arg(long)]
    pub insecure: bool,

    /// Speak HTTP/2 only: h2c with prior knowledge for http://, ALPN h2 for https://. Requests
    /// are multiplexed on --connections connections. Without it, fire speaks HTTP/1.1, one
    /// connection per request in flight.
    #[arg(long)]
    pub http2: bool,

    /// HTTP/2 connections to spread requests over, in turn (a server's limit on streams per
    /// connection, often 100 to 250, makes requests beyond it wait inside the client).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "http2",
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub connections: u32,

    /// Open the connections before the run's clock starts (as many as can be in flight, or
    /// --connections with --http2), so the first wave of requests does not wait on connects
    /// [default: on for closed loops, off for open loops].
    #[arg(long, overrides_with = "no_preconnect")]
    pub preconnect: bool,

    /// Do not pre-open connections: the first requests connect as they are sent.
    #[arg(long, overrides_with = "preconnect")]
    pub no_preconnect: bool,
}

impl TransportArgs {
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
    pub fn preconnect(&self, closed: bool, in_flight: Option<u64>) -> Option<usize> {
        let wanted = self.preconnect || (closed && !self.no_preconnect);
        if !wanted {
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

    /// Warnings the flags call for, said once before the run.
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

    fn args(flags: &[&str]) -> TransportArgs {
        #[derive(clap::Parser)]
        struct Wrap {
            #[command(flatten)]
            t: TransportArgs,
        }
        let mut argv = vec!["fire"];
        argv.extend_from_slice(flags);
        <Wrap as clap::Parser>::try_parse_from(argv)
            .map(|w| w.t)
            .unwrap()
    }

    #[test]
    fn preconnect_defaults_to_closed_loops() {
        assert_eq!(args(&[]).preconnect(true, Some(8)), Some(8));
        assert_eq!(args(&[]).preconnect(false, Some(8)), None);
        assert_eq!(args(&["--preconnect"]).preconnect(false, Some(8)), Some(8));
        assert_eq!(args(&["--no-preconnect"]).preconnect(true, Some(8)), None);
        assert_eq!(args(&["--preconnect"]).preconnect(false, None), None);
        let h2 = args(&["--http2", "--connections", "3"]);
        assert_eq!(h2.preconnect(true, Some(1000)), Some(3));
    }

    #[test]
    fn the_pool_is_sized_to_what_can_be_in_flight() {
        assert_eq!(args(&[]).options(false, Some(16)).max_idle, 16);
        assert_eq!(args(&[]).options(false, None).max_idle, usize::MAX);
        assert_eq!(
            args(&["--insecure"]).options(true, None).trust,
            Trust::Insecure
        );
    }
}
