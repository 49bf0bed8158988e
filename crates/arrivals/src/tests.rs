//! The schedule as a whole: its bytes pinned, its warm-up batch and depth, its ends.

use super::*;
use clap::Parser;
use tokenpipe_cli::{Ending, ToolError};

fn run(cmd: &[&str]) -> Vec<u8> {
    let args = Args::try_parse_from(cmd).unwrap();
    let mut out = vec![];
    write_schedule(&args, cmd.iter().map(|s| s.to_string()).collect(), &mut out).unwrap();
    out
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = run(&["arrivals", "--rate", "3", "-n", "50", "--seed", "9"]);
    let b = run(&["arrivals", "--rate", "3", "-n", "50", "--seed", "9"]);
    let c = run(&["arrivals", "--rate", "3", "-n", "50", "--seed", "10"]);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn prompt_length_does_not_move_arrivals() {
    let offsets = |out: Vec<u8>| -> Vec<u64> {
        let mut r = tokenpipe_format::RecordReader::new(&out[..], "t");
        let mut v = vec![];
        while let Some(rec) = r.next_record().unwrap() {
            if let Record::Request(q) = rec {
                v.push(q.offset_ns.unwrap());
            }
        }
        v
    };
    let a = offsets(run(&[
        "arrivals",
        "--rate",
        "3",
        "-n",
        "20",
        "--input-tokens",
        "5",
    ]));
    let b = offsets(run(&[
        "arrivals",
        "--rate",
        "3",
        "-n",
        "20",
        "--input-tokens",
        "50",
    ]));
    assert_eq!(a, b);
}

#[test]
fn closed_loop_has_no_offsets() {
    let out = run(&["arrivals", "--concurrency", "4", "-n", "3"]);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(r#""mode":"closed","concurrency":4"#),
        "{text}"
    );
    assert_eq!(text.matches(r#""offset_ns":null"#).count(), 3);
}

/// FNV-1a (64-bit, the format's id hash) of `bytes`, with this build's version in the header blanked so that a
/// release bump does not count as a change of output.
fn output_hash(bytes: &[u8]) -> u64 {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let version = format!(r#""tool_version":"{}""#, env!("CARGO_PKG_VERSION"));
    let text = text.replacen(&version, r#""tool_version":"""#, 1);
    // A new minor format version adds fields elsewhere; the schedule stays the same.
    let minor = format!(r#""format_minor":{}"#, tokenpipe_format::FORMAT_MINOR);
    let text = text.replacen(&minor, r#""format_minor":6"#, 1);
    tokenpipe_format::ids::fnv1a([text.as_bytes()])
}

/// The schedule is a pure function of the arguments, and saved schedules are compared
/// across versions: these hashes pin the exact bytes of a few, so that any change to the
/// draws, the prompt words or the record layout fails here rather than silently.
#[test]
fn output_bytes_are_pinned() {
    let cases: &[(&[&str], u64)] = &[
        (
            &["arrivals", "--rate", "3", "-n", "50", "--seed", "9"],
            0x1156_e6f4_36b1_6151,
        ),
        (
            &[
                "arrivals",
                "--concurrency",
                "4",
                "-n",
                "20",
                "--input-tokens",
                "7",
            ],
            0x9503_49b3_e061_33f2,
        ),
        (&["arrivals", "-n", "5"], 0xf8f6_c38c_3e46_efc5),
        (
            &[
                "arrivals",
                "--rate",
                "0.5",
                "--burstiness",
                "0.3",
                "-n",
                "30",
                "--output-tokens",
                "9",
            ],
            0x4e0b_1157_6da6_8e81,
        ),
        (
            &[
                "arrivals",
                "--rate",
                "2",
                "--vllm-compatible",
                "-n",
                "40",
                "--input-tokens",
                "16",
                "--input-range",
                "0.5",
                "--output-range",
                "0.3",
                "--output-dist",
                "lognormal",
            ],
            0x8fd8_657b_94ee_29d7,
        ),
        (
            &[
                "arrivals",
                "--ramp",
                "10s",
                "--ramp-from",
                "1",
                "--ramp-to",
                "8",
                "--ramp-shape",
                "exponential",
                "-n",
                "30",
                "--token-ids",
                "1000..2000",
                "--prefix-tokens",
                "8",
                "--prefix-groups",
                "3",
                "--input-tokens",
                "8",
            ],
            0xa9ea_49bb_8d1b_051c,
        ),
        (
            &[
                "arrivals",
                "--batch",
                "3",
                "--runs",
                "2",
                "--scenario",
                "A1",
                "--shard",
                "1/2",
            ],
            0x2900_72ca_e4cb_b343,
        ),
        (
            &[
                "arrivals",
                "--batch",
                "2",
                "--depth",
                "6",
                "--pp",
                "5",
                "--no-warmup",
            ],
            0xe72b_340e_c960_3574,
        ),
        (
            &[
                "arrivals",
                "--rate",
                "1",
                "--turns",
                "3",
                "--think-time",
                "1s..3s",
                "-n",
                "4",
                "--input-tokens",
                "5",
                "--no-salt",
            ],
            0xad06_0e9c_5466_668b,
        ),
    ];
    let mut drift = vec![];
    for (cmd, want) in cases {
        let got = output_hash(&run(cmd));
        if got != *want {
            drift.push(format!("{cmd:?}: 0x{got:016x}, pinned 0x{want:016x}"));
        }
    }
    assert!(drift.is_empty(), "output changed:\n{}", drift.join("\n"));
}

fn requests(out: &[u8]) -> (Schedule, Vec<tokenpipe_format::Request>) {
    let mut r = tokenpipe_format::RecordReader::new(out, "t");
    let (mut schedule, mut v) = (None, vec![]);
    while let Some(rec) = r.next_record().unwrap() {
        match rec {
            Record::Schedule(s) => schedule = Some(s),
            Record::Request(q) => v.push(q),
            _ => {}
        }
    }
    (schedule.unwrap(), v)
}

#[test]
fn batch_mode_writes_one_warm_up_batch_first_unless_told_not_to() {
    let (schedule, reqs) = requests(&run(&["arrivals", "--batch", "2"]));
    assert_eq!(schedule.warmup_batches, Some(1));
    assert_eq!(schedule.requests, Some(8));
    let batches: Vec<_> = reqs.iter().map(|q| q.grouping.batch).collect();
    let want = [0, 0, 1, 1, 2, 2, 3, 3].map(Some);
    assert_eq!(batches, want);
    let (schedule, reqs) = requests(&run(&[
        "arrivals",
        "--batch",
        "2",
        "--runs",
        "2",
        "--no-warmup",
    ]));
    assert_eq!((schedule.warmup_batches, reqs.len()), (None, 4));
    let (schedule, _) = requests(&run(&["arrivals", "--concurrency", "2", "-n", "2"]));
    assert_eq!(schedule.warmup_batches, None);
}

#[test]
fn depth_is_a_system_message_of_that_many_words_and_leaves_the_prompts_alone() {
    let cmd = ["arrivals", "--batch", "2", "--pp", "9", "--no-salt"];
    let (_, plain) = requests(&run(&cmd));
    let (_, deep) = requests(&run(&[&cmd[..], &["--depth", "12"]].concat()));
    for (a, b) in plain.iter().zip(&deep) {
        assert_eq!(a.prompt, b.prompt);
        assert_eq!(a.system, None);
        assert_eq!(b.system.as_ref().unwrap().split(' ').count(), 12);
        assert_eq!((a.prompt_tokens, b.prompt_tokens), (Some(9), Some(21)));
    }
    assert_ne!(deep[0].system, deep[1].system);
}

fn plan(cmd: &[&str]) -> Plan {
    let args = Args::try_parse_from(cmd).unwrap();
    cli::plan(&args, cmd.iter().map(|s| s.to_string()).collect()).unwrap()
}

#[test]
fn an_overflow_part_way_keeps_the_records_before_it() {
    // A rate the flags refuse (docs/arrivals.md), built in code: the library still guards it.
    let mut tiny = plan(&["arrivals", "--rate", "1", "-n", "3"]);
    let spec = process::ProcessSpec::Open {
        gaps: process::UnitGaps::Gamma { burstiness: 1.0 },
        rate: process::RateShape::Fixed(1e-300),
    };
    tiny.process = process::build(spec, arrival_rng(0)).unwrap();
    let mut out = vec![];
    let err = tiny.write(&mut out).unwrap_err();
    assert!(matches!(err, Error::Process(_)), "{err:?}");
    assert_eq!(err.ending(), Ending::BadInput);
    assert!(err.to_string().contains("2^64 ns"), "{err}");
    let text = String::from_utf8(out).unwrap();
    let types: Vec<&str> = text
        .lines()
        .map(|l| {
            if l.contains(r#""type":"request""#) {
                "request"
            } else {
                "other"
            }
        })
        .collect();
    assert_eq!(types, ["other", "other", "request"], "{text}");
    assert!(text.ends_with('\n'));
}

#[test]
fn a_stop_ends_the_schedule_with_the_signal_status_after_whole_lines() {
    // Enough requests to fill the buffer a few times; stop at the 500th check.
    let mut checks = 0;
    let stop = || {
        checks += 1;
        (checks >= 500).then_some(Signal::Interrupt)
    };
    let mut out = vec![];
    let err = plan(&[
        "arrivals",
        "--rate",
        "5",
        "-n",
        "5000",
        "--input-tokens",
        "30",
    ])
    .write_until(&mut out, stop)
    .unwrap_err();
    assert!(matches!(err, Error::Stopped(Signal::Interrupt)), "{err:?}");
    assert_eq!(err.ending(), Ending::Interrupted);
    assert_eq!(err.to_string(), "interrupted");
    assert!(!out.is_empty() && out.ends_with(b"\n"));
    let mut reader = tokenpipe_format::RecordReader::new(&out[..], "t");
    let mut requests = 0;
    while let Some(rec) = reader.next_record().unwrap() {
        requests += u64::from(matches!(rec, Record::Request(_)));
    }
    assert!(requests > 0 && requests < 500, "{requests}");
}
