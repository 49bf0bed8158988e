//! The chat dialect: `POST {url}/chat/completions` with the conversation as messages:
//! `[system?, user p0, assistant a0, …, user pk]`, where each `a` is the answer the server
//! actually gave to that earlier turn. Content arrives in `choices[].delta.content` (or the
//! reasoning members), and a role-only first delta is not a token.

use super::chunk::ChunkInfo;
use super::{encode_body, prefix, BodyError, BodyOptions, ChunkPrefix, Dialect, PastTurn};
use bytes::Bytes;
use serde::Serialize;
use tokenpipe_format::Request;

/// `POST /chat/completions`.
pub struct Chat;

#[derive(Serialize)]
struct Input<'a> {
    messages: Vec<Message<'a>>,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}

impl Dialect for Chat {
    fn read_stream_chunk<'a>(
        &self,
        data: &'a [u8],
        prefix: &mut ChunkPrefix,
    ) -> Result<ChunkInfo<'a>, serde_json::Error> {
        prefix::read_chunk_after(data, prefix)
    }

    fn path(&self) -> &'static str {
        "/chat/completions"
    }

    fn encode(
        &self,
        req: &Request,
        history: &[PastTurn],
        opts: &BodyOptions,
    ) -> Result<Bytes, BodyError> {
        let content = match (&req.prompt, &req.prompt_token_ids) {
            (Some(text), _) => text,
            (None, Some(_)) => return Err(BodyError::ChatWithTokenIds),
            (None, None) => return Err(BodyError::NoPrompt),
        };
        let mut messages = Vec::with_capacity(2 + 2 * history.len());
        if let Some(system) = &req.system {
            messages.push(Message {
                role: "system",
                content: system,
            });
        }
        for past in history {
            messages.push(Message {
                role: "user",
                content: &past.prompt,
            });
            messages.push(Message {
                role: "assistant",
                content: &past.answer,
            });
        }
        messages.push(Message {
            role: "user",
            content,
        });
        encode_body(req, opts, Input { messages })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::tests::req;

    fn opts() -> BodyOptions {
        BodyOptions {
            model: None,
            ignore_eos: false,
            ..BodyOptions::default()
        }
    }

    #[test]
    fn one_user_message_and_no_id_prompts() {
        let b = Chat.encode(&req(), &[], &opts()).unwrap();
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"messages":[{"role":"user","content":"hi \"there\""}],"max_tokens":7,"stream":true,"stream_options":{"include_usage":true}}"#
        );
        let mut ids = req();
        ids.prompt = None;
        ids.prompt_token_ids = Some(vec![1, 2]);
        assert!(Chat
            .encode(&ids, &[], &opts())
            .unwrap_err()
            .to_string()
            .contains("--api completions"));
    }

    #[test]
    fn system_and_history_become_messages_in_order() {
        let mut r = req();
        r.system = Some("be brief".into());
        let history = [PastTurn {
            prompt: "p0".into(),
            answer: "a0".into(),
        }];
        let b = Chat.encode(&r, &history, &opts()).unwrap();
        assert!(std::str::from_utf8(&b).unwrap().starts_with(
            r#"{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"p0"},{"role":"assistant","content":"a0"},{"role":"user","content":"hi \"there\""}]"#
        ));
    }
}
