//! The fast path against serde on many generated lines: every line it accepts gives exactly the
//! record serde gives, every line fire writes is accepted, and anything unusual is left to serde.

use super::*;
use crate::writer::encode_record;

/// A deterministic generator (xorshift64*), so a failure names a reproducible case.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Numbers at the edges as often as in the middle: 0, small, near 2^16, 2^32, 2^64.
    fn number(&mut self) -> u64 {
        match self.below(6) {
            0 => 0,
            1 => self.below(1000),
            2 => 65_530 + self.below(10),
            3 => u64::from(u32::MAX) - 2 + self.below(5),
            4 => u64::MAX - self.below(3),
            _ => self.next() >> self.below(64),
        }
    }

    fn maybe<T>(&mut self, value: impl FnOnce(&mut Self) -> T) -> Option<T> {
        (self.below(3) != 0).then(|| value(self))
    }

    fn text(&mut self) -> String {
        const PIECES: &[&str] = &[
            "HTTP 500", " ", "é", "\"", "\\", "\n", "\u{1}", "日本", "{}", "ok",
        ];
        (0..self.below(5))
            .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
            .collect()
    }

    fn record(&mut self) -> Record {
        match self.below(3) {
            0 => Record::Token(Token {
                id: self.number(),
                at_ns: self.number(),
                tokens: self.number() as u32,
                empty: self.below(2) == 0,
                reasoning: self.below(2) == 0,
            }),
            1 => Record::Sent(Sent {
                id: self.number(),
                scheduled_ns: self.maybe(Gen::number),
                sent_ns: self.number(),
            }),
            _ => {
                let kinds = ErrorKind::ALL.len() as u64;
                Record::Done(Done {
                    id: self.number(),
                    at_ns: self.number(),
                    ok: self.below(2) == 0,
                    status: self.maybe(|g| g.number() as u16),
                    error_kind: self.maybe(|g| match g.below(kinds + 1) {
                        k if k < kinds => OrOther::Known(ErrorKind::ALL[k as usize]),
                        _ => OrOther::Other(g.text()),
                    }),
                    error: self.maybe(Gen::text),
                    prompt_tokens: self.maybe(Gen::number),
                    completion_tokens: self.maybe(Gen::number),
                    events: self.number(),
                    finish_reason: self.maybe(Gen::text),
                    first_event_ns: self.maybe(Gen::number),
                    reasoning_tokens: self.maybe(Gen::number),
                    answer_tokens: self.maybe(Gen::number),
                    cached_tokens: self.maybe(Gen::number),
                    ..Done::default()
                })
            }
        }
    }
}

/// What serde makes of a line, the reader's slow path.
fn serde_record(line: &[u8]) -> Option<Record> {
    serde_json::from_slice::<Record>(line).ok()
}

fn fast_record(line: &[u8]) -> Option<Record> {
    let kind = crate::reader::record_kind(line).ok()??;
    parse(RecordType::from_name(&kind)?, line)
}

/// Damage that a hand-edited or foreign stream might hold, applied at a random place.
fn mutate(g: &mut Gen, line: &[u8]) -> Vec<u8> {
    const INSERTS: &[&[u8]] = &[
        b" ",
        b"0",
        b"-",
        b".5",
        b"e3",
        b"\\",
        b"\"",
        b"null",
        b",\"x\":1",
        b"9",
        b"}",
        b"\xff",
    ];
    let mut out = line.to_vec();
    let at = g.below(out.len() as u64 + 1) as usize;
    match g.below(3) {
        0 => {
            let insert = INSERTS[g.below(INSERTS.len() as u64) as usize];
            out.splice(at..at, insert.iter().copied());
        }
        1 if at < out.len() => {
            out.remove(at);
        }
        _ => out.truncate(at),
    }
    out
}

#[test]
fn every_line_fire_writes_takes_the_fast_path_and_equals_serde() {
    let mut g = Gen(0x1234_5678_9abc_def1);
    let mut taken = 0;
    for _ in 0..20_000 {
        let record = g.record();
        let mut line = Vec::new();
        encode_record(&mut line, &record);
        line.pop(); // the newline
        let fast = fast_record(&line);
        let plain_strings = !line.contains(&b'\\');
        if plain_strings {
            assert_eq!(
                fast.as_ref(),
                Some(&record),
                "{}",
                String::from_utf8_lossy(&line)
            );
            taken += 1;
        }
        if let Some(fast) = fast {
            assert_eq!(serde_record(&line), Some(fast));
        }
    }
    assert!(taken > 10_000, "only {taken} lines took the fast path");
}

#[test]
fn damaged_lines_give_serde_s_record_or_fall_back() {
    let mut g = Gen(0x0fed_cba9_8765_4321);
    let (mut fell_back, mut accepted) = (0, 0);
    for _ in 0..100_000 {
        let record = g.record();
        let mut line = Vec::new();
        encode_record(&mut line, &record);
        line.pop();
        let damaged = mutate(&mut g, &line);
        match fast_record(&damaged) {
            Some(fast) => {
                accepted += 1;
                assert_eq!(
                    serde_record(&damaged).as_ref(),
                    Some(&fast),
                    "{}",
                    String::from_utf8_lossy(&damaged)
                );
            }
            None => fell_back += 1,
        }
    }
    assert!(
        fell_back > 1000 && accepted > 1000,
        "{fell_back} {accepted}"
    );
}

#[test]
fn unusual_but_valid_lines_are_left_to_serde() {
    for line in [
        &br#"{"type":"token","id":1,"at_ns":2,"tokens":1,"x":0}"#[..],
        br#"{"type":"token","at_ns":2,"id":1,"tokens":1}"#,
        br#"{"type":"token", "id":1,"at_ns":2,"tokens":1}"#,
        br#"{"type":"token","id":1.0,"at_ns":2,"tokens":1}"#,
        br#"{"type":"token","id":1e0,"at_ns":2,"tokens":1}"#,
        br#"{"type":"token","id":1,"at_ns":2,"tokens":4294967296}"#,
        br#"{"type":"token","id":18446744073709551616,"at_ns":2,"tokens":1}"#,
        br#"{"type":"sent","id":1,"sent_ns":2,"scheduled_ns":1}"#,
        br#"{"type":"done","id":1,"at_ns":2,"ok":false,"status":null,"error_kind":"h\u0074tp","error":null,"prompt_tokens":null,"completion_tokens":null,"events":0,"finish_reason":null}"#,
        br#"{"type":"done","id":1,"at_ns":2,"ok":true,"status":200,"error_kind":null,"error":null,"prompt_tokens":1,"completion_tokens":1,"events":1,"finish_reason":"stop","session":"s"}"#,
        br#"{"type":"done","id":1,"at_ns":2,"ok":true,"status":70000,"error_kind":null,"error":null,"prompt_tokens":1,"completion_tokens":1,"events":1,"finish_reason":"stop"}"#,
    ] {
        assert_eq!(fast_record(line), None, "{}", String::from_utf8_lossy(line));
    }
}

#[test]
fn malformed_numbers_are_left_to_serde() {
    for line in [
        &br#"{"type":"token","id":01,"at_ns":2,"tokens":1}"#[..],
        br#"{"type":"token","id":-1,"at_ns":2,"tokens":1}"#,
        br#"{"type":"token","id":1,"at_ns":2,"tokens":1}x"#,
        br#"{"type":"token","id":1,"at_ns":2,"tokens":1,"empty":1}"#,
    ] {
        assert_eq!(fast_record(line), None, "{}", String::from_utf8_lossy(line));
        assert_eq!(serde_record(line), None);
    }
}
