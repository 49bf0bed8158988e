//! Builds the JSON body of each API request, once per request and before its send time, so
//! that serialisation never sits between the deadline and the send.

use bytes::Bytes;
use serde::Serialize;
use tokenpipe_format::Request;

/// Which OpenAI-compatible endpoint to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `POST {url}/completions` with `prompt`.
    Completions,
    /// `POST {url}/chat/completions` with one user message.
    Chat,
}

impl Api {
    /// The path under the base URL.
    pub fn path(self) -> &'static str {
        match self {
            Api::Completions => "/completions",
            Api::Chat => "/chat/completions",
        }
    }
}

/// Settings shared by every request body.
#[derive(Debug, Clone)]
pub struct BodyOptions {
    /// Endpoint kind.
    pub api: Api,
    /// `model` field; omitted when unknown (servers with one model accept that).
    pub model: Option<String>,
    /// Send `ignore_eos: true` so that every request generates exactly `max_tokens`.
    pub ignore_eos: bool,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Serialize)]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<PromptField<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<[Message<'a>; 1]>,
    max_tokens: u64,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    ignore_eos: bool,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    extra: Option<Extra<'a>>,
}

/// The members `fire` sets itself; a request's `extra_body` cannot replace them.
const OWN_MEMBERS: &[&str] = &[
    "model",
    "prompt",
    "messages",
    "max_tokens",
    "stream",
    "stream_options",
    "ignore_eos",
];

/// A request's `extra_body`, less the members `fire` sets itself.
struct Extra<'a>(&'a serde_json::Map<String, serde_json::Value>);

impl Serialize for Extra<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for (k, v) in self.0 {
            if !OWN_MEMBERS.contains(&k.as_str()) {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
#[serde(untagged)]
enum PromptField<'a> {
    Text(&'a str),
    Ids(&'a [u32]),
}

/// Encodes the API body for `req`, or says why the request cannot be expressed.
pub fn encode(req: &Request, opts: &BodyOptions) -> Result<Bytes, String> {
    let (prompt, messages) = match (opts.api, &req.prompt, &req.prompt_token_ids) {
        (Api::Completions, Some(text), _) => (Some(PromptField::Text(text)), None),
        (Api::Completions, None, Some(ids)) => (Some(PromptField::Ids(ids)), None),
        (Api::Chat, Some(text), _) => (
            None,
            Some([Message {
                role: "user",
                content: text,
            }]),
        ),
        (Api::Chat, None, Some(_)) => {
            return Err("field \"prompt_token_ids\": token-id prompts need --api completions; the chat API takes text".into())
        }
        (_, None, None) => {
            return Err("missing field \"prompt\" (or \"prompt_token_ids\")".into())
        }
    };
    let body = Body {
        model: opts.model.as_deref(),
        prompt,
        messages,
        max_tokens: req.max_tokens,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        ignore_eos: opts.ignore_eos,
        extra: req.extra_body.as_ref().map(Extra),
    };
    serde_json::to_vec(&body)
        .map(Bytes::from)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> Request {
        Request {
            id: 1,
            prompt: Some("hi \"there\"".into()),
            prompt_tokens: Some(2),
            max_tokens: 7,
            ..Request::default()
        }
    }

    #[test]
    fn extra_body_adds_members_but_never_replaces_fires_own() {
        let opts = BodyOptions {
            api: Api::Completions,
            model: Some("m".into()),
            ignore_eos: true,
        };
        let mut r = req();
        r.extra_body = serde_json::from_str(
            r#"{"temperature":0.5,"max_tokens":1,"stream":false,"model":"x","ignore_eos":false}"#,
        )
        .unwrap();
        let b = encode(&r, &opts).unwrap();
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"model":"m","prompt":"hi \"there\"","max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true,"temperature":0.5}"#
        );
    }

    #[test]
    fn completions_body() {
        let opts = BodyOptions {
            api: Api::Completions,
            model: Some("m".into()),
            ignore_eos: true,
        };
        let b = encode(&req(), &opts).unwrap();
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"model":"m","prompt":"hi \"there\"","max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}"#
        );
    }

    #[test]
    fn chat_body_and_id_prompts() {
        let opts = BodyOptions {
            api: Api::Chat,
            model: None,
            ignore_eos: false,
        };
        let b = encode(&req(), &opts).unwrap();
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"messages":[{"role":"user","content":"hi \"there\""}],"max_tokens":7,"stream":true,"stream_options":{"include_usage":true}}"#
        );
        let mut ids = req();
        ids.prompt = None;
        ids.prompt_token_ids = Some(vec![1, 2]);
        assert!(encode(&ids, &opts).is_err());
        let opts = BodyOptions {
            api: Api::Completions,
            ..opts
        };
        assert!(std::str::from_utf8(&encode(&ids, &opts).unwrap())
            .unwrap()
            .contains(r#""prompt":[1,2]"#));
    }
}
