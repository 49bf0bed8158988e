use super::*;
use std::io::Write;
use std::sync::mpsc;
use tokenpipe_format::Token;

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);
impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
impl Shared {
    fn text(&self) -> String {
        String::from_utf8(lock(&self.0).clone()).unwrap()
    }
}

/// Blocks every write until the test opens the gate (drops the sender).
struct Gated {
    gate: Mutex<mpsc::Receiver<()>>,
    out: Shared,
}
impl Write for Gated {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let _ = lock(&self.gate).recv();
        self.out.write(b)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn output(out: impl Write + Send + 'static) -> Output {
    Output {
        name: "test".into(),
        out: Box::new(out),
        on_error: None,
    }
}

fn tokens(sink: &Sink, n: u64) {
    for i in 0..n {
        sink.record(&Record::Token(Token {
            id: i,
            at_ns: i * 2,
            tokens: 1,
            empty: false,
            reasoning: false,
        }));
    }
}

fn parsed(text: &str) -> Vec<Record> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

#[test]
fn every_record_arrives_in_order_in_every_output() {
    let (a, b) = (Shared::default(), Shared::default());
    let sink = Sink::start(
        vec![output(a.clone()), output(b.clone())],
        DEFAULT_OUTPUT_BUFFER,
        RunClock::start(),
    )
    .unwrap();
    tokens(&sink, 20_000);
    sink.finish().unwrap();
    let text = a.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 20_000);
    assert!(lines[19_999].contains("\"id\":19999,"));
    assert_eq!(text, b.text());
}

struct Closed;
impl Write for Closed {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn closed_pipe_calls_back_ends_quietly_and_spares_the_other_output() {
    let (tx, rx) = mpsc::channel();
    let saved = Shared::default();
    let closed = Output {
        name: "<stdout>".into(),
        out: Box::new(Closed),
        on_error: Some(Box::new(move |_: &io::Error| tx.send(()).unwrap())),
    };
    let sink = Sink::start(
        vec![closed, output(saved.clone())],
        DEFAULT_OUTPUT_BUFFER,
        RunClock::start(),
    )
    .unwrap();
    tokens(&sink, 10_000);
    sink.finish().unwrap();
    assert!(rx.try_recv().is_ok());
    assert_eq!(saved.text().lines().count(), 10_000);
}

struct Full;
impl Write for Full {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::other("disk full"))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn other_write_errors_are_reported_with_the_output_name() {
    let mut out = output(Full);
    out.name = "events.ndjson".into();
    let sink = Sink::start(vec![out], DEFAULT_OUTPUT_BUFFER, RunClock::start()).unwrap();
    tokens(&sink, 10);
    let e = sink.finish().unwrap_err();
    assert!(e.to_string().contains("events.ndjson: disk full"), "{e}");
}

/// Writes `n` tokens on another thread into a sink whose only output is gated, opens the gate
/// after a while, and returns what came out.
fn through_a_slow_reader(bound: u64, n: u64) -> Vec<Record> {
    let out = Shared::default();
    let (open, gate) = mpsc::channel::<()>();
    let slow = Gated {
        gate: Mutex::new(gate),
        out: out.clone(),
    };
    let sink = Sink::start(vec![output(slow)], bound, RunClock::start()).unwrap();
    let producer = {
        let sink = sink.clone();
        std::thread::spawn(move || tokens(&sink, n))
    };
    std::thread::sleep(Duration::from_millis(50));
    drop(open);
    producer.join().unwrap();
    sink.finish().unwrap();
    parsed(&out.text())
}

#[test]
fn a_slow_reader_past_the_bound_gives_stall_records_and_loses_nothing() {
    // 20,000 tokens are several 64 KiB buffers: the second hand-over finds the first still
    // unwritten (the gate is shut), which is past a 1-byte bound, so it must wait.
    let recs = through_a_slow_reader(1, 20_000);
    let stalls: Vec<&Stall> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Stall(s) => Some(s),
            _ => None,
        })
        .collect();
    assert!(!stalls.is_empty(), "no stall record");
    assert!(stalls.iter().all(|s| s.buffered_bytes >= 1));
    assert!(stalls[0].duration_ns > 0);
    let ids: Vec<u64> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Token(t) => Some(t.id),
            _ => None,
        })
        .collect();
    assert_eq!(ids, (0..20_000).collect::<Vec<_>>());
}

#[test]
fn a_slow_reader_within_the_bound_costs_no_stall() {
    let recs = through_a_slow_reader(1 << 30, 20_000);
    assert!(recs.iter().all(|r| !matches!(r, Record::Stall(_))));
    assert_eq!(recs.len(), 20_000);
}

/// Never returns from a write: a reader that stopped reading without closing.
struct Stuck;
impl Write for Stuck {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        loop {
            std::thread::park();
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn abandon_writes_whole_lines_to_the_other_outputs_and_does_not_hang() {
    let saved = Shared::default();
    let sink = Sink::start(
        vec![output(Stuck), output(saved.clone())],
        DEFAULT_OUTPUT_BUFFER,
        RunClock::start(),
    )
    .unwrap();
    tokens(&sink, 5_000);
    sink.abandon(Duration::from_millis(300));
    let text = saved.text();
    assert!(text.ends_with('\n'));
    assert_eq!(parsed(&text).len(), 5_000);
}

#[test]
fn sizes_in_the_warning_read_well() {
    assert_eq!(in_units(65_536), "64 KiB");
    assert_eq!(in_units(65_537), "65 KiB");
    assert_eq!(in_units(DEFAULT_OUTPUT_BUFFER), "256 MiB");
}
