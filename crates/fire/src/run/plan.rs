//! The first step of a run: what it is to do, worked out from the flags and the head of the
//! schedule. Every bad flag, and an input that is not a schedule, fails here, before a
//! connection is opened or a byte is written. Ctrl-C counts from here on: the signal thread
//! starts before the schedule is read, since reading it may wait on an upstream `arrivals`.

use crate::api::{Api, BodyOptions};
use crate::config::Config;
use crate::dispatch::{self, Policy};
use crate::error::Error;
use crate::input;
use crate::job::credit::Gate;
use crate::signals::{self, LastResort};
use crate::stop::{Stop, StopReason};
use hyper::header::HeaderMap;
use hyper::Uri;
use std::fs::File;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use tokenpipe_format::{Header, LoopMode, ReadError, Record, RecordReader, RecordType, Salt};

/// The schedule's reader, for the records after its head.
pub(super) type ScheduleReader = RecordReader<Box<dyn BufRead + Send>>;

/// What a run is to do, before anything runs.
pub(super) struct Plan {
    /// The run's settings.
    pub config: Config,
    /// Where the requests go: `--url` with the API's path, or `--endpoint`.
    pub uri: Uri,
    /// Where model discovery asks: `{url}/models`.
    pub models_uri: Uri,
    /// Headers of every generation request (`-H`, credentials, `--api-key`).
    pub headers: HeaderMap,
    /// Headers of the model list's request and of a scrape on its host: the same, with the
    /// credentials of `--url` rather than of `--endpoint`.
    pub models_headers: HeaderMap,
    /// Body settings from the flags; the model joins them once it is known.
    pub body_options: BodyOptions,
    /// The run's stop signal, which Ctrl-C and SIGTERM already trigger.
    pub stop: Arc<Stop>,
    /// What a second signal flushes, armed once the output exists.
    pub last_resort: Arc<LastResort>,
    /// The `--save` file, opened, with its name.
    pub saved: Option<(String, File)>,
    /// What the schedule's head says, and the rest of it to read.
    pub schedule: Schedule,
}

/// A schedule whose head was read: how it is to be sent, and its reader for the rest.
pub(super) struct Schedule {
    /// The reader, past the records read ahead.
    pub reader: ScheduleReader,
    /// The schedule's header, which fire's own header chains.
    pub upstream: Header,
    /// The first `request`, when the schedule starts with one (it is not read again).
    pub first: Option<Record>,
    /// How requests leave, picked by the first record.
    pub policy: Box<dyn Policy>,
    /// The cache-busting salt the schedule asks for.
    pub salt: Option<Salt>,
    /// How many requests the schedule says it holds, for the progress view.
    pub requests: Option<u64>,
    /// The schedule's time bound (`duration_ns`).
    pub duration_ns: Option<u64>,
    /// The read-ahead gate, sized for the schedule (a batch may need more than the default).
    pub gate: Arc<Gate>,
    /// Whether it is a batch schedule, llama-benchy's mode.
    pub batch: bool,
    /// What the reader does to each request as it reads it (the adapt step), once known.
    pub rewrite: Option<crate::dispatch::feed::Rewrite>,
}

/// Works out the run's plan; `Err` is bad input, or a stop before the schedule's head came.
pub(super) fn plan(mut config: Config) -> Result<Plan, Error> {
    // Checked before the schedule is read, and again once the schedule has chosen the API.
    config.endpoints()?;
    let (headers, models_headers) = config.request_headers()?;
    if let Some(given) = &config.server_metrics {
        // Its credentials are checked now rather than after model discovery.
        crate::userinfo::split("--server-metrics", given).map_err(Error::Flag)?;
    }
    let body_options = config.body_options()?;
    let stop = Arc::new(Stop::default());
    let last_resort = signals::watch(stop.clone());
    let saved = save_file(&config)?;
    let schedule = Schedule::read(&config, &stop)?;
    // llama-benchy always calls the chat API: so does a batch schedule unless --api says, or
    // its prompts are token ids, which only completions takes.
    let token_ids = schedule.upstream.params.contains_key("token_ids");
    let api = match schedule.batch && !token_ids {
        true => Api::Chat,
        false => Api::Completions,
    };
    config.api = Some(config.api.unwrap_or(api));
    let (uri, models_uri) = config.endpoints()?;
    Ok(Plan {
        config,
        uri,
        models_uri,
        headers,
        models_headers,
        body_options,
        stop,
        last_resort,
        saved,
        schedule,
    })
}

impl Schedule {
    /// Opens the schedule (FILE or stdin) and reads its head: the policy, the salt, the
    /// request count and the time bound all come from its first record.
    fn read(config: &Config, stop: &Arc<Stop>) -> Result<Self, Error> {
        let input = input::open(config.schedule.as_deref(), stop.clone())?;
        let mut reader = RecordReader::new(input.reader, input.name)
            .keep(&[RecordType::Schedule, RecordType::Request])
            .reject(
                &[
                    RecordType::Sent,
                    RecordType::Token,
                    RecordType::Done,
                    RecordType::Stall,
                    RecordType::Summary,
                    RecordType::Stamp,
                ],
                "a schedule (what arrivals writes, and fire reads)",
            );
        let (upstream, first) = match read_ahead(&mut reader) {
            Ok(found) => found,
            Err(e) => {
                if let Some((ending, _)) = stop.reason().and_then(StopReason::exit) {
                    return Err(Error::StoppedBeforeSchedule { ending });
                }
                return Err(e.into());
            }
        };
        let policy = match &first {
            Some(r) => {
                dispatch::policy_for(r, config.concurrency).map_err(|problem| Error::Schedule {
                    input: reader.source_name().to_string(),
                    line: reader.line(),
                    problem,
                })?
            }
            None => Box::new(dispatch::Open { cap: None }),
        };
        let (salt, requests, batch) = match &first {
            Some(Record::Schedule(s)) => (s.salt.clone(), s.requests, s.mode.is(LoopMode::Batch)),
            _ => (None, None, false),
        };
        let duration_ns = first.as_ref().and_then(dispatch::duration_of);
        let gate = Arc::new(Gate::for_schedule(first.as_ref()));
        let first = first.filter(|r| matches!(r, Record::Request(_)));
        Ok(Self {
            reader,
            upstream,
            first,
            policy,
            salt,
            requests,
            duration_ns,
            gate,
            batch,
            rewrite: None,
        })
    }
}

/// Opens the `--save` file, refusing to truncate the schedule it would overwrite.
fn save_file(config: &Config) -> Result<Option<(String, File)>, Error> {
    let Some(path) = &config.save else {
        return Ok(None);
    };
    if let Some(input) = &config.schedule {
        if same_file(path, input) {
            return Err(Error::Flag(format!(
                "--save {}: that is the schedule being read; name another file",
                path.display()
            )));
        }
    }
    let file = File::create(path).map_err(|source| Error::Save {
        path: path.clone(),
        source,
    })?;
    Ok(Some((path.display().to_string(), file)))
}

/// True when both paths exist and name the same file.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Reads the schedule's header and then up to its first `schedule` or `request` record, so that
/// nothing is written before the input is known to be a schedule (and not, say, fire's own
/// events, which the reader refuses naming the tool that reads them).
fn read_ahead<R: BufRead>(
    reader: &mut RecordReader<R>,
) -> Result<(Header, Option<Record>), ReadError> {
    let header = reader.read_header()?;
    loop {
        match reader.next_record()? {
            Some(Record::Header(_)) => continue,
            other => return Ok((header, other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use tokenpipe_cli::{Ending, ToolError};

    #[test]
    fn save_never_overwrites_the_schedule() {
        let dir = std::env::temp_dir().join(format!("tokenpipe-fire-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sched = dir.join("sched.ndjson");
        std::fs::write(&sched, "schedule").unwrap();
        let config = |save: PathBuf| Config {
            save: Some(save),
            schedule: Some(sched.clone()),
            ..Config::new("http://x/v1")
        };
        let same = save_file(&config(dir.join("./sched.ndjson"))).unwrap_err();
        assert_eq!(same.ending(), Ending::BadInput);
        assert!(same
            .to_string()
            .ends_with("that is the schedule being read; name another file"));
        assert_eq!(std::fs::read_to_string(&sched).unwrap(), "schedule");
        assert!(save_file(&config(dir.join("events.ndjson")))
            .unwrap()
            .is_some());
        let unwritable = save_file(&config(dir.join("no/such/dir/events.ndjson"))).unwrap_err();
        assert_eq!(unwritable.ending(), Ending::BadInput);
        assert!(tokenpipe_cli::message(&unwritable)
            .contains("/no/such/dir/events.ndjson: No such file"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
