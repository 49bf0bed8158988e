//! The transport flags (`--cacert`, `--insecure`, `--http2`, `--connections`,
//! `--preconnect`), under their own heading of the help, and the plain [`Transport`] they make.

use crate::http::Transport;
use std::path::PathBuf;

/// How fire connects to the server.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Transport")]
pub(super) struct TransportArgs {
    /// Trust only the CA certificates in FILE (PEM) for an https:// URL, instead of the system's
    /// (as curl's --cacert).
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    cacert: Option<PathBuf>,

    /// Accept any certificate over https (a self-signed test server); prints a warning.
    #[arg(long)]
    insecure: bool,

    /// Speak HTTP/2 only: h2c with prior knowledge for http://, ALPN h2 for https://. Requests
    /// are multiplexed on --connections connections. Without it, fire speaks HTTP/1.1, one
    /// connection per request in flight.
    #[arg(long)]
    http2: bool,

    /// HTTP/2 connections to spread requests over, in turn (a server's limit on streams per
    /// connection, often 100 to 250, makes requests beyond it wait inside the client).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "http2",
          value_parser = clap::value_parser!(u32).range(1..=65_536))]
    connections: u32,

    /// Open the connections before the run's clock starts (as many as can be in flight, or
    /// --connections with --http2), so the first wave of requests does not wait on connects
    /// [default: on for closed loops, off for open loops].
    #[arg(long, overrides_with = "no_preconnect")]
    preconnect: bool,

    /// Do not pre-open connections: the first requests connect as they are sent.
    #[arg(long, overrides_with = "preconnect")]
    no_preconnect: bool,
}

impl From<TransportArgs> for Transport {
    fn from(args: TransportArgs) -> Self {
        // `overrides_with` leaves at most one of the pair set: the one given last.
        let preconnect = if args.preconnect {
            Some(true)
        } else if args.no_preconnect {
            Some(false)
        } else {
            None
        };
        Transport {
            cacert: args.cacert,
            insecure: args.insecure,
            http2: args.http2,
            connections: args.connections,
            preconnect,
        }
    }
}
