//! The completions dialect: `POST {url}/completions` with `prompt` as text or token ids; content
//! arrives in `choices[].text`.
//!
//! The completions API has no messages, so a system prompt and a session's history are joined
//! into one text prompt: `system`, then each earlier turn's prompt immediately followed by the
//! answer it got (the answer continued that prompt, so the bytes are exactly those the server
//! saw and produced, and its prefix cache can reuse them), then the new prompt, the parts
//! separated by [`SEPARATOR`]. Token-id prompts cannot be joined with text: a system prompt or a
//! history with them is refused.

use super::chunk::ChunkInfo;
use super::{encode_body, prefix, BodyError, BodyOptions, ChunkPrefix, Dialect, PastTurn};
use bytes::Bytes;
use serde::Serialize;
use tokenpipe_format::Request;

/// `POST /completions`.
pub struct Completions;

/// Between the system prompt, the earlier turns and the new prompt: a blank line.
pub const SEPARATOR: &str = "\n\n";

#[derive(Serialize)]
struct Input<'a> {
    prompt: Prompt<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Prompt<'a> {
    Text(&'a str),
    Joined(String),
    Ids(&'a [u32]),
}

/// The one text prompt that carries a system prompt, a history and the new prompt.
fn joined(system: Option<&str>, history: &[PastTurn], prompt: &str) -> String {
    let mut out = String::new();
    if let Some(system) = system {
        out.push_str(system);
        out.push_str(SEPARATOR);
    }
    for past in history {
        out.push_str(&past.prompt);
        out.push_str(&past.answer);
        out.push_str(SEPARATOR);
    }
    out.push_str(prompt);
    out
}

impl Dialect for Completions {
    fn read_stream_chunk<'a>(
        &self,
        data: &'a [u8],
        prefix: &mut ChunkPrefix,
    ) -> Result<ChunkInfo<'a>, serde_json::Error> {
        prefix::read_chunk_after(data, prefix)
    }

    fn path(&self) -> &'static str {
        "/completions"
    }

    fn encode(
        &self,
        req: &Request,
        history: &[PastTurn],
        opts: &BodyOptions,
    ) -> Result<Bytes, BodyError> {
        let plain = req.system.is_none() && history.is_empty();
        let prompt = match (&req.prompt, &req.prompt_token_ids) {
            (Some(text), _) if plain => Prompt::Text(text),
            (Some(text), _) => Prompt::Joined(joined(req.system.as_deref(), history, text)),
            (None, Some(ids)) if plain => Prompt::Ids(ids),
            (None, Some(_)) if req.system.is_some() => return Err(BodyError::SystemWithTokenIds),
            (None, Some(_)) => return Err(BodyError::LaterTurnWithTokenIds),
            (None, None) => return Err(BodyError::NoPrompt),
        };
        encode_body(req, opts, Input { prompt })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::tests::req;

    fn opts() -> BodyOptions {
        BodyOptions {
            model: Some("m".into()),
            ignore_eos: true,
            ..BodyOptions::default()
        }
    }

    #[test]
    fn text_and_id_prompts() {
        let b = Completions.encode(&req(), &[], &opts()).unwrap();
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"model":"m","prompt":"hi \"there\"","max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}"#
        );
        let mut ids = req();
        ids.prompt = None;
        ids.prompt_token_ids = Some(vec![1, 2]);
        assert!(
            std::str::from_utf8(&Completions.encode(&ids, &[], &opts()).unwrap())
                .unwrap()
                .contains(r#""prompt":[1,2]"#)
        );
        ids.system = Some("s".into());
        assert!(Completions
            .encode(&ids, &[], &opts())
            .unwrap_err()
            .to_string()
            .contains("\"system\""));
        ids.system = None;
        let past = [PastTurn::default()];
        assert!(Completions
            .encode(&ids, &past, &opts())
            .unwrap_err()
            .to_string()
            .contains("later turn"));
        ids.prompt_token_ids = None;
        assert!(Completions
            .encode(&ids, &[], &opts())
            .unwrap_err()
            .to_string()
            .contains("prompt"));
    }

    #[test]
    fn system_and_history_are_joined_into_one_prompt() {
        let mut r = req();
        r.prompt = Some("p1".into());
        r.system = Some("sys".into());
        let history = [PastTurn {
            prompt: "p0".into(),
            answer: " a0".into(),
        }];
        let b = Completions.encode(&r, &history, &opts()).unwrap();
        assert!(std::str::from_utf8(&b)
            .unwrap()
            .contains(r#""prompt":"sys\n\np0 a0\n\np1""#));
    }
}
