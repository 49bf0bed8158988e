//! The completions dialect: `POST {url}/completions` with `prompt` as text or token ids; content
//! arrives in `choices[].text`.

use super::{encode_body, BodyOptions, Dialect};
use bytes::Bytes;
use serde::Serialize;
use tokenpipe_format::Request;

/// `POST /completions`.
pub struct Completions;

#[derive(Serialize)]
struct Input<'a> {
    prompt: Prompt<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Prompt<'a> {
    Text(&'a str),
    Ids(&'a [u32]),
}

impl Dialect for Completions {
    fn path(&self) -> &'static str {
        "/completions"
    }

    fn encode(&self, req: &Request, opts: &BodyOptions) -> Result<Bytes, String> {
        let prompt = match (&req.prompt, &req.prompt_token_ids) {
            (Some(text), _) => Prompt::Text(text),
            (None, Some(ids)) => Prompt::Ids(ids),
            (None, None) => return Err("missing field \"prompt\" (or \"prompt_token_ids\")".into()),
        };
        encode_body(req, opts, Input { prompt })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::tests::req;

    #[test]
    fn text_and_id_prompts() {
        let opts = BodyOptions {
            model: Some("m".into()),
            ignore_eos: true,
            ..BodyOptions::default()
        };
        let b = Completions.encode(&req(), &opts).unwrap();
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"model":"m","prompt":"hi \"there\"","max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}"#
        );
        let mut ids = req();
        ids.prompt = None;
        ids.prompt_token_ids = Some(vec![1, 2]);
        assert!(
            std::str::from_utf8(&Completions.encode(&ids, &opts).unwrap())
                .unwrap()
                .contains(r#""prompt":[1,2]"#)
        );
        ids.prompt_token_ids = None;
        assert!(Completions
            .encode(&ids, &opts)
            .unwrap_err()
            .contains("prompt"));
    }
}
