use super::*;

fn spec(path: &str) -> TraceSpec {
    TraceSpec {
        path: PathBuf::from(path),
        format: TraceFormat::Auto,
        columns: Columns::default(),
        time_unit: None,
        time_scale: 1.0,
        skip_failed: false,
    }
}

fn replay(spec: &TraceSpec, text: &str) -> Result<TraceReplay, ProcessError> {
    TraceReplay::from_reader(spec, Cursor::new(text.as_bytes().to_vec()))
}

/// (offset_ns, input, output) of every arrival, or the first error.
fn arrivals(spec: &TraceSpec, text: &str) -> Result<Vec<(u64, u64, u64)>, ProcessError> {
    let mut p = replay(spec, text)?;
    let mut out = vec![];
    while let Some(a) = p.next_arrival()? {
        out.push((
            a.offset_ns.unwrap(),
            a.input_tokens.unwrap(),
            a.output_tokens.unwrap(),
        ));
    }
    Ok(out)
}

fn message(e: ProcessError) -> String {
    e.to_string()
}

const MOONCAKE: &str = r#"{"timestamp": 1000, "input_length": 6955, "output_length": 52, "hash_ids": [0, 1]}
{"timestamp": 1000, "input_length": 10, "output_length": 3, "hash_ids": [0]}

{"timestamp": 3500, "input_length": 7, "output_length": 1, "hash_ids": []}
"#;

const BURSTGPT: &str = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
5,ChatGPT,472,18,490,Conversation log
7,GPT-4,1200,0,1200,Conversation log
45.5,ChatGPT,30,9,39,API log
";

#[test]
fn mooncake_rows_replay_at_millisecond_offsets_from_the_first() {
    let got = arrivals(&spec("m.jsonl"), MOONCAKE).unwrap();
    assert_eq!(got, [(0, 6955, 52), (0, 10, 3), (2_500_000_000, 7, 1)]);
}

#[test]
fn burstgpt_keeps_failed_rows_asking_for_one_token_unless_told_to_skip() {
    let got = arrivals(&spec("b.csv"), BURSTGPT).unwrap();
    assert_eq!(
        got,
        [
            (0, 472, 18),
            (2_000_000_000, 1200, 1),
            (40_500_000_000, 30, 9)
        ]
    );
    let skip = TraceSpec {
        skip_failed: true,
        ..spec("b.csv")
    };
    // The origin stays the file's first row, so the kept rows do not move.
    let got = arrivals(&skip, BURSTGPT).unwrap();
    assert_eq!(got, [(0, 472, 18), (40_500_000_000, 30, 9)]);
}

#[test]
fn time_scale_multiplies_every_offset() {
    let half = TraceSpec {
        time_scale: 0.5,
        ..spec("m.jsonl")
    };
    let got = arrivals(&half, MOONCAKE).unwrap();
    assert_eq!(got[2].0, 1_250_000_000);
    let bad = TraceSpec {
        time_scale: 0.0,
        ..spec("m.jsonl")
    };
    assert!(matches!(
        replay(&bad, MOONCAKE),
        Err(ProcessError::Parameters(_))
    ));
}

#[test]
fn the_generic_layout_reads_named_columns_in_the_given_unit() {
    let generic = TraceSpec {
        columns: parse_columns("time=at,input=p,output=c").unwrap(),
        time_unit: Some(TimeUnit::Us),
        ..spec("g.data")
    };
    let jsonl = "{\"at\": 1700000000000001, \"p\": 4, \"c\": 5}\n{\"at\": 1700000000000251, \"p\": 6, \"c\": 7}\n";
    assert_eq!(
        arrivals(&generic, jsonl).unwrap(),
        [(0, 4, 5), (250_000, 6, 7)]
    );
    let csv = "p,c,at\n4,5,10\n6,7,12\n";
    assert_eq!(arrivals(&generic, csv).unwrap(), [(0, 4, 5), (2_000, 6, 7)]);
}

#[test]
fn a_row_back_in_time_names_file_line_and_field_and_suggests_sorting() {
    let text = "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 4, \"input_length\": 1, \"output_length\": 1}\n";
    let e = message(arrivals(&spec("m.jsonl"), text).unwrap_err());
    assert!(
        e.starts_with("m.jsonl: line 2: field \"timestamp\": 4 is earlier"),
        "{e}"
    );
    assert!(e.contains("sort"), "{e}");
}

#[test]
fn bad_lengths_name_line_and_field() {
    for (cell, want) in [
        ("-3", "negative"),
        ("2.5", "whole number"),
        ("16777217", "2^24"),
        ("lots", "number of tokens"),
    ] {
        let text = format!("Timestamp,Request tokens,Response tokens\n1,{cell},2\n");
        let e = message(arrivals(&spec("b.csv"), &text).unwrap_err());
        assert!(
            e.starts_with("b.csv: line 2: field \"Request tokens\": ") && e.contains(want),
            "{cell}: {e}"
        );
    }
    let text = "Timestamp,Request tokens,Response tokens\n1,16777216,2.0\n";
    assert_eq!(
        arrivals(&spec("b.csv"), text).unwrap(),
        [(0, 16_777_216, 2)]
    );
}

#[test]
fn an_unknown_column_lists_the_file_s_columns() {
    let s = TraceSpec {
        columns: parse_columns("time=Timestamp,input=Request tokens,output=Answer").unwrap(),
        ..spec("b.csv")
    };
    let e = message(replay(&s, BURSTGPT).err().unwrap());
    assert!(
        e.starts_with("b.csv: line 1: field \"Answer\": no such column"),
        "{e}"
    );
    assert!(e.contains("Response tokens"), "{e}");
    let s = TraceSpec {
        columns: parse_columns("time=timestamp,input=input_length,output=out").unwrap(),
        ..spec("m.jsonl")
    };
    let e = message(arrivals(&s, MOONCAKE).unwrap_err());
    assert!(
        e.contains("field \"out\": no such column") && e.contains("hash_ids"),
        "{e}"
    );
}

#[test]
fn auto_detection_reads_the_first_line_and_keeps_line_numbers() {
    // No telling extension, blank lines first: still Mooncake, still the right line.
    let text = format!("\n\n{MOONCAKE}{{\"timestamp\": 1}}\n");
    let e = message(arrivals(&spec("trace"), &text).unwrap_err());
    assert!(
        e.starts_with("trace: line 7: field \"input_length\": missing"),
        "{e}"
    );
    let p = replay(&spec("trace"), BURSTGPT).unwrap();
    assert_eq!(p.header_params()["trace_format"], "burstgpt");
    let e = message(replay(&spec("x.csv"), "a,b\n1,2\n").err().unwrap());
    assert!(e.contains("--trace-columns") && e.contains("a, b"), "{e}");
    let e = message(replay(&spec("x.csv"), "\n").err().unwrap());
    assert!(e.contains("empty"), "{e}");
}

#[test]
fn a_missing_file_is_an_input_error_naming_it() {
    let e = TraceReplay::open(&spec("/nonexistent/trace.jsonl"))
        .err()
        .unwrap();
    assert!(
        matches!(&e, ProcessError::Input(m) if m.starts_with("/nonexistent/trace.jsonl: cannot open")),
        "{e}"
    );
}
