//! Prompts from a ShareGPT file, sampled as `vllm bench serve --dataset-name sharegpt` does, so
//! that a run here and a run of vLLM's benchmark send the same kind of requests.
//!
//! The file is one JSON array, `[{"conversations": [{"from": "human", "value": ...}, ...]}]`,
//! read whole (the conversations are held in memory, about the size of the file). vLLM's rules:
//!
//! 1. conversations with fewer than two messages are dropped;
//! 2. the rest are shuffled: here with the seed's own stream [`crate::streams::DATASET`]
//!    (a Fisher–Yates shuffle drawing `j` uniform in `0..=i` for `i` from the end down), so the
//!    order depends on `--seed` alone and never on how many prompts were drawn before;
//! 3. in that order, the first message is the prompt and the second the completion; the output
//!    length is the fixed one (`--output-tokens`, vLLM's `--sharegpt-output-len`) when given,
//!    else the completion's length;
//! 4. a conversation is skipped when its prompt has fewer than 4 tokens, its output fewer than
//!    4 (not checked with a fixed output length), its prompt more than 1024, or prompt and
//!    output together more than 2048 ([`is_valid`]);
//! 5. conversations are taken until the schedule has its prompts; a file that runs out first is
//!    an error saying how many were usable.
//!
//! Lengths are the [`TokenMaker`]'s count: exact with a tokenizer, one token per four characters
//! without one, so without a tokenizer the filter keeps a slightly different set than vLLM does.
//!
//! Sessions (`--turns T`): turn 0 is the conversation's prompt as above; turn `t` is the
//! conversation's `t`-th later human message (`"from": "human"` or `"user"`, after the first
//! answer), whose answer length is that of the message after it. A conversation with fewer human
//! messages repeats its last one for the remaining turns, so every session has its `T` turns.
//! Later turns are not filtered.

use super::maker::TokenMaker;
use super::{Ask, Content, Prompt, PromptError, PromptSource, SaltAlphabet, MAX_TOKENS};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

/// Fewest tokens in a prompt, and in an output whose length is not fixed (vLLM's `min_len`).
pub const MIN_LEN: u64 = 4;
/// Most tokens in a prompt (vLLM's `max_prompt_len`).
pub const MAX_PROMPT_LEN: u64 = 1024;
/// Most tokens in prompt and output together (vLLM's `max_total_len`).
pub const MAX_TOTAL_LEN: u64 = 2048;

/// vLLM's `is_valid_sequence` with its default limits: whether a conversation of these lengths
/// is kept. `fixed_output` skips the output's minimum, as vLLM does when the output length is
/// given.
pub fn is_valid(prompt_len: u64, output_len: u64, fixed_output: bool) -> bool {
    let prompt_too_short = prompt_len < MIN_LEN;
    let output_too_short = !fixed_output && output_len < MIN_LEN;
    let prompt_too_long = prompt_len > MAX_PROMPT_LEN;
    let total_too_long = prompt_len.saturating_add(output_len) > MAX_TOTAL_LEN;
    !(prompt_too_short || output_too_short || prompt_too_long || total_too_long)
}

/// One entry of the file; members other than `conversations` are ignored.
#[derive(Deserialize)]
struct Entry {
    conversations: Vec<Message>,
}

/// One message of a conversation.
#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    from: Option<String>,
    value: String,
}

impl Message {
    fn human(&self) -> bool {
        matches!(self.from.as_deref(), Some("human" | "user"))
    }
}

/// A conversation taken for a session: where it is, and its first turn's lengths.
#[derive(Debug, Clone, Copy)]
struct Pick {
    conversation: usize,
    prompt_tokens: u64,
    output_tokens: u64,
}

/// The ShareGPT source: conversations in shuffled order, taken as vLLM takes them.
pub struct ShareGpt {
    name: String,
    /// Conversations of two messages or more, shuffled.
    conversations: Vec<Vec<Message>>,
    /// The next conversation to look at.
    next: usize,
    /// The conversations taken so far, in order.
    picked: Vec<Pick>,
    /// Sessions started so far.
    sessions: usize,
    /// The session in progress.
    current: Option<Pick>,
    maker: Box<dyn TokenMaker>,
    fixed_output: Option<u64>,
    warned_cycle: bool,
}

impl ShareGpt {
    /// Reads `path` and shuffles it with `rng` (the seed's dataset stream). With `needed`
    /// sessions known, takes them now, so that a file with too few usable conversations fails
    /// before any output.
    pub fn open(
        path: &Path,
        maker: Box<dyn TokenMaker>,
        fixed_output: Option<u64>,
        needed: Option<u64>,
        rng: &mut ChaCha8Rng,
    ) -> Result<Self, PromptError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| PromptError::new(format!("{name}: {e}")))?;
        let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 20, file));
        let shape = |at: String, e: serde_json::Error| {
            if e.is_io() {
                PromptError::new(format!("{name}: {e}"))
            } else {
                PromptError::new(format!(
                    "{name}: not a ShareGPT array of conversations: {at}{e}"
                ))
            }
        };
        let entries: Vec<Entry> = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let at = match e.path().to_string() {
                p if p == "." => String::new(),
                p => format!("at {p}: "),
            };
            shape(at, e.into_inner())
        })?;
        de.end().map_err(|e| shape(String::new(), e))?;
        Self::from_conversations(
            name,
            entries.into_iter().map(|e| e.conversations).collect(),
            maker,
            fixed_output,
            needed,
            rng,
        )
    }

    fn from_conversations(
        name: String,
        conversations: Vec<Vec<Message>>,
        maker: Box<dyn TokenMaker>,
        fixed_output: Option<u64>,
        needed: Option<u64>,
        rng: &mut ChaCha8Rng,
    ) -> Result<Self, PromptError> {
        let mut conversations: Vec<Vec<Message>> =
            conversations.into_iter().filter(|c| c.len() >= 2).collect();
        shuffle(&mut conversations, rng);
        let mut source = ShareGpt {
            name,
            conversations,
            next: 0,
            picked: vec![],
            sessions: 0,
            current: None,
            maker,
            fixed_output,
            warned_cycle: false,
        };
        if let Some(n) = needed {
            while (source.picked.len() as u64) < n {
                if !source.take_one() {
                    return Err(source.short(Some(n)));
                }
            }
        }
        Ok(source)
    }

    /// Looks at conversations in order until one passes the filter; false when none is left.
    fn take_one(&mut self) -> bool {
        while let Some(messages) = self.conversations.get(self.next) {
            let conversation = self.next;
            self.next += 1;
            let prompt_tokens = self.maker.count(&messages[0].value);
            let output_tokens = self
                .fixed_output
                .unwrap_or_else(|| self.maker.count(&messages[1].value));
            if is_valid(prompt_tokens, output_tokens, self.fixed_output.is_some()) {
                self.picked.push(Pick {
                    conversation,
                    prompt_tokens,
                    output_tokens,
                });
                return true;
            }
        }
        false
    }

    fn short(&self, needed: Option<u64>) -> PromptError {
        let with_two = self.conversations.len();
        let usable = self.picked.len();
        let wanted = needed.map_or(String::new(), |n| format!(", and the schedule needs {n}"));
        PromptError::new(format!(
            "{}: {usable} of its {with_two} conversations with two messages or more pass vLLM's \
             ShareGPT filter (prompt 4 to 1024 tokens, answer at least 4, both at most 2048){wanted}",
            self.name
        ))
    }

    /// The conversation for the next session: the next one taken, or, once the file is spent
    /// with no count to meet (a run bounded by time), the taken ones again from the first.
    fn next_session(&mut self) -> Result<Pick, PromptError> {
        let i = self.sessions;
        self.sessions += 1;
        if i >= self.picked.len() && !self.take_one() {
            if self.picked.is_empty() {
                return Err(self.short(None));
            }
            if !self.warned_cycle {
                self.warned_cycle = true;
                eprintln!(
                    "arrivals: note: {}: all {} usable conversations sent; starting again from the first",
                    self.name,
                    self.picked.len()
                );
            }
            return Ok(self.picked[i % self.picked.len()]);
        }
        Ok(self.picked[i])
    }

    /// Turn `turn` (from 1) of the conversation `pick`: its human message and answer length.
    fn later_turn(&self, pick: Pick, turn: u32) -> (&str, u64) {
        let messages = &self.conversations[pick.conversation];
        let humans: Vec<usize> = (2..messages.len())
            .filter(|&i| messages[i].human())
            .collect();
        let at = match humans.len() {
            0 => 0,
            n => humans[(turn as usize - 1).min(n - 1)],
        };
        let answer = match messages.get(at + 1) {
            Some(m) if !m.human() => self.maker.count(&m.value),
            _ => pick.output_tokens,
        };
        (&messages[at].value, answer)
    }
}

/// Shuffles `items` in place: Fisher–Yates from the last item down, `j` uniform in `0..=i`.
fn shuffle<T>(items: &mut [T], rng: &mut ChaCha8Rng) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i as u64) as usize;
        items.swap(i, j);
    }
}

impl PromptSource for ShareGpt {
    fn next_prompt(&mut self, ask: &Ask, _rng: &mut ChaCha8Rng) -> Result<Prompt, PromptError> {
        let pick = match (ask.turn, self.current) {
            (0, _) | (_, None) => {
                let pick = self.next_session()?;
                self.current = Some(pick);
                pick
            }
            (_, Some(pick)) => pick,
        };
        let (text, prompt_tokens, answer) = if ask.turn == 0 {
            let text = &self.conversations[pick.conversation][0].value;
            (text.as_str(), pick.prompt_tokens, pick.output_tokens)
        } else {
            let (text, answer) = self.later_turn(pick, ask.turn);
            (text, self.maker.count(text), answer)
        };
        let max_tokens = ask
            .output_tokens
            .or(self.fixed_output)
            .unwrap_or(answer)
            .clamp(1, MAX_TOKENS);
        Ok(Prompt {
            content: Content::Text(text.to_string()),
            prompt_tokens: Some(prompt_tokens),
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
    use super::*;
    use rand::SeedableRng;

    /// Counts whitespace-separated words, so that tests set lengths exactly.
    struct WordCount;

    impl TokenMaker for WordCount {
        fn make(&mut self, _n: u64, _rng: &mut ChaCha8Rng) -> Content {
            Content::Text(String::new())
        }
        fn exact(&self) -> bool {
            true
        }
        fn count(&self, text: &str) -> u64 {
            text.split_whitespace().count() as u64
        }
    }

    fn words(n: u64) -> String {
        vec!["w"; n as usize].join(" ")
    }

    fn msg(from: &str, value: String) -> Message {
        Message {
            from: Some(from.into()),
            value,
        }
    }

    fn pair(prompt: u64, answer: u64) -> Vec<Message> {
        vec![msg("human", words(prompt)), msg("gpt", words(answer))]
    }

    fn source(
        convs: Vec<Vec<Message>>,
        fixed: Option<u64>,
        needed: Option<u64>,
        seed: u64,
    ) -> Result<ShareGpt, PromptError> {
        let mut rng = crate::seed_stream(seed, crate::streams::DATASET);
        ShareGpt::from_conversations(
            "t.json".into(),
            convs,
            Box::new(WordCount),
            fixed,
            needed,
            &mut rng,
        )
    }

    fn ask(index: u64, turn: u32) -> Ask {
        Ask {
            index,
            turn,
            ..Ask::default()
        }
    }

    fn prompts(s: &mut ShareGpt, n: u64) -> Vec<Prompt> {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        (0..n)
            .map(|i| s.next_prompt(&ask(i, 0), &mut rng).unwrap())
            .collect()
    }

    #[test]
    fn filter_boundaries_are_vllms() {
        // Prompt 3 vs 4 tokens, output 3 vs 4.
        assert!(!is_valid(3, 100, false));
        assert!(is_valid(4, 100, false));
        assert!(!is_valid(100, 3, false));
        assert!(is_valid(100, 4, false));
        // A fixed output skips the output minimum only.
        assert!(is_valid(100, 1, true));
        assert!(!is_valid(3, 100, true));
        // Prompt 1024 vs 1025.
        assert!(is_valid(1024, 4, false));
        assert!(!is_valid(1025, 4, false));
        // Total 2048 vs 2049.
        assert!(is_valid(1024, 1024, false));
        assert!(!is_valid(1024, 1025, false));
        assert!(!is_valid(1000, 1049, true));
    }

    #[test]
    fn only_conversations_passing_the_filter_are_sent() {
        let convs = vec![
            pair(3, 10),                   // prompt too short
            pair(4, 10),                   // kept
            pair(10, 3),                   // answer too short
            pair(1025, 4),                 // prompt too long
            pair(1024, 1025),              // too long together
            pair(1024, 1024),              // kept
            vec![msg("human", words(10))], // one message: dropped before the shuffle
        ];
        let mut s = source(convs, None, Some(2), 1).unwrap();
        let mut got: Vec<(Option<u64>, u64)> = prompts(&mut s, 2)
            .iter()
            .map(|p| (p.prompt_tokens, p.max_tokens))
            .collect();
        got.sort();
        assert_eq!(got, [(Some(4), 10), (Some(1024), 1024)]);
    }

    #[test]
    fn a_fixed_output_replaces_the_answer_length_and_its_minimum() {
        let convs = vec![pair(10, 1), pair(2000, 1)];
        let mut s = source(convs, Some(7), Some(1), 1).unwrap();
        let p = &prompts(&mut s, 1)[0];
        assert_eq!((p.prompt_tokens, p.max_tokens), (Some(10), 7));
    }

    #[test]
    fn too_few_usable_conversations_is_an_error_saying_how_many() {
        let convs = vec![pair(10, 10), pair(1, 10), pair(10, 10)];
        let err = source(convs, None, Some(3), 1).err().unwrap();
        assert!(err.message.contains("2 of its 3 conversations"), "{err}");
        assert!(err.message.contains("needs 3"), "{err}");
    }

    #[test]
    fn the_order_is_the_seeds() {
        let convs = || (0..20).map(|i| pair(4 + i, 10)).collect::<Vec<_>>();
        let order = |seed| {
            let mut s = source(convs(), None, Some(20), seed).unwrap();
            prompts(&mut s, 20)
                .into_iter()
                .map(|p| p.prompt_tokens)
                .collect::<Vec<_>>()
        };
        assert_eq!(order(5), order(5));
        assert_ne!(order(5), order(6));
        let mut all = order(5);
        all.sort();
        assert_eq!(all, (4..24).map(Some).collect::<Vec<_>>());
    }

    #[test]
    fn without_a_count_the_usable_conversations_come_round_again() {
        let convs = vec![pair(5, 10), pair(6, 10), pair(1, 1)];
        let mut s = source(convs, None, None, 3).unwrap();
        let got: Vec<_> = prompts(&mut s, 5)
            .into_iter()
            .map(|p| p.prompt_tokens)
            .collect();
        assert_eq!(got[2..4], got[0..2]);
        assert_eq!(got[4], got[0]);
        let mut empty = source(vec![pair(1, 1)], None, None, 3).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!(empty.next_prompt(&ask(0, 0), &mut rng).is_err());
    }

    #[test]
    fn later_turns_take_later_human_messages_then_repeat_the_last() {
        let convs = vec![vec![
            msg("human", words(5)),
            msg("gpt", words(6)),
            msg("human", words(7)),
            msg("gpt", words(8)),
        ]];
        let mut s = source(convs, None, Some(1), 1).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let got: Vec<_> = (0..3)
            .map(|t| {
                let p = s.next_prompt(&ask(u64::from(t), t), &mut rng).unwrap();
                (p.prompt_tokens, p.max_tokens)
            })
            .collect();
        assert_eq!(got, [(Some(5), 6), (Some(7), 8), (Some(7), 8)]);
    }

    #[test]
    fn bad_files_are_errors_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("tp-sharegpt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let open = |body: &str| {
            let path = dir.join("d.json");
            std::fs::write(&path, body).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            ShareGpt::open(&path, Box::new(WordCount), None, None, &mut rng)
                .err()
                .map(|e| e.message)
                .unwrap_or_default()
        };
        let e = open("[{\"conversations\": [}]");
        assert!(e.contains("d.json") && e.contains("line 1 column"), "{e}");
        let e = open("[{\"id\": 1},\n {\"x\": 2}]");
        assert!(e.contains("conversations") && e.contains("line"), "{e}");
        let e = open("[{\"conversations\": [{\"from\": \"human\", \"value\": 3}]}]");
        assert!(e.contains("[0].conversations[0].value"), "{e}");
        let e = open("{}");
        assert!(e.contains("d.json"), "{e}");
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let missing = ShareGpt::open(
            &dir.join("none.json"),
            Box::new(WordCount),
            None,
            None,
            &mut rng,
        );
        assert!(missing.err().unwrap().message.contains("none.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_fixture_keeps_what_vllms_filter_keeps() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/arrivals/sharegpt.json"
        ));
        let open = |needed| {
            let mut rng = crate::seed_stream(1, crate::streams::DATASET);
            ShareGpt::open(
                path,
                Box::new(super::super::Words),
                None,
                Some(needed),
                &mut rng,
            )
        };
        assert!(open(18).is_ok());
        let err = open(19).err().unwrap().message;
        assert!(err.contains("18 of its 20 conversations"), "{err}");
    }
}
