//! Which columns of a trace hold the send time and the two lengths, and in what unit: the
//! built-in layouts (Mooncake, BurstGPT), the generic one (`--trace-columns`), and the
//! detection of both the container (JSONL or CSV) and the layout from a file's first line.

use std::path::Path;

/// The trace's format as asked: a built-in layout, a container with the columns named by
/// `--trace-columns`, or `Auto` to tell from the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceFormat {
    /// By the file's extension and its first line's members.
    #[default]
    Auto,
    /// Mooncake's JSONL: `timestamp` (ms), `input_length`, `output_length`.
    Mooncake,
    /// BurstGPT's CSV: `Timestamp` (s), `Request tokens`, `Response tokens`.
    BurstGpt,
    /// Any JSON-lines file; the columns come from `--trace-columns` or the first line.
    Jsonl,
    /// Any CSV file with a header; the columns come from `--trace-columns` or the header.
    Csv,
}

/// The unit of a trace's timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
    /// Nanoseconds.
    Ns,
}

impl TimeUnit {
    /// Nanoseconds in one unit.
    pub fn ns(self) -> f64 {
        match self {
            TimeUnit::S => 1e9,
            TimeUnit::Ms => 1e6,
            TimeUnit::Us => 1e3,
            TimeUnit::Ns => 1.0,
        }
    }

    /// The unit's name on the command line and in the header.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::S => "s",
            TimeUnit::Ms => "ms",
            TimeUnit::Us => "us",
            TimeUnit::Ns => "ns",
        }
    }
}

/// Column names given with `--trace-columns`; any left out come from the built-in layout.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Columns {
    /// The send time's column.
    pub time: Option<String>,
    /// The prompt length's column.
    pub input: Option<String>,
    /// The answer length's column.
    pub output: Option<String>,
}

/// The kind of file, which decides the row reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Container {
    Jsonl,
    Csv,
}

/// Everything the replay needs to read a row: resolved once, before the first row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Layout {
    pub(super) container: Container,
    /// `mooncake`, `burstgpt`, `jsonl` or `csv`, for the header.
    pub(super) name: &'static str,
    /// Time, input and output columns, in that order.
    pub(super) columns: [String; 3],
    pub(super) unit: TimeUnit,
}

/// The role of each column, in [`Layout::columns`] order; `--trace-columns` keys.
pub(super) const ROLES: [&str; 3] = ["time", "input", "output"];

struct Builtin {
    name: &'static str,
    columns: [&'static str; 3],
    unit: TimeUnit,
}

const MOONCAKE: Builtin = Builtin {
    name: "mooncake",
    columns: ["timestamp", "input_length", "output_length"],
    unit: TimeUnit::Ms,
};

const BURSTGPT: Builtin = Builtin {
    name: "burstgpt",
    columns: ["Timestamp", "Request tokens", "Response tokens"],
    unit: TimeUnit::S,
};

/// Resolves the layout of the file `path` whose first non-blank line is `first_line`.
pub(super) fn resolve(
    format: TraceFormat,
    path: &Path,
    first_line: &str,
    columns: &Columns,
    unit: Option<TimeUnit>,
) -> Result<Layout, String> {
    let container = match format {
        TraceFormat::Mooncake | TraceFormat::Jsonl => Container::Jsonl,
        TraceFormat::BurstGpt | TraceFormat::Csv => Container::Csv,
        TraceFormat::Auto => container_of(path, first_line),
    };
    let given = [&columns.time, &columns.input, &columns.output];
    let builtin = match format {
        TraceFormat::Mooncake => Some(MOONCAKE),
        TraceFormat::BurstGpt => Some(BURSTGPT),
        _ if given.iter().all(|c| c.is_some()) => None,
        _ => {
            let members = members(container, first_line);
            let has = |b: &Builtin| b.columns.iter().all(|c| members.iter().any(|m| m == c));
            let found = [MOONCAKE, BURSTGPT].into_iter().find(|b| has(b));
            if found.is_none() {
                return Err(format!(
                    "cannot tell the trace's layout from its first line (columns: {}); name the columns with --trace-columns time=COL,input=COL,output=COL",
                    members.join(", ")
                ));
            }
            found
        }
    };
    let names: [String; 3] = std::array::from_fn(|i| match (given[i], &builtin) {
        (Some(c), _) => c.clone(),
        (None, Some(b)) => b.columns[i].to_string(),
        // Unreachable: without a built-in layout every column was given.
        (None, None) => String::new(),
    });
    let custom = given.iter().any(|c| c.is_some());
    let name = match (&builtin, container) {
        (Some(b), _) if !custom => b.name,
        (_, Container::Jsonl) => "jsonl",
        (_, Container::Csv) => "csv",
    };
    Ok(Layout {
        container,
        name,
        columns: names,
        unit: unit.or(builtin.map(|b| b.unit)).unwrap_or(TimeUnit::S),
    })
}

/// JSONL by extension (`.jsonl`, `.ndjson`, `.json`) or CSV (`.csv`); otherwise a first line
/// that opens a JSON object.
fn container_of(path: &Path, first_line: &str) -> Container {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext.to_ascii_lowercase().as_str() {
        "jsonl" | "ndjson" | "json" => Container::Jsonl,
        "csv" => Container::Csv,
        _ if first_line.trim_start().starts_with('{') => Container::Jsonl,
        _ => Container::Csv,
    }
}

/// The member names of a JSON object line, or the fields of a CSV header line.
pub(super) fn members(container: Container, first_line: &str) -> Vec<String> {
    match container {
        Container::Jsonl => {
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(first_line)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        }
        Container::Csv => csv::ReaderBuilder::new()
            .has_headers(false)
            .trim(csv::Trim::All)
            .from_reader(first_line.as_bytes())
            .records()
            .next()
            .and_then(Result::ok)
            .map(|r| r.iter().map(str::to_string).collect())
            .unwrap_or_default(),
    }
}

/// Why a `time=COL,input=COL,output=COL` text names no columns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ColumnsError {
    /// A part has no `=`.
    #[error("expected ROLE=COLUMN, got `{0}`")]
    NotPair(String),
    /// A part's column name is empty.
    #[error("`{0}` names no column")]
    NoColumn(String),
    /// A part's role is not `time`, `input` or `output`.
    #[error("unknown role `{role}`; the roles are {}", ROLES.join(", "))]
    UnknownRole {
        /// The role as given.
        role: String,
    },
    /// A role is named twice.
    #[error("`{0}` is given twice")]
    Twice(String),
}

/// Parses `time=COL,input=COL,output=COL` (any subset, any order); a column name may hold
/// spaces but not commas.
pub fn parse_columns(s: &str) -> Result<Columns, ColumnsError> {
    let mut columns = Columns::default();
    for part in s.split(',') {
        let (key, name) = part
            .split_once('=')
            .ok_or_else(|| ColumnsError::NotPair(part.to_owned()))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(ColumnsError::NoColumn(part.to_owned()));
        }
        let slot = match key.trim() {
            "time" => &mut columns.time,
            "input" => &mut columns.input,
            "output" => &mut columns.output,
            other => {
                return Err(ColumnsError::UnknownRole {
                    role: other.to_owned(),
                })
            }
        };
        if slot.replace(name.to_string()).is_some() {
            return Err(ColumnsError::Twice(key.trim().to_owned()));
        }
    }
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOON: &str =
        r#"{"timestamp": 0, "input_length": 5, "output_length": 2, "hash_ids": [1]}"#;
    const BURST: &str = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type";

    fn auto(path: &str, first: &str, columns: &Columns) -> Result<Layout, String> {
        resolve(TraceFormat::Auto, Path::new(path), first, columns, None)
    }

    #[test]
    fn auto_detects_the_built_in_layouts_by_members_whatever_the_extension() {
        let m = auto("trace.jsonl", MOON, &Columns::default()).unwrap();
        assert_eq!(
            (m.container, m.name, m.unit),
            (Container::Jsonl, "mooncake", TimeUnit::Ms)
        );
        let m = auto("trace.txt", MOON, &Columns::default()).unwrap();
        assert_eq!(m.container, Container::Jsonl);
        let b = auto("BurstGPT_1.csv", BURST, &Columns::default()).unwrap();
        assert_eq!(
            (b.container, b.name, b.unit),
            (Container::Csv, "burstgpt", TimeUnit::S)
        );
        assert_eq!(b.columns[2], "Response tokens");
        let b = auto("log", BURST, &Columns::default()).unwrap();
        assert_eq!(b.container, Container::Csv);
    }

    #[test]
    fn an_unknown_layout_asks_for_columns_and_lists_the_file_s() {
        let e = auto("x.csv", "t,a,b", &Columns::default()).unwrap_err();
        assert!(
            e.contains("--trace-columns") && e.contains("t, a, b"),
            "{e}"
        );
        let columns = parse_columns("time=t,input=a,output=b").unwrap();
        let g = auto("x.csv", "t,a,b", &columns).unwrap();
        assert_eq!((g.name, g.unit), ("csv", TimeUnit::S));
        assert_eq!(g.columns, ["t", "a", "b"]);
    }

    #[test]
    fn given_columns_and_unit_override_the_built_in_ones() {
        let columns = parse_columns("output=Total tokens").unwrap();
        let l = resolve(
            TraceFormat::Auto,
            Path::new("b.csv"),
            BURST,
            &columns,
            Some(TimeUnit::Ms),
        )
        .unwrap();
        assert_eq!(l.columns, ["Timestamp", "Request tokens", "Total tokens"]);
        assert_eq!((l.name, l.unit), ("csv", TimeUnit::Ms));
    }

    #[test]
    fn columns_parse_by_role() {
        assert_eq!(
            parse_columns("time=a,when=b").unwrap_err().to_string(),
            "unknown role `when`; the roles are time, input, output"
        );
        assert!(parse_columns("time=a,time=b").is_err());
        assert!(parse_columns("time").is_err());
        assert!(parse_columns("time=").is_err());
    }
}
