use super::*;

fn token(at_ns: u64, empty: bool) -> Token {
    Token {
        id: 1,
        at_ns,
        tokens: 1,
        empty,
        reasoning: false,
    }
}

#[test]
fn an_empty_token_counts_but_does_not_set_ttft_or_a_gap() {
    let mut f = InFlight::new(
        &Sent {
            id: 1,
            scheduled_ns: Some(0),
            sent_ns: 100,
        },
        false,
    );
    f.token(&token(150, true)).unwrap();
    f.token(&token(300, false)).unwrap();
    f.token(&token(350, true)).unwrap();
    f.token(&token(400, false)).unwrap();
    let r = RequestResult::ended(
        Some(f),
        &Done {
            id: 1,
            at_ns: 450,
            ok: true,
            ..Done::default()
        },
    );
    assert_eq!(r.output_tokens, 4, "empty tokens count toward the output");
    assert_eq!(
        r.ttft_ns(),
        Some(200),
        "TTFT is to the first token with text"
    );
    assert_eq!(
        r.gaps.running().count(),
        1,
        "one gap, between the two tokens with text"
    );
}
