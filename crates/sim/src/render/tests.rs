use super::*;
use crate::fault::select::Asked;
use crate::reasoning::ReasoningMember;
use serde_json::{json, Value};

fn event(frame: &[u8]) -> Value {
    let text = std::str::from_utf8(frame).unwrap();
    let body = text
        .strip_prefix("data: ")
        .unwrap()
        .strip_suffix("\n\n")
        .unwrap();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{body}: {e}"))
}

#[test]
fn completion_chunks_match_vllm() {
    let c = Renderer::new("m\"x").chunks(Kind::Completions, 7, 1_700_000_000, 2);
    let head =
        json!({"id":"cmpl-7","object":"text_completion","created":1_700_000_000u64,"model":"m\"x"});
    let mut want = head.clone();
    want["choices"] = json!([{"index":0,"text":" the","logprobs":null,
        "finish_reason":null,"stop_reason":null}]);
    assert_eq!(event(&c.token(1, false)), want);
    want["choices"][0]["text"] = json!(" quick");
    want["choices"][0]["finish_reason"] = json!("length");
    assert_eq!(event(&c.token(2, true)), want);
    want["choices"][0]["text"] = json!(" brown fox jumps");
    assert_eq!(event(&c.tokens(3, 3, true)), want);
    assert_eq!(c.tokens(2, 1, true), c.token(2, true));
    want["usage"] = json!({"prompt_tokens":7,"completion_tokens":5,"total_tokens":12});
    assert_eq!(event(&c.tokens_with_usage(3, 3, true, 7)), want);
    let mut want = head;
    want["choices"] = json!([]);
    want["usage"] = json!({"prompt_tokens":3,"completion_tokens":4,"total_tokens":7});
    assert_eq!(event(&c.usage(3, 4, None)), want);
}

#[test]
fn chat_chunks_match_vllm() {
    let c = Renderer::new("m").chunks(Kind::Chat, 1, 2, 10);
    let role = event(&c.role());
    assert_eq!(role["object"], "chat.completion.chunk");
    assert_eq!(role["id"], "chatcmpl-1");
    assert_eq!(
        role["choices"],
        json!([{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}])
    );
    assert_eq!(
        event(&c.token(10, false))["choices"],
        json!([{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}])
    );
    assert_eq!(
        event(&c.token(3, true))["choices"][0]["finish_reason"],
        "length"
    );
}

#[test]
fn reasoning_goes_first_in_its_member_and_the_usage_says_how_much() {
    for member in [
        ReasoningMember::ReasoningContent,
        ReasoningMember::Reasoning,
    ] {
        let r = Renderer::new("m").with_reasoning(Some(Reasoning {
            share: 0.25,
            member,
        }));
        let c = r.chunks(Kind::Chat, 1, 2, 8);
        let name = member.name();
        assert_eq!(
            event(&c.token(2, false))["choices"],
            json!([{"index":0,"delta":{name:" quick"},"logprobs":null,"finish_reason":null}])
        );
        assert_eq!(
            event(&c.token(3, false))["choices"][0]["delta"],
            json!({"content":" brown"})
        );
        assert_eq!(
            event(&c.usage(5, 8, Some(4)))["usage"],
            json!({"prompt_tokens":5,"completion_tokens":8,"total_tokens":13,
                "prompt_tokens_details":{"cached_tokens":4},
                "completion_tokens_details":{"reasoning_tokens":2}})
        );
        // The completions API has no reasoning member.
        let c = r.chunks(Kind::Completions, 1, 2, 8);
        assert_eq!(event(&c.token(1, false))["choices"][0]["text"], " the");
        assert_eq!(
            event(&c.usage(5, 8, None))["usage"],
            json!({"prompt_tokens":5,"completion_tokens":8,"total_tokens":13})
        );
    }
}

#[test]
fn full_answers_and_lists_are_json() {
    let r = Renderer::new("sim");
    for kind in [Kind::Completions, Kind::Chat] {
        let req = GenerationRequest {
            kind,
            max_tokens: 3,
            stream: false,
            include_usage: false,
            continuous_usage: false,
            prompt_tokens: 5,
            fault: Asked::default(),
        };
        let v: Value = serde_json::from_slice(&r.full_response(&req, 4, 9)).unwrap();
        assert_eq!(
            v["usage"],
            json!({"prompt_tokens":5,"completion_tokens":3,"total_tokens":8})
        );
        assert_eq!(v["choices"][0]["finish_reason"], "length");
        let text = match kind {
            Kind::Completions => &v["choices"][0]["text"],
            Kind::Chat => &v["choices"][0]["message"]["content"],
        };
        assert_eq!(text, " the quick brown");
    }
    let v: Value = serde_json::from_slice(&r.models()).unwrap();
    assert_eq!(v["data"][0]["id"], "sim");
    let v: Value = serde_json::from_slice(&error(400, "invalid_request_error", "a \"b\"")).unwrap();
    assert_eq!(
        v,
        json!({"error":{"message":"a \"b\"","type":"invalid_request_error","code":400}})
    );
}

#[test]
fn a_speculative_step_across_the_end_of_the_reasoning_carries_both_members() {
    let r = Renderer::new("m").with_reasoning(Some(Reasoning {
        share: 0.25,
        member: ReasoningMember::ReasoningContent,
    }));
    // 2 of 8 tokens are reasoning: tokens 1-2 reasoning, 3.. the answer.
    let c = r.chunks(Kind::Chat, 1, 2, 8);
    let delta = |frame: Bytes| event(&frame)["choices"][0]["delta"].clone();
    assert_eq!(
        delta(c.tokens(1, 2, false)),
        json!({"reasoning_content":" the quick"})
    );
    assert_eq!(
        delta(c.tokens(2, 3, false)),
        json!({"reasoning_content":" quick","content":" brown fox"})
    );
    assert_eq!(
        delta(c.tokens(3, 2, false)),
        json!({"content":" brown fox"})
    );
    let last = event(&c.tokens(7, 2, true));
    assert_eq!(last["choices"][0]["finish_reason"], "length");
}
