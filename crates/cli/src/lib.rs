//! What every tokenpipe binary shares: the exit-status contract, `tool: message` errors, a closed
//! stdout treated as a normal end, input files, and the hidden `--generate` flag that writes man
//! pages, shell completions and the JSON Schema from the clap definitions themselves.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

mod exit;
mod signals;
mod typo;

pub use exit::{
    closed_pipe, message, run, Ending, OpenError, ToolError, EXIT_BAD_INPUT, EXIT_FAILURE,
    EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED,
};
pub use signals::handle_stop_signals;

/// The generated artefacts a binary can write about itself (hidden `--generate` flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Generate {
    /// A roff man page for section 1.
    Man,
    /// A bash completion script.
    CompleteBash,
    /// A zsh completion script.
    CompleteZsh,
    /// A fish completion script.
    CompleteFish,
    /// The JSON Schema of the stream format.
    Schema,
}

/// The clap command of a tool, with the hidden `--generate` flag every tool has: declared here
/// once rather than in each tool's arguments.
pub fn command<A: clap::CommandFactory>() -> clap::Command {
    A::command().arg(
        clap::Arg::new("generate")
            .long("generate")
            .hide(true)
            .value_name("WHAT")
            .value_parser(clap::builder::EnumValueParser::<Generate>::new()),
    )
}

/// Parses the process arguments as `A`. When the hidden `--generate` flag was given, writes that
/// artefact instead and returns `None`, so every tool handles it alike. A misspelt long flag is
/// answered with the flag it most likely meant, where clap's own guess finds none.
pub fn parse_or_generate<A: clap::Parser>() -> io::Result<Option<A>> {
    let cmd = command::<A>();
    let matches = match cmd.clone().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => typo::suggest(e, &cmd).exit(),
    };
    if let Some(what) = matches.get_one::<Generate>("generate") {
        return generate(cmd, *what).map(|()| None);
    }
    match A::from_arg_matches(&matches) {
        Ok(args) => Ok(Some(args)),
        Err(e) => e.format(&mut cmd.clone()).exit(),
    }
}

/// Says on stderr that a cut-off last line was dropped: what a run killed mid-write leaves.
/// The rest of the stream was read and is used.
pub fn warn_truncated(tool: &str, source: &str, line: Option<usize>) {
    if let Some(line) = line {
        eprintln!("{tool}: warning: {}", truncated_message(source, line));
    }
}

/// The words of that warning, for tools that write their warnings elsewhere.
pub fn truncated_message(source: &str, line: usize) -> String {
    format!(
        "{source}: line {line} is cut off (the writer was stopped mid-line); ignored it and used everything before it"
    )
}

/// Writes the requested artefact for `cmd` to stdout.
pub fn generate(mut cmd: clap::Command, what: Generate) -> io::Result<()> {
    let name = cmd.get_name().to_string();
    let mut out = io::stdout().lock();
    match what {
        Generate::Man => clap_mangen::Man::new(cmd).render(&mut out)?,
        Generate::CompleteBash => {
            clap_complete::generate(clap_complete::Shell::Bash, &mut cmd, name, &mut out)
        }
        Generate::CompleteZsh => {
            clap_complete::generate(clap_complete::Shell::Zsh, &mut cmd, name, &mut out)
        }
        Generate::CompleteFish => {
            clap_complete::generate(clap_complete::Shell::Fish, &mut cmd, name, &mut out)
        }
        Generate::Schema => out.write_all(tokenpipe_format::schema::json_schema().as_bytes())?,
    }
    out.flush()?;
    Ok(())
}

/// An input stream and the name to use for it in messages.
pub struct Input {
    /// The buffered reader.
    pub reader: Box<dyn BufRead + Send>,
    /// `<stdin>` or the path.
    pub name: String,
}

/// Opens each path (`-` is stdin); no paths means stdin alone. Consumers read many files so
/// that runs saved with `tee` can be combined without `cat`.
pub fn open_inputs(paths: &[PathBuf]) -> Result<Vec<Input>, OpenError> {
    if paths.is_empty() {
        return Ok(vec![stdin_input()]);
    }
    paths.iter().map(|p| open_input(p)).collect()
}

fn stdin_input() -> Input {
    note_terminal_stdin();
    Input {
        reader: Box::new(io::BufReader::with_capacity(256 * 1024, io::stdin())),
        name: "<stdin>".into(),
    }
}

/// Says on stderr that the tool waits for a stream typed on the terminal, when stdin is one:
/// a bare `reduce` would otherwise look hung.
pub fn note_terminal_stdin() {
    if !io::stdin().is_terminal() {
        return;
    }
    let tool = std::env::args_os()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "tokenpipe".into());
    eprintln!(
        "{tool}: reading a stream from the terminal; pipe one in or name a FILE (Ctrl-D ends input)"
    );
}

/// Opens an input file, with the bad-input error every tool gives for one it cannot open.
pub fn open_file(path: &Path) -> Result<std::fs::File, OpenError> {
    std::fs::File::open(path).map_err(|source| OpenError {
        path: path.to_path_buf(),
        source,
    })
}

fn open_input(path: &Path) -> Result<Input, OpenError> {
    if path == Path::new("-") {
        return Ok(stdin_input());
    }
    Ok(Input {
        reader: Box::new(io::BufReader::with_capacity(256 * 1024, open_file(path)?)),
        name: path.display().to_string(),
    })
}

/// Lets a consumer at the end of a pipe outlive the first Ctrl-C or SIGTERM. A terminal sends
/// SIGINT to the whole pipeline, and a supervisor (`timeout`, systemd, `kill -- -PGID`) sends
/// SIGTERM to it; `fire` answers either by writing everything it measured and closing its
/// stdout, so `reduce` and `table` must keep reading to that end instead of dying first. This
/// applies only while a piped (not terminal) stdin is among the inputs; a second signal of
/// either kind quits at once (130 for SIGINT, 143 for SIGTERM). After the first, the tool still
/// writes its output, and then [`run`] ends it with 130 or 143 all the same ([`interruption`]):
/// the pipeline was stopped, and a script must not take its output for a whole run's.
pub fn outlast_first_interrupt(tool: &str, paths: &[PathBuf]) {
    let reads_stdin = paths.is_empty() || paths.iter().any(|p| p == Path::new("-"));
    if !reads_stdin || io::stdin().is_terminal() {
        return;
    }
    let interrupt = format!(
        "\n{tool}: interrupted; reading what upstream still writes (Ctrl-C again to quit)\n"
    );
    let terminate = format!(
        "\n{tool}: terminated; reading what upstream still writes (SIGTERM again to quit)\n"
    );
    let _ = INTERRUPT_MESSAGE.set(interrupt.into_bytes());
    let _ = TERMINATE_MESSAGE.set(terminate.into_bytes());
    // SAFETY: installs an async-signal-safe handler (atomics, write(2), _exit(2) only).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

/// True once a Ctrl-C or SIGTERM was outlived ([`outlast_first_interrupt`]): the tool ends
/// with 130 or 143 ([`interruption`]) after writing its output.
pub fn interrupted() -> bool {
    interruption().is_some()
}

/// How the first outlived signal ends the tool: [`Ending::Interrupted`] after Ctrl-C,
/// [`Ending::Terminated`] after SIGTERM, `None` while none came. [`run`] exits with its status.
pub fn interruption() -> Option<Ending> {
    match FIRST_SIGNAL.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        libc::SIGTERM => Some(Ending::Terminated),
        _ => Some(Ending::Interrupted),
    }
}

static INTERRUPT_MESSAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
static TERMINATE_MESSAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
static FIRST_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn on_interrupt(signal: libc::c_int) {
    let order = std::sync::atomic::Ordering::SeqCst;
    if FIRST_SIGNAL
        .compare_exchange(0, signal, order, order)
        .is_err()
    {
        let code = if signal == libc::SIGTERM {
            EXIT_TERMINATED
        } else {
            EXIT_INTERRUPTED
        };
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(code) }
    }
    let message = if signal == libc::SIGTERM {
        TERMINATE_MESSAGE.get()
    } else {
        INTERRUPT_MESSAGE.get()
    };
    if let Some(m) = message {
        // SAFETY: write(2) on stderr with a buffer that lives for the whole program.
        unsafe {
            libc::write(2, m.as_ptr().cast(), m.len());
        }
    }
}

/// Raises the soft open-file limit to the hard limit: a thousand concurrent streams need a
/// thousand sockets, more than the common default soft limit of 1024. Where the hard limit is
/// "unlimited" and the kernel refuses that as a soft limit (macOS), the largest of a few common
/// ceilings that it accepts is taken.
pub fn raise_fd_limit() {
    let Some((soft, hard)) = open_file_limit() else {
        return;
    };
    if soft >= hard {
        return;
    }
    for target in [hard, 1 << 20, 1 << 16, 10240] {
        if target <= soft || target > hard {
            continue;
        }
        let lim = libc::rlimit {
            rlim_cur: target as libc::rlim_t,
            rlim_max: hard as libc::rlim_t,
        };
        // SAFETY: plain setrlimit on a valid struct.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } == 0 {
            return;
        }
    }
}

/// The open-file limits in force, soft and hard (`u64::MAX` for unlimited).
pub fn open_file_limit() -> Option<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit on a valid struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    // rlim_t is u64 on Linux and macOS, not on every platform.
    #[allow(clippy::unnecessary_cast)]
    let wide = |v: libc::rlim_t| {
        if v == libc::RLIM_INFINITY {
            u64::MAX
        } else {
            v as u64
        }
    };
    Some((wide(lim.rlim_cur), wide(lim.rlim_max)))
}

/// The command line as given, for the header's `argv`.
pub fn argv() -> Vec<String> {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// Parses a duration as users write it on a command line: a number with a unit (`500ms`,
/// `1.5s`, `2m`, `1h`, `250us`, `10ns`) or a bare number of seconds (`90`). The flags of every
/// tool take durations this one way.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("expected a duration such as 500ms, 30s or 2m, got `{s}`"))?;
    let scale = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{s}`; use ns, us, ms, s, m or h"
            ))
        }
    };
    let secs = value * scale;
    if !secs.is_finite() || secs >= 1.8e10 {
        return Err(format!("`{s}` is too long a duration"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// Parses a percentile from 0 to 100 (`99`, `99.9`), as `--metric-percentiles` takes them in
/// reduce and table alike.
pub fn parse_percentile(s: &str) -> Result<f64, String> {
    let p: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a percentile from 0 to 100, got `{s}`"))?;
    if !(0.0..=100.0).contains(&p) {
        return Err(format!("a percentile is from 0 to 100, got `{s}`"));
    }
    // `-0` is 0: adding 0 turns the negative zero positive, so that a member is `p0`, not
    // `p-0`, which nothing reads back.
    Ok(p + 0.0)
}

#[cfg(test)]
mod tests {
    use super::{parse_duration, parse_percentile};

    #[test]
    fn percentiles_are_numbers_from_0_to_100() {
        assert_eq!(parse_percentile(" 99.9"), Ok(99.9));
        assert_eq!(parse_percentile("0"), Ok(0.0));
        let zero = parse_percentile("-0").unwrap();
        assert!(zero == 0.0 && zero.is_sign_positive(), "{zero}");
        assert!(parse_percentile("100.5")
            .unwrap_err()
            .contains("from 0 to 100"));
        assert!(parse_percentile("p99").unwrap_err().contains("`p99`"));
    }
    use std::time::Duration;

    #[test]
    fn durations_take_units_or_plain_seconds() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        for bad in ["", "s", "-1s", "3 parsecs", "1e400", "abc"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
