//! llama-benchy's adapt step (`runner.py`): the server counts more prompt tokens than the text
//! holds (its chat template, a BOS), so llama-benchy measures that excess with its warm-up
//! requests and asks for that many fewer tokens. With no depth it shortens the prompt by
//! `delta_user`; with a depth it shortens the context by `delta_context`, each to no less than
//! one token (`max(1, x - delta)`).
//!
//! The schedule's text is already made, so fire cuts it: the text is encoded in the model's
//! tokenizer (the one arrivals named in its header), its last `delta` tokens dropped and the
//! rest decoded. A delta of zero or less leaves the text alone (a text cannot be lengthened).

use super::probe::{warmup_text, PROBE_USER};
use std::path::Path;
use tokenizers::Tokenizer;
use tokenpipe_format::Request;

/// The two deltas of llama-benchy's warm-up, from the server's counts and the local ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deltas {
    /// Server's tokens for the user-only warm-up minus the text's own.
    pub user: i64,
    /// Server's tokens for the system-and-probe warm-up minus the text's and the probe's.
    pub context: i64,
}

impl Deltas {
    /// llama-benchy's `warmup`: `delta_user` is 0 when the first answer had no usage, and
    /// `delta_context` is `delta_user` when the second had none.
    pub fn of(counts: [Option<u64>; 2], tokenizer: &Tokenizer) -> Self {
        let local = count(tokenizer, &warmup_text());
        let probe = count(tokenizer, PROBE_USER);
        let user = counts[0].map_or(0, |server| server as i64 - local);
        let context = counts[1].map_or(user, |server| server as i64 - local - probe);
        Self { user, context }
    }
}

/// Which part of each request is cut, and by how many tokens.
pub struct Adapt {
    tokenizer: Tokenizer,
    /// Tokens taken off the end of the part.
    cut: u64,
    /// The system context (a depth) rather than the prompt.
    context: bool,
}

impl Adapt {
    /// The cut llama-benchy makes at `depth` for `deltas`: the prompt's by the user delta at
    /// depth 0, the context's by the context delta otherwise.
    pub fn new(tokenizer: Tokenizer, deltas: Deltas, depth: u64) -> Self {
        let (delta, context) = match depth {
            0 => (deltas.user, false),
            _ => (deltas.context, true),
        };
        Self {
            tokenizer,
            cut: u64::try_from(delta).unwrap_or(0),
            context,
        }
    }

    /// Tokens each request loses (`adapt_tokens` in fire's header).
    pub fn tokens(&self) -> u64 {
        self.cut
    }

    /// Cuts `req`'s prompt (or its system context) by the delta, keeping at least one token.
    pub fn apply(&self, req: &mut Request) {
        if self.cut == 0 {
            return;
        }
        let part = match self.context {
            true => req.system.as_mut(),
            false => req.prompt.as_mut(),
        };
        let Some(text) = part else { return };
        let Ok(encoding) = self.tokenizer.encode(text.as_str(), false) else {
            return;
        };
        let ids = encoding.get_ids();
        let keep = (ids.len() as u64).saturating_sub(self.cut).max(1) as usize;
        if keep >= ids.len() {
            return;
        }
        if let Ok(shorter) = self.tokenizer.decode(&ids[..keep], false) {
            *text = shorter;
            if let Some(n) = req.prompt_tokens.as_mut() {
                *n = n.saturating_sub((ids.len() - keep) as u64);
            }
        }
    }
}

/// Loads the `tokenizer.json` at `path` with its truncation and padding off.
pub fn load(path: &Path) -> Result<Tokenizer, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let mut tokenizer = Tokenizer::from_bytes(&bytes)
        .map_err(|e| format!("not a Hugging Face tokenizer.json: {e}"))?;
    tokenizer
        .with_truncation(None)
        .map_err(|e| format!("cannot turn off truncation: {e}"))?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}

/// Tokens of `text` without special tokens, as llama-benchy's `encode(add_special_tokens=False)`.
fn count(tokenizer: &Tokenizer, text: &str) -> i64 {
    tokenizer
        .encode(text, false)
        .map_or(0, |e| e.get_ids().len() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenizers::models::wordlevel::WordLevel;
    use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;

    /// Words `w0 … w49`, `Warmup` and `.`, one token each.
    fn tokenizer() -> Tokenizer {
        let vocab = (0..50u32)
            .map(|i| (format!("w{i}"), i))
            .chain([("Warmup".to_string(), 50), (".".to_string(), 51)])
            .collect();
        let model = WordLevel::builder()
            .vocab(vocab)
            .unk_token("w0".into())
            .build()
            .unwrap();
        let mut t = Tokenizer::new(model);
        t.with_pre_tokenizer(Some(WhitespaceSplit));
        t
    }

    fn words(n: u32) -> String {
        (0..n)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_deltas_are_the_servers_counts_less_the_local_ones() {
        let t = tokenizer();
        // 10 words locally; the server adds its template's 21 (user) and 25 (system + probe).
        let d = Deltas::of([Some(31), Some(36)], &t);
        assert_eq!(
            d,
            Deltas {
                user: 21,
                context: 25
            }
        );
        assert_eq!(
            Deltas::of([None, None], &t),
            Deltas {
                user: 0,
                context: 0
            }
        );
        assert_eq!(
            Deltas::of([Some(31), None], &t),
            Deltas {
                user: 21,
                context: 21
            }
        );
        assert_eq!(
            Deltas::of([Some(8), Some(9)], &t),
            Deltas {
                user: -2,
                context: -2
            }
        );
    }

    #[test]
    fn depth_0_cuts_the_prompt_and_a_depth_the_context_never_below_one_token() {
        let deltas = Deltas {
            user: 3,
            context: 5,
        };
        let mut req = Request {
            prompt: Some(words(10)),
            system: Some(words(8)),
            prompt_tokens: Some(18),
            ..Request::default()
        };
        Adapt::new(tokenizer(), deltas, 0).apply(&mut req);
        assert_eq!(req.prompt.as_deref(), Some(words(7).as_str()));
        assert_eq!(req.system.as_deref(), Some(words(8).as_str()));
        assert_eq!(req.prompt_tokens, Some(15));
        let adapt = Adapt::new(tokenizer(), deltas, 8);
        assert_eq!(adapt.tokens(), 5);
        adapt.apply(&mut req);
        assert_eq!(req.system.as_deref(), Some(words(3).as_str()));
        let mut short = Request {
            prompt: Some(words(2)),
            ..Request::default()
        };
        Adapt::new(tokenizer(), deltas, 0).apply(&mut short);
        assert_eq!(short.prompt.as_deref(), Some("w0"));
        let mut same = Request {
            prompt: Some(words(4)),
            ..Request::default()
        };
        let none = Adapt::new(
            tokenizer(),
            Deltas {
                user: -2,
                context: 0,
            },
            0,
        );
        assert_eq!(none.tokens(), 0);
        none.apply(&mut same);
        assert_eq!(same.prompt.as_deref(), Some(words(4).as_str()));
    }
}
