//! Turns a `vllm bench serve --save-result --save-detailed` result file into our event stream
//! (`reduce --from-vllm FILE`), so that a published vLLM run goes through `reduce`, `table` and
//! every other tool like a run of `fire`. docs/metrics.md ("Importing vLLM results") gives the
//! mapping and its limits.
//!
//! vLLM keeps, per request, seconds as floats: the time to its first chunk (`ttfts`), the gaps
//! between later chunks (`itls`), and in some versions when it was sent (`start_times`). Each
//! chunk becomes a `token` event at *start + ttft + Σ itl*, rounded to the nanosecond.

use crate::error::{Error, ImportError};
use serde_json::{Map, Value};
use std::io::{self, Read};
use std::path::Path;
use tokenpipe_cli::Input;
use tokenpipe_format::vllm::{self, key, latency_key, Stat};
use tokenpipe_format::vocab;
use tokenpipe_format::writer::encode_record;
use tokenpipe_format::{Done, ErrorKind, Header, OrOther, Record, Sent, Token};

/// The header parameter saying whether the file had `start_times` (without them every request
/// is sent at 0, and vLLM's own peak figures are used).
pub const PARAM_START_TIMES: &str = "start_times";

/// The header parameter holding vLLM's own `duration`, which starts before the first send.
pub const PARAM_DURATION: &str = vocab::DURATION.key;

/// What of the vLLM run is copied into the imported header's `params`, under the same names:
/// its settings, and the peaks its events cannot give back without `start_times`.
const COPIED_PARAMS: &[&[&str]] = &[
    vllm::SETTINGS,
    &[key::MAX_OUTPUT_TOKENS_PER_S, key::MAX_CONCURRENT_REQUESTS],
];

/// Reads the vLLM result file at `path` into records (see [`import`]).
pub fn import_file(path: &Path, argv: Vec<String>) -> Result<Vec<Record>, Error> {
    let mut text = Vec::new();
    tokenpipe_cli::open_file(path)?
        .read_to_end(&mut text)
        .map_err(|source| Error::ImportRead {
            path: path.to_path_buf(),
            source,
        })?;
    import(&text, &path.display().to_string(), argv)
}

/// The vLLM result file at `path` as an input of `reduce`, named by its path: its records
/// encoded as the stream `fire` would have written.
pub fn import_input(path: &Path, argv: Vec<String>) -> Result<Input, Error> {
    let mut bytes = Vec::new();
    for record in import_file(path, argv)? {
        encode_record(&mut bytes, &record);
    }
    Ok(Input {
        reader: Box::new(io::Cursor::new(bytes)),
        name: path.display().to_string(),
    })
}

/// Reads a vLLM result file's text into a header and every request's `sent`, `token` and
/// `done`, in time order. `source` names the file in messages; `argv` is the importing command.
pub fn import(text: &[u8], source: &str, argv: Vec<String>) -> Result<Vec<Record>, Error> {
    let bad = |fault| Error::Import {
        file: source.to_string(),
        source: fault,
    };
    let value: Value = serde_json::from_slice(text).map_err(|e| {
        bad(ImportError::NotJson {
            line: e.line(),
            column: e.column(),
            source: e,
        })
    })?;
    let Value::Object(file) = value else {
        return Err(bad(ImportError::NotObject));
    };
    let requests = Detailed::read(&file).map_err(bad)?;
    let mut header = Header::new(vllm::TOOL, vllm::run_id(source), argv);
    for copied in COPIED_PARAMS.iter().copied().flatten() {
        if let Some(v) = file.get(*copied).filter(|v| !v.is_null()) {
            header.params.insert((*copied).into(), v.clone());
        }
    }
    if let Some(model) = file.get(key::MODEL_ID).filter(|v| !v.is_null()) {
        header.params.insert(vocab::MODEL.key.into(), model.clone());
    }
    if let Some(d) = file.get(key::DURATION).filter(|v| !v.is_null()) {
        header.params.insert(PARAM_DURATION.into(), d.clone());
    }
    header.params.insert(
        PARAM_START_TIMES.into(),
        Value::Bool(requests.start_times.is_some()),
    );
    let duration = file.get(key::DURATION).and_then(Value::as_f64);
    let mut timed = requests.events(duration).map_err(bad)?;
    // Time order across requests; within one request, sent < tokens < done in stream order.
    timed.sort_by_key(|(at, rank, seq, _)| (*at, *rank, *seq));
    let mut records = vec![Record::Header(header)];
    records.extend(timed.into_iter().map(|(_, _, _, r)| r));
    Ok(records)
}

/// The per-request arrays of a detailed result.
struct Detailed {
    input_lens: Vec<u64>,
    output_lens: Vec<u64>,
    ttfts: Vec<f64>,
    itls: Vec<Vec<f64>>,
    errors: Vec<String>,
    texts: Option<Vec<Option<String>>>,
    start_times: Option<Vec<f64>>,
}

/// One event with its sort key: time, rank (sent, token, done) and sequence.
type Timed = (u64, u8, usize, Record);

impl Detailed {
    fn read(file: &Map<String, Value>) -> Result<Self, ImportError> {
        if !file.contains_key(key::TTFTS) || !file.contains_key(key::ITLS) {
            let mean_ttft = latency_key("ttft", Stat::Mean);
            return Err(
                if file.contains_key(&mean_ttft) || file.contains_key(key::COMPLETED) {
                    ImportError::NotDetailed
                } else {
                    ImportError::NoArrays
                },
            );
        }
        // Times within a request are spans: one below 0 would put a chunk before its send.
        let ttfts = array(file, key::TTFTS, span)?;
        let n = ttfts.len();
        let sized = |name: &str, len: usize| {
            if len == n {
                Ok(())
            } else {
                Err(ImportError::Length {
                    field: name.into(),
                    len,
                    requests: n,
                })
            }
        };
        let itls = array(file, key::ITLS, |v| {
            v.as_array()
                .ok_or("expected an array of seconds")?
                .iter()
                .map(span)
                .collect()
        })?;
        sized(key::ITLS, itls.len())?;
        let count = |name: &str| {
            array(file, name, |v| {
                v.as_u64().ok_or_else(|| "expected a token count".into())
            })
        };
        let input_lens = count(key::INPUT_LENS)?;
        sized(key::INPUT_LENS, input_lens.len())?;
        let output_lens = count(key::OUTPUT_LENS)?;
        sized(key::OUTPUT_LENS, output_lens.len())?;
        let errors = array(file, key::ERRORS, |v| match v {
            Value::Null => Ok(String::new()),
            Value::String(s) => Ok(s.clone()),
            other => Ok(other.to_string()),
        })?;
        sized(key::ERRORS, errors.len())?;
        let texts = match file.get(key::GENERATED_TEXTS) {
            None | Some(Value::Null) => None,
            Some(_) => Some(array(file, key::GENERATED_TEXTS, |v| {
                Ok(v.as_str().map(String::from))
            })?),
        };
        if let Some(t) = &texts {
            sized(key::GENERATED_TEXTS, t.len())?;
        }
        let start_times = match file.get(key::START_TIMES) {
            None | Some(Value::Null) => None,
            Some(_) => Some(array(file, key::START_TIMES, finite)?),
        };
        if let Some(s) = &start_times {
            sized(key::START_TIMES, s.len())?;
        }
        Ok(Detailed {
            input_lens,
            output_lens,
            ttfts,
            itls,
            errors,
            texts,
            start_times,
        })
    }

    /// Every request's events. `start_times` are taken as offsets from the run start when they
    /// lie within `[0, duration]`; otherwise (clock readings) the earliest becomes 0.
    fn events(&self, duration: Option<f64>) -> Result<Vec<Timed>, ImportError> {
        let origin = match &self.start_times {
            Some(s) if !s.is_empty() => {
                let (lo, hi) = s
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
                let relative = lo >= 0.0 && duration.is_some_and(|d| hi <= d);
                if relative {
                    0.0
                } else {
                    lo
                }
            }
            _ => 0.0,
        };
        let mut out = Vec::new();
        for i in 0..self.ttfts.len() {
            let start = self.start_times.as_ref().map_or(0.0, |s| s[i] - origin);
            self.request(i, start, &mut out)?;
        }
        Ok(out)
    }

    fn request(&self, i: usize, start: f64, out: &mut Vec<Timed>) -> Result<(), ImportError> {
        let id = i as u64;
        let sent_ns = to_ns(start, key::START_TIMES, i)?;
        out.push((
            sent_ns,
            0,
            out.len(),
            Record::Sent(Sent {
                id,
                scheduled_ns: None,
                sent_ns,
            }),
        ));
        let mut done = Done {
            id,
            at_ns: sent_ns,
            prompt_tokens: Some(self.input_lens[i]),
            ..Done::default()
        };
        // vLLM records a failure with its reason, which may be empty: a request with no chunk
        // at all (TTFT 0, no gaps, no output) failed whatever its error text says.
        let no_chunk = self.ttfts[i] == 0.0 && self.itls[i].is_empty() && self.output_lens[i] == 0;
        if !self.errors[i].is_empty() || no_chunk {
            done.error_kind = Some(OrOther::Known(ErrorKind::Server));
            done.error = Some(if self.errors[i].is_empty() {
                "vLLM received no chunk (its error text was empty)".into()
            } else {
                self.errors[i].clone()
            });
            out.push((sent_ns, 2, out.len(), Record::Done(done)));
            return Ok(());
        }
        // vLLM's own arithmetic: the first chunk at start + ttft, then each gap added on.
        let mut t = start + self.ttfts[i];
        let mut chunks = vec![to_ns(t, key::TTFTS, i)?];
        // Gaps are 0 or more (`span`), so the chunks' times never go back.
        for gap in &self.itls[i] {
            t += gap;
            chunks.push(to_ns(t, key::ITLS, i)?);
        }
        for &at_ns in &chunks {
            out.push((
                at_ns,
                1,
                out.len(),
                Record::Token(Token {
                    id,
                    at_ns,
                    tokens: 1,
                    empty: false,
                    reasoning: false,
                }),
            ));
        }
        done.ok = true;
        done.at_ns = *chunks.last().unwrap_or(&sent_ns);
        done.first_event_ns = chunks.first().copied();
        done.events = chunks.len() as u64;
        done.completion_tokens = Some(self.output_lens[i]);
        done.text = self.texts.as_ref().and_then(|t| t[i].clone());
        out.push((done.at_ns, 2, out.len(), Record::Done(done)));
        Ok(())
    }
}

/// The field `name` as an array, each entry read by `entry`, which says what it expected when
/// an entry is not that; errors name the field and index.
fn array<T>(
    file: &Map<String, Value>,
    name: &str,
    entry: impl Fn(&Value) -> Result<T, String>,
) -> Result<Vec<T>, ImportError> {
    let items = file
        .get(name)
        .ok_or_else(|| ImportError::Missing { field: name.into() })?
        .as_array()
        .ok_or_else(|| ImportError::NotArray { field: name.into() })?;
    items
        .iter()
        .enumerate()
        .map(|(index, v)| {
            entry(v).map_err(|expected| ImportError::Entry {
                field: name.into(),
                index,
                expected,
            })
        })
        .collect()
}

/// An entry that is a number of seconds; what was expected when not.
fn finite(v: &Value) -> Result<f64, String> {
    v.as_f64()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("expected a number of seconds, got {v}"))
}

/// An entry that is a span of seconds, 0 or more (a TTFT, a gap between chunks); what was
/// expected when not.
fn span(v: &Value) -> Result<f64, String> {
    finite(v).and_then(|x| {
        (x >= 0.0)
            .then_some(x)
            .ok_or_else(|| format!("expected a number of seconds of 0 or more, got {v}"))
    })
}

/// Seconds since the run start as nanoseconds; negative or absurd times are refused.
fn to_ns(s: f64, field: &str, i: usize) -> Result<u64, ImportError> {
    if !(0.0..1.8e10).contains(&s) {
        return Err(ImportError::Time {
            request: i,
            field: field.into(),
            at_s: s,
        });
    }
    Ok((s * 1e9).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(text: &str) -> String {
        let err = import(text.as_bytes(), "r.json", vec![]).unwrap_err();
        assert_eq!(
            tokenpipe_cli::ToolError::ending(&err),
            tokenpipe_cli::Ending::BadInput
        );
        tokenpipe_cli::message(&err)
    }

    #[test]
    fn chunks_become_token_events_at_vllms_cumulative_times() {
        let text = r#"{"duration": 1.0, "input_lens": [3, 4], "output_lens": [3, 0],
            "ttfts": [0.25, 0], "itls": [[0.125, 0.5], []], "errors": ["", "boom"]}"#;
        let records = import(text.as_bytes(), "r.json", vec![]).unwrap();
        let Record::Header(h) = &records[0] else {
            panic!("a header first")
        };
        assert_eq!(h.params[PARAM_START_TIMES], Value::Bool(false));
        assert_eq!(h.params["duration_s"], 1.0);
        let tokens: Vec<u64> = records
            .iter()
            .filter_map(|r| match r {
                Record::Token(t) => Some(t.at_ns),
                _ => None,
            })
            .collect();
        assert_eq!(tokens, [250_000_000, 375_000_000, 875_000_000]);
        let dones: Vec<&Done> = records
            .iter()
            .filter_map(|r| match r {
                Record::Done(d) => Some(d),
                _ => None,
            })
            .collect();
        // The failure ends at its send (0), before request 0's last chunk.
        assert_eq!(dones[0].id, 1);
        assert!(!dones[0].ok);
        assert_eq!(dones[0].error.as_deref(), Some("boom"));
        assert_eq!(dones[1].at_ns, 875_000_000);
        assert_eq!(dones[1].completion_tokens, Some(3));
    }

    #[test]
    fn a_request_without_any_chunk_failed_even_without_an_error_text() {
        let text = r#"{"duration": 1.0, "input_lens": [3], "output_lens": [0],
            "ttfts": [0.0], "itls": [[]], "errors": [""]}"#;
        let records = import(text.as_bytes(), "r.json", vec![]).unwrap();
        assert!(!records.iter().any(|r| matches!(r, Record::Token(_))));
        let Some(Record::Done(d)) = records.last() else {
            panic!("a done last: {records:?}")
        };
        assert!(!d.ok);
        assert!(d.error.as_deref().is_some_and(|e| e.contains("no chunk")));
    }

    #[test]
    fn bad_files_name_the_file_and_the_field() {
        let e = fault("{\n  \"ttfts\": [0.1,\n");
        assert!(e.contains("r.json: line 3"), "{e}");
        let e = fault(r#"{"completed": 3, "mean_ttft_ms": 5}"#);
        assert!(e.contains("--save-detailed"), "{e}");
        let e = fault(r#"[1, 2]"#);
        assert!(e.contains("one JSON object"), "{e}");
        let e = fault(
            r#"{"ttfts": [0.1, "x"], "itls": [[], []], "input_lens": [1, 1],
                "output_lens": [1, 1], "errors": ["", ""]}"#,
        );
        assert!(e.contains("field \"ttfts\"[1]"), "{e}");
        let e = fault(
            r#"{"ttfts": [0.1], "itls": [[], []], "input_lens": [1],
                "output_lens": [1], "errors": [""]}"#,
        );
        assert!(e.contains("\"itls\": 2 entries"), "{e}");
        let e = fault(
            r#"{"ttfts": [-0.1], "itls": [[]], "input_lens": [1],
                "output_lens": [1], "errors": [""]}"#,
        );
        assert!(e.contains("field \"ttfts\"[0]"), "{e}");
        assert!(e.contains("seconds of 0 or more, got -0.1"), "{e}");
        // A negative span is refused even where the send time would keep the chunk after 0
        // (it would come before its own send), and a negative gap too (fuzz/seeds/vllm_import).
        let e = fault(
            r#"{"ttfts": [0.1, -0.095], "itls": [[], []], "input_lens": [1, 1],
                "output_lens": [1, 1], "errors": ["", ""], "start_times": [0.1, 2.1]}"#,
        );
        assert!(e.contains("field \"ttfts\"[1]"), "{e}");
        let e = fault(
            r#"{"ttfts": [0.1], "itls": [[0.02, -0.01]], "input_lens": [1],
                "output_lens": [3], "errors": [""]}"#,
        );
        assert!(e.contains("field \"itls\"[0]"), "{e}");
        // An absurd time is named in a few characters, not 300 digits.
        let e = fault(
            r#"{"ttfts": [1e300], "itls": [[]], "input_lens": [1],
                "output_lens": [1], "errors": [""]}"#,
        );
        assert!(e.contains("puts an event at 1e300 s"), "{e}");
    }
}
