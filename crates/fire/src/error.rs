//! What can end a run of `fire` other than success, in its own words, and which exit status each
//! means. A bad setting or schedule fails before anything is sent; a server that cannot be used
//! fails the run; a signal ends it after everything measured was written.
//! [`ToolError::ending`] below is the one place that decides which is which.
//!
//! A failed request is not an error here: it is a `done` record with its kind (`failure`).

use crate::api::BodyError;
use std::io;
use std::path::PathBuf;
use tokenpipe_cli::{Ending, OpenError, ToolError};
use tokenpipe_format::ReadError;

/// Why a run of `fire` failed, or how it was stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting cannot be used as given, or settings contradict each other: a URL without
    /// http(s)://, a `--temperature` below zero, a `-H` without a colon, an `--extra-body` that
    /// is no object, a `--save` that names the schedule. The message names the flag.
    #[error("{0}")]
    Flag(String),
    /// A URL setting (`--url`, `--endpoint`, `--server-metrics`) that does not parse.
    #[error("{flag} {value}")]
    Url {
        /// The flag, as the user knows it.
        flag: &'static str,
        /// The URL as it was put together.
        value: String,
        /// Why it does not parse.
        source: hyper::http::uri::InvalidUri,
    },
    /// `--extra-body` is not JSON.
    #[error("--extra-body: not valid JSON")]
    ExtraBody(#[source] serde_json::Error),
    /// The `--save` file cannot be created.
    #[error("--save {}", path.display())]
    Save {
        /// The path as given.
        path: PathBuf,
        /// Why the system refused.
        source: io::Error,
    },
    /// The `--cacert` file cannot be used.
    #[error("--cacert {}", path.display())]
    CaFile {
        /// The path as given.
        path: PathBuf,
        /// What is wrong with it.
        source: CaFileError,
    },
    /// An https URL without `--cacert` on a system whose trusted roots cannot be found.
    #[error(
        "no trusted root certificates found on this system{}; give the server's CA with --cacert FILE",
        why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()
    )]
    NoSystemRoots {
        /// The first problem met looking for them, if any.
        why: Option<String>,
    },
    /// rustls refused its own default protocol versions: the build, not the input, is at fault.
    #[error("TLS settings")]
    Tls(#[source] rustls::Error),
    /// The schedule file cannot be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The schedule cannot be read: a line that is not a record, a newer format, another
    /// stage's stream, or a failed read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A schedule record fire cannot send as written: its loop mode, a missing offset or
    /// batch, an id given twice, a session's turns out of order, a header fire refuses.
    #[error("{input}: line {line}: {problem}")]
    Schedule {
        /// The schedule's name (`<stdin>` or the path).
        input: String,
        /// 1-based line of the record.
        line: usize,
        /// What is wrong, naming the field.
        problem: String,
    },
    /// A schedule request the API's dialect cannot encode.
    #[error("{input}: line {line}")]
    Body {
        /// The schedule's name (`<stdin>` or the path).
        input: String,
        /// 1-based line of the request.
        line: usize,
        /// Why the dialect cannot encode it.
        source: BodyError,
    },
    /// The model list could not be asked for at all (the server is down, or `--url` is wrong),
    /// so nothing was sent.
    #[error(
        "cannot connect to {url} (GET {models}: {why}); is the server up and --url right? Nothing was sent"
    )]
    Unreachable {
        /// `--url` as given, its password replaced by `***`.
        url: String,
        /// The model list's URL.
        models: String,
        /// The connection error.
        why: String,
    },
    /// A llama-benchy warm-up request before the first batch failed (llama-benchy stops too).
    #[error("the warm-up request to {uri} failed ({why}); --no-warmup --no-adapt-prompt skip it")]
    Warmup {
        /// Where it went.
        uri: String,
        /// What went wrong.
        why: String,
    },
    /// The tokenizer the schedule names, which the adapt step needs, cannot be loaded.
    #[error(
        "the schedule's tokenizer {}: {why}; run fire where that path is found, or give --no-adapt-prompt",
        path.display()
    )]
    Tokenizer {
        /// The path the schedule's header gives.
        path: PathBuf,
        /// Why it cannot be loaded.
        why: String,
    },
    /// The first requests to end all failed to connect, so the run stopped early.
    #[error(
        "stopped: the first {after} requests all failed to connect to {uri} ({first_error}); is the server up and --url right? (--keep-going runs every request anyway)"
    )]
    EarlyStop {
        /// How many requests failed to connect before the stop.
        after: u64,
        /// Where the requests went.
        uri: String,
        /// The first connection error, or "no connection".
        first_error: String,
    },
    /// The server went away mid-run: requests failed to connect since the last success (and,
    /// with `--retry-connect`, no connection opened within its limit), so the run stopped.
    #[error("{}", server_gone(*failed, *succeeded, uri, first_error, *waited))]
    ServerGone {
        /// Requests that failed to connect since the last success.
        failed: u64,
        /// Requests that succeeded in the run.
        succeeded: u64,
        /// Where the requests went.
        uri: String,
        /// The first of those connection errors, or "no connection".
        first_error: String,
        /// How long `--retry-connect` waited for a connection, when it was on.
        waited: Option<std::time::Duration>,
    },
    /// Requests were sent and none succeeded.
    #[error(
        "none of the {ended} requests sent succeeded{}",
        if got.is_empty() { String::new() } else { format!(": {got}") }
    )]
    NoneSucceeded {
        /// The requests that ended as a success or a failure of the server or the network.
        ended: u64,
        /// What they got, the most common first (`3 × HTTP 404 Not Found`).
        got: String,
    },
    /// A signal (or an unreachable server) stopped the run after everything measured was
    /// written.
    #[error("{message}")]
    Stopped {
        /// How the stop ends the process.
        ending: Ending,
        /// What the run did before it ended.
        message: &'static str,
    },
    /// A signal came before the schedule's head was read: nothing was sent.
    #[error("stopped before a schedule was read; nothing was sent")]
    StoppedBeforeSchedule {
        /// How the stop ends the process.
        ending: Ending,
    },
    /// A thread the run needs could not be started.
    #[error("starting the {what}")]
    Thread {
        /// Which thread, in words.
        what: &'static str,
        /// Why the system refused.
        source: io::Error,
    },
    /// The dispatcher thread panicked: a bug in fire, not in the input.
    #[error("dispatcher thread panicked")]
    DispatcherPanicked,
    /// Any other I/O: stdin cannot be taken, the network runtime cannot be built, the
    /// output cannot be written. A closed stdout (`fire --generate man | head`) is the
    /// io::Error's own `Ending::ClosedPipe`.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The message of [`Error::ServerGone`].
fn server_gone(
    failed: u64,
    succeeded: u64,
    uri: &str,
    first_error: &str,
    waited: Option<std::time::Duration>,
) -> String {
    let since = if succeeded == 0 {
        "with none succeeding".to_string()
    } else {
        format!("since the last of {succeeded} successes")
    };
    let row =
        format!("stopped: {failed} requests failed to connect to {uri} {since} ({first_error})");
    match waited {
        Some(w) => format!(
            "{row}, and no connection opened within {} s (--retry-connect); the server did not come back",
            w.as_secs_f64()
        ),
        None => format!(
            "{row}; the server went away (--retry-connect waits for it to come back, --keep-going runs every request anyway)"
        ),
    }
}

/// What is wrong with a `--cacert` file.
#[derive(Debug, thiserror::Error)]
pub enum CaFileError {
    /// It cannot be read, or is not PEM.
    #[error(transparent)]
    Pem(#[from] rustls::pki_types::pem::Error),
    /// rustls refuses one of its certificates.
    #[error("certificate {index}")]
    Certificate {
        /// 1-based place of the certificate in the file.
        index: usize,
        /// Why rustls refuses it.
        source: rustls::Error,
    },
    /// It holds no certificate at all.
    #[error("no PEM certificate (BEGIN CERTIFICATE) in the file")]
    Empty,
}

impl ToolError for Error {
    fn ending(&self) -> Ending {
        match self {
            Error::Flag(_)
            | Error::Url { .. }
            | Error::ExtraBody(_)
            | Error::Save { .. }
            | Error::CaFile { .. }
            | Error::NoSystemRoots { .. }
            | Error::Schedule { .. }
            | Error::Tokenizer { .. }
            | Error::Body { .. } => Ending::BadInput,
            Error::Open(e) => e.ending(),
            Error::Read(e) => e.ending(),
            Error::Tls(_)
            | Error::Unreachable { .. }
            | Error::Warmup { .. }
            | Error::EarlyStop { .. }
            | Error::ServerGone { .. }
            | Error::NoneSucceeded { .. }
            | Error::Thread { .. }
            | Error::DispatcherPanicked => Ending::Failure,
            Error::Io(e) => e.ending(),
            Error::Stopped { ending, .. } | Error::StoppedBeforeSchedule { ending } => *ending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_ends_as_its_kind() {
        let flag = Error::Flag("--url x: expected an http:// or https:// URL".into());
        assert_eq!(flag.ending(), Ending::BadInput);
        let schedule = Error::Schedule {
            input: "<stdin>".into(),
            line: 3,
            problem: "field \"id\": request 1 appears twice".into(),
        };
        assert_eq!(schedule.ending(), Ending::BadInput);
        let unreachable = Error::Unreachable {
            url: "http://h/v1".into(),
            models: "http://h/v1/models".into(),
            why: "connection refused".into(),
        };
        assert_eq!(unreachable.ending(), Ending::Failure);
        let none = Error::NoneSucceeded {
            ended: 3,
            got: "3 × HTTP 404 Not Found".into(),
        };
        assert_eq!(none.ending(), Ending::Failure);
        assert_eq!(
            none.to_string(),
            "none of the 3 requests sent succeeded: 3 × HTTP 404 Not Found"
        );
        let warmup = Error::Warmup {
            uri: "http://h/v1/chat/completions".into(),
            why: "HTTP 500".into(),
        };
        assert_eq!(warmup.ending(), Ending::Failure);
        let tokenizer = Error::Tokenizer {
            path: "t.json".into(),
            why: "No such file".into(),
        };
        assert_eq!(tokenizer.ending(), Ending::BadInput);
        assert!(tokenizer
            .to_string()
            .starts_with("the schedule's tokenizer t.json: No such file;"));
        let stopped = Error::StoppedBeforeSchedule {
            ending: Ending::Terminated,
        };
        assert_eq!(stopped.ending(), Ending::Terminated);
        let missing =
            tokenpipe_cli::open_file(std::path::Path::new("/nonexistent/schedule.ndjson"))
                .unwrap_err();
        assert_eq!(Error::from(missing).ending(), Ending::BadInput);
    }

    #[test]
    fn messages_name_the_setting_then_the_cause() {
        let bad = "http://exa mple/v1".parse::<hyper::Uri>().unwrap_err();
        let e = Error::Url {
            flag: "--url",
            value: "http://exa mple/v1".into(),
            source: bad,
        };
        assert!(tokenpipe_cli::message(&e).starts_with("--url http://exa mple/v1: "));
        let e = Error::CaFile {
            path: "ca.pem".into(),
            source: CaFileError::Empty,
        };
        assert_eq!(
            tokenpipe_cli::message(&e),
            "--cacert ca.pem: no PEM certificate (BEGIN CERTIFICATE) in the file"
        );
        assert_eq!(e.ending(), Ending::BadInput);
    }
}
