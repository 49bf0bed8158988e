//! Prompts from a JSONL file: one object a line, sent in the file's order, so that a workload
//! captured elsewhere can be replayed prompt for prompt.
//!
//! Each line is `{"prompt": "...", "output_tokens": N}`; `max_tokens` is read where
//! `output_tokens` is absent, and other members are ignored. Blank lines are skipped. The file is
//! streamed a line at a time and never held whole; when the schedule needs more prompts than it
//! holds, it is read again from the start (with a note on stderr). Every request, each turn of a
//! session included, takes the next line.
//!
//! A line that is not a JSON object, or whose `prompt` is not a string or whose length is not a
//! positive integer, ends the schedule with an error naming the file, the line and the field.

use super::maker::TokenMaker;
use super::{Ask, Content, Prompt, PromptError, PromptSource, SaltAlphabet, MAX_TOKENS};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

/// The JSONL source: the file's prompts in order, round and round.
pub struct Jsonl {
    name: String,
    reader: BufReader<File>,
    /// The line last read, from 1.
    line: u64,
    /// Prompts read since the file was last started.
    read: u64,
    line_buf: String,
    maker: Box<dyn TokenMaker>,
    fixed_output: Option<u64>,
    default_output: u64,
    warned_cycle: bool,
}

impl Jsonl {
    /// Opens `path`. `fixed_output` (an explicit `--output-tokens`) sets every answer's length;
    /// without it a line's own length is used, else `default_output`.
    pub fn open(
        path: &Path,
        maker: Box<dyn TokenMaker>,
        fixed_output: Option<u64>,
        default_output: u64,
    ) -> Result<Self, PromptError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| PromptError::new(format!("{name}: {e}")))?;
        Ok(Jsonl {
            name,
            reader: BufReader::new(file),
            line: 0,
            read: 0,
            line_buf: String::new(),
            maker,
            fixed_output,
            default_output,
            warned_cycle: false,
        })
    }

    fn error(&self, what: impl std::fmt::Display) -> PromptError {
        PromptError::new(format!("{}: line {}: {what}", self.name, self.line))
    }

    /// The next line that is not blank, starting the file again at its end.
    fn next_line(&mut self) -> Result<(), PromptError> {
        loop {
            self.line_buf.clear();
            let n = self.reader.read_line(&mut self.line_buf).map_err(|e| {
                self.line += 1;
                self.error(e)
            })?;
            if n == 0 {
                if self.read == 0 {
                    return Err(PromptError::new(format!("{}: holds no prompts", self.name)));
                }
                if !self.warned_cycle {
                    self.warned_cycle = true;
                    eprintln!(
                        "arrivals: note: {}: all {} prompts used; starting again from the first",
                        self.name, self.read
                    );
                }
                self.reader
                    .seek(SeekFrom::Start(0))
                    .map_err(|e| PromptError::new(format!("{}: {e}", self.name)))?;
                self.line = 0;
                self.read = 0;
                continue;
            }
            self.line += 1;
            if !self.line_buf.trim().is_empty() {
                return Ok(());
            }
        }
    }

    /// The current line's prompt and its own answer length, if it gives one.
    fn parse(&self) -> Result<(String, Option<u64>), PromptError> {
        let value: Value = serde_json::from_str(&self.line_buf).map_err(|e| self.error(e))?;
        let Value::Object(mut object) = value else {
            return Err(self.error("expected a JSON object"));
        };
        let prompt = match object.remove("prompt") {
            Some(Value::String(s)) => s,
            Some(_) => return Err(self.error("field \"prompt\": expected a string")),
            None => return Err(self.error("field \"prompt\": missing")),
        };
        let mut output = None;
        for field in ["output_tokens", "max_tokens"] {
            match object.get(field) {
                None | Some(Value::Null) => {}
                Some(v) => match v.as_u64().filter(|n| (1..=MAX_TOKENS).contains(n)) {
                    Some(n) => {
                        output = output.or(Some(n));
                    }
                    None => {
                        return Err(self.error(format!(
                            "field \"{field}\": expected an integer from 1 to {MAX_TOKENS}"
                        )))
                    }
                },
            }
        }
        Ok((prompt, output))
    }
}

impl PromptSource for Jsonl {
    fn next_prompt(&mut self, ask: &Ask, _rng: &mut ChaCha8Rng) -> Result<Prompt, PromptError> {
        self.next_line()?;
        let (text, own) = self.parse()?;
        self.read += 1;
        let max_tokens = ask
            .output_tokens
            .or(self.fixed_output)
            .or(own)
            .unwrap_or(self.default_output);
        Ok(Prompt {
            prompt_tokens: Some(self.maker.count(&text)),
            content: Content::Text(text),
            max_tokens,
            system: None,
        })
    }

    fn exact_lengths(&self) -> bool {
        self.maker.exact()
    }

    fn salt_alphabet(&self) -> SaltAlphabet {
        self.maker.salt_alphabet()
    }
}

#[cfg(test)]
mod tests {
    use super::super::maker::Words;
    use super::*;
    use rand::SeedableRng;

    struct Fixture(std::path::PathBuf);

    impl Fixture {
        fn new(tag: &str, body: &str) -> Fixture {
            let path =
                std::env::temp_dir().join(format!("tp-jsonl-{}-{tag}.jsonl", std::process::id()));
            std::fs::write(&path, body).unwrap();
            Fixture(path)
        }
        fn open(&self, fixed: Option<u64>) -> Jsonl {
            Jsonl::open(&self.0, Box::new(Words), fixed, 128).unwrap()
        }
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn take(s: &mut Jsonl, n: u64) -> Result<Vec<(String, u64)>, PromptError> {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        (0..n)
            .map(|i| {
                let p = s.next_prompt(
                    &Ask {
                        index: i,
                        ..Ask::default()
                    },
                    &mut rng,
                )?;
                match p.content {
                    Content::Text(t) => Ok((t, p.max_tokens)),
                    Content::TokenIds(_) => panic!("text expected"),
                }
            })
            .collect()
    }

    #[test]
    fn lines_come_in_order_with_their_lengths_and_cycle() {
        let f = Fixture::new(
            "cycle",
            "{\"prompt\": \"one\", \"output_tokens\": 5, \"id\": 1}\n\n{\"prompt\": \"two\", \"max_tokens\": 6}\n  \n{\"prompt\": \"three\"}",
        );
        let got = take(&mut f.open(None), 5).unwrap();
        let want = [
            ("one", 5),
            ("two", 6),
            ("three", 128),
            ("one", 5),
            ("two", 6),
        ];
        assert_eq!(got, want.map(|(t, n)| (t.to_string(), n)).to_vec());
        let fixed = take(&mut f.open(Some(9)), 2).unwrap();
        assert!(fixed.iter().all(|(_, n)| *n == 9));
    }

    #[test]
    fn prompt_tokens_are_the_makers_count() {
        let f = Fixture::new("count", "{\"prompt\": \"abcdefghi\"}\n");
        let mut s = f.open(None);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let p = s.next_prompt(&Ask::default(), &mut rng).unwrap();
        assert_eq!(p.prompt_tokens, Some(3));
        assert!(!s.exact_lengths());
    }

    #[test]
    fn malformed_lines_name_the_file_line_and_field() {
        for (tag, body, want) in [
            (
                "str",
                "{\"prompt\": \"a\"}\n\n{\"prompt\": 3}\n",
                "line 3: field \"prompt\": expected a string",
            ),
            (
                "miss",
                "{\"text\": \"a\"}\n",
                "line 1: field \"prompt\": missing",
            ),
            (
                "len",
                "{\"prompt\": \"a\", \"output_tokens\": 0}\n",
                "line 1: field \"output_tokens\": expected an integer",
            ),
            (
                "max",
                "{\"prompt\": \"a\", \"max_tokens\": \"9\"}\n",
                "line 1: field \"max_tokens\": expected an integer",
            ),
            ("obj", "[1]\n", "line 1: expected a JSON object"),
            (
                "json",
                "{\"prompt\": \"a\"}\n{\"prompt\": \n",
                "line 2: EOF while parsing",
            ),
        ] {
            let f = Fixture::new(tag, body);
            let err = take(&mut f.open(None), 3).unwrap_err().message;
            assert!(err.contains(".jsonl: ") && err.contains(want), "{err}");
        }
        let empty = Fixture::new("empty", "\n\n");
        assert!(take(&mut empty.open(None), 1)
            .unwrap_err()
            .message
            .contains("holds no prompts"));
        assert!(Jsonl::open(Path::new("/nonexistent/p.jsonl"), Box::new(Words), None, 1).is_err());
    }
}
