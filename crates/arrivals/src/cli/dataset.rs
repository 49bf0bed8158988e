//! The flag that takes prompts from a dataset file instead of making them.

use clap::Args;
use std::path::PathBuf;

/// Where prompts come from when they are not made.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Datasets")]
pub struct Datasets {
    /// Take prompts from a file, KIND:PATH. `sharegpt:FILE` reads a ShareGPT JSON array whole
    /// and samples it as `vllm bench serve --dataset-name sharegpt` does (shuffled by --seed;
    /// first message as the prompt, the answer's length as max_tokens unless --output-tokens
    /// is given). `jsonl:FILE` streams one `{"prompt": ..., "output_tokens": N}` object a line,
    /// in order, starting again from the top when the schedule needs more. Prompt lengths are
    /// counted approximately (one token per 4 characters) without a tokenizer. A trace sets
    /// its own lengths, so --trace takes synthetic prompts instead.
    #[arg(long, value_name = "KIND:PATH", value_parser = parse_dataset,
          conflicts_with_all = [
              "same_prompt", "prefix_tokens", "scenario", "token_ids", "input_tokens",
              "input_range", "input_dist", "output_range", "output_dist", "range_ratio", "trace",
          ])]
    pub dataset: Option<Dataset>,
}

/// A dataset named on the command line: its format and its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dataset {
    /// How the file is laid out.
    pub kind: DatasetKind,
    /// The file, as given.
    pub path: PathBuf,
}

/// The dataset formats `arrivals` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetKind {
    /// A ShareGPT JSON array of conversations, sampled as vLLM does.
    ShareGpt,
    /// One JSON object per line with a `prompt`.
    Jsonl,
}

impl DatasetKind {
    /// The name used on the command line and in the header.
    pub fn name(self) -> &'static str {
        match self {
            DatasetKind::ShareGpt => "sharegpt",
            DatasetKind::Jsonl => "jsonl",
        }
    }
}

fn parse_dataset(s: &str) -> Result<Dataset, String> {
    let (kind, path) = s
        .split_once(':')
        .ok_or_else(|| format!("expected KIND:PATH (sharegpt:FILE or jsonl:FILE), got `{s}`"))?;
    let kind = match kind {
        "sharegpt" => DatasetKind::ShareGpt,
        "jsonl" => DatasetKind::Jsonl,
        other => {
            return Err(format!(
                "unknown dataset kind `{other}`: expected sharegpt or jsonl"
            ))
        }
    };
    if path.is_empty() {
        return Err(format!("`{s}` names no file"));
    }
    Ok(Dataset {
        kind,
        path: PathBuf::from(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_and_path_parse() {
        assert_eq!(
            parse_dataset("sharegpt:/data/a:b.json"),
            Ok(Dataset {
                kind: DatasetKind::ShareGpt,
                path: PathBuf::from("/data/a:b.json"),
            })
        );
        assert_eq!(
            parse_dataset("jsonl:p.jsonl").map(|d| d.kind),
            Ok(DatasetKind::Jsonl)
        );
        assert!(parse_dataset("p.jsonl").is_err());
        assert!(parse_dataset("csv:p.csv").is_err());
        assert!(parse_dataset("jsonl:").is_err());
    }
}
