//! The chat dialect: `POST {url}/chat/completions` with the prompt as one user message; content
//! arrives in `choices[].delta.content` (or the reasoning members), and a role-only first delta
//! is not a token.

use super::{encode_body, BodyOptions, Dialect};
use bytes::Bytes;
use serde::Serialize;
use tokenpipe_format::Request;

/// `POST /chat/completions`.
pub struct Chat;

#[derive(Serialize)]
struct Input<'a> {
    messages: [Message<'a>; 1],
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}

impl Dialect for Chat {
    fn path(&self) -> &'static str {
        "/chat/completions"
    }

    fn encode(&self, req: &Request, opts: &BodyOptions) -> Result<Bytes, String> {
        let content = match (&req.prompt, &req.prompt_token_ids) {
            (Some(text), _) => text,
            (None, Some(_)) => {
                return Err("field \"prompt_token_ids\": token-id prompts need --api completions; the chat API takes text".into())
            }
            (None, None) => return Err("missing field \"prompt\" (or \"prompt_token_ids\")".into()),
        };
        let messages = [Message {
            role: "user",
            content,
        }];
        encode_body(req, opts, Input { messages })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::tests::req;

    #[test]
    fn one_user_message_and_no_id_prompts() {
        let opts = BodyOptions {
            model: None,
            ignore_eos: false,
            ..BodyOptions::default()
        };
        let b = Chat.encode(&req(), &opts).unwrap();
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"messages":[{"role":"user","content":"hi \"there\""}],"max_tokens":7,"stream":true,"stream_options":{"include_usage":true}}"#
        );
        let mut ids = req();
        ids.prompt = None;
        ids.prompt_token_ids = Some(vec![1, 2]);
        assert!(Chat
            .encode(&ids, &opts)
            .unwrap_err()
            .contains("--api completions"));
    }
}
