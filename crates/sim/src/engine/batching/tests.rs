//! The batching model's arithmetic on virtual time: each test admits requests at chosen
//! instants and checks the instants their tokens come out, worked out by hand from the step
//! costs.

use super::curve::{Beyond, Curve};
use super::model::{Model, Params};

const MS: u64 = 1_000_000;

/// Steps of `a + b·batch` ms, prefill at `tps` tokens/s.
fn params(a: f64, b: f64, tps: f64) -> Params {
    Params {
        decode_ms: Curve::linear(a, b).unwrap(),
        prefill_tps: Curve::new(vec![(1.0, tps)], Beyond::Flat).unwrap(),
        max_num_seqs: 256,
        max_batched_tokens: 1_000_000,
        kv_tokens: 1_000_000,
        prefix_cache: false,
    }
}

/// Every token instant of `slot`, asking as a stream does: token k once k − 1 is out.
fn all_tokens(m: &mut Model, slot: usize, n: u64) -> Vec<u64> {
    let mut now = 0;
    let mut out = Vec::new();
    for k in 1..=n {
        loop {
            match m.due(slot, k, now) {
                Ok(at) => {
                    out.push(at);
                    now = now.max(at);
                    break;
                }
                Err(ask) => {
                    assert!(ask > now, "ask again later than now");
                    now = ask;
                }
            }
        }
    }
    out
}

#[test]
fn one_request_prefills_then_decodes_one_token_per_step() {
    let mut m = Model::new(params(10.0, 0.0, 1000.0));
    let a = m.admit(0, 100, 3);
    // Step 1: 10 ms + 100 tokens at 1000/s = 110 ms, and the first token; then 10 ms each.
    assert_eq!(all_tokens(&mut m, a, 3), [110 * MS, 120 * MS, 130 * MS]);
}

#[test]
fn a_request_that_arrives_during_a_step_waits_for_the_next_one() {
    let mut m = Model::new(params(10.0, 5.0, 1000.0));
    let a = m.admit(0, 100, 2);
    // Same instant, but the step that A started is already fixed: B joins the next one.
    let b = m.admit(0, 100, 2);
    // Step 1, A alone: 10 + 5 = 15 ms, plus 100 tokens at 1000/s = 115 ms. Step 2, A's decode
    // and B's prefill: 10 + 5·2 + 100 = 120 ms, to 235; A is done. Step 3, B alone: 15 ms.
    assert_eq!(all_tokens(&mut m, a, 2), [115 * MS, 235 * MS]);
    assert_eq!(all_tokens(&mut m, b, 2), [235 * MS, 250 * MS]);
}

#[test]
fn a_request_joins_at_the_next_step_boundary() {
    let mut m = Model::new(params(10.0, 5.0, 1000.0));
    let a = m.admit(0, 100, 3);
    let b = m.admit(50 * MS, 100, 1);
    // A's prefill step: 15 + 100 = 115 ms. B waits for it, then step 2 holds A's decode and B's
    // prefill: 10 + 5·2 + 100 = 120 ms, ending at 235; step 3 holds A alone: 15 ms.
    assert_eq!(all_tokens(&mut m, a, 3), [115 * MS, 235 * MS, 250 * MS]);
    assert_eq!(all_tokens(&mut m, b, 1), [235 * MS]);
}

#[test]
fn max_num_seqs_queues_the_rest() {
    let mut p = params(10.0, 0.0, 1000.0);
    p.max_num_seqs = 1;
    let mut m = Model::new(p);
    let a = m.admit(0, 10, 2);
    let b = m.admit(0, 10, 1);
    // A: 10 + 10 = 20 ms, then 10 ms. B starts when A is done, at 30: 20 ms.
    assert_eq!(all_tokens(&mut m, a, 2), [20 * MS, 30 * MS]);
    assert_eq!(all_tokens(&mut m, b, 1), [50 * MS]);
    let g = m.gauges(60 * MS);
    assert_eq!((g.running, g.waiting, g.steps), (0, 0, 3));
}

#[test]
fn long_prompts_prefill_in_chunks_of_the_step_budget() {
    let mut p = params(10.0, 0.0, 1000.0);
    p.max_batched_tokens = 64;
    let mut m = Model::new(p);
    let a = m.admit(0, 100, 2);
    // Step 1: 64 tokens, 10 + 64 ms, no token. Step 2: 36 tokens, 10 + 36 ms, first token.
    assert_eq!(all_tokens(&mut m, a, 2), [120 * MS, 130 * MS]);
    assert_eq!(m.gauges(200 * MS).prefilled_tokens, 100);
}

#[test]
fn a_full_cache_preempts_the_newest_which_recomputes() {
    let mut p = params(10.0, 0.0, 1_000_000.0);
    p.kv_tokens = 25;
    let mut m = Model::new(p);
    let a = m.admit(0, 10, 6);
    let b = m.admit(0, 10, 6);
    let ta = all_tokens(&mut m, a, 6);
    let tb = all_tokens(&mut m, b, 6);
    assert_eq!(m.preemptions(a), 0);
    assert!(m.preemptions(b) >= 1, "B was preempted");
    // A never waits: one token per step of 10 ms (and 10 µs while B prefills beside it).
    assert!(
        ta.windows(2)
            .all(|w| (10 * MS..=10 * MS + 10_000).contains(&(w[1] - w[0]))),
        "{ta:?}"
    );
    // B's tokens stay in order and B finishes after A.
    assert!(tb.windows(2).all(|w| w[0] < w[1]), "{tb:?}");
    assert!(tb[5] > ta[5]);
    let g = m.gauges(u64::MAX / 2);
    assert_eq!(g.kv_used, 0, "finished sequences free their cache");
    assert!(
        g.prefilled_tokens > 20,
        "B prefilled again: {}",
        g.prefilled_tokens
    );
    assert_eq!(g.generated_tokens, 12);
}

#[test]
fn asking_again_names_the_same_instant_and_never_a_later_one() {
    let mut m = Model::new(params(10.0, 5.0, 1000.0));
    let a = m.admit(0, 100, 5);
    let b = m.admit(30 * MS, 50, 5);
    // Asked early, B's first token is not known: ask at the end of the step under way.
    assert_eq!(m.due(b, 1, 31 * MS), Err(115 * MS));
    let at = m.due(b, 1, 115 * MS).unwrap();
    assert_eq!(m.due(b, 1, 116 * MS), Ok(at));
    assert!(at >= 115 * MS);
    let ta = all_tokens(&mut m, a, 5);
    assert!(ta.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_departed_request_frees_its_cache_and_its_slot() {
    let mut m = Model::new(params(10.0, 0.0, 1000.0));
    let a = m.admit(0, 100, 50);
    let _ = all_tokens(&mut m, a, 3);
    assert!(m.gauges(130 * MS).kv_used > 100);
    m.depart(a);
    let g = m.gauges(500 * MS);
    assert_eq!((g.kv_used, g.running), (0, 0));
    let b = m.admit(500 * MS, 10, 1);
    assert_eq!(b, a, "the slot is reused");
    assert_eq!(all_tokens(&mut m, b, 1), [(500 + 10 + 10) * MS]);
}

#[test]
fn random_workloads_keep_the_invariants() {
    // A small linear congruential generator: the test needs variety, not quality.
    let mut state = 42u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut p = params(5.0, 0.5, 5000.0);
    p.max_num_seqs = 8;
    p.max_batched_tokens = 256;
    p.kv_tokens = 2000;
    let mut m = Model::new(p);
    let mut reqs = Vec::new();
    let mut t = 0;
    for _ in 0..60 {
        t += next(20) * MS;
        let (prompt, out) = (1 + next(400), 1 + next(60));
        reqs.push((m.admit(t, prompt, out), t, out));
        assert!(m.gauges(t).kv_used <= 2000);
    }
    for &(slot, arrival, out) in &reqs {
        let times = all_tokens(&mut m, slot, out);
        assert!(times[0] > arrival, "a token after its arrival");
        assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    }
    let g = m.gauges(u64::MAX / 2);
    let want: u64 = reqs.iter().map(|r| r.2).sum();
    assert_eq!(g.generated_tokens, want);
    assert_eq!((g.kv_used, g.running, g.waiting), (0, 0, 0));
}

#[test]
fn a_cached_prefix_skips_its_prefill_and_a_salt_busts_it() {
    let mut p = params(10.0, 0.0, 1000.0);
    p.prefix_cache = true;
    let mut m = Model::new(p);
    let blocks: Vec<u64> = (1..=6).collect();
    let a = m.admit_blocks(0, 100, 1, blocks.clone());
    // No hit: 10 ms + 100 tokens at 1000/s.
    assert_eq!(all_tokens(&mut m, a, 1), [110 * MS]);
    // The same prompt later: 96 tokens (six blocks) cached, 4 to prefill.
    let b = m.admit_blocks(200 * MS, 100, 1, blocks.clone());
    assert_eq!(all_tokens(&mut m, b, 1), [(200 + 10 + 4) * MS]);
    // A salted prompt shares no block: the whole prefill again.
    let salted: Vec<u64> = (101..=106).collect();
    let c = m.admit_blocks(300 * MS, 100, 1, salted);
    assert_eq!(all_tokens(&mut m, c, 1), [(300 + 110) * MS]);
    // A prompt that is all cached still computes its last token.
    let d = m.admit_blocks(500 * MS, 96, 1, blocks[..6].to_vec());
    assert_eq!(all_tokens(&mut m, d, 1), [(500 + 10 + 1) * MS]);
    // Each request's cached tokens, for its usage (`cached_tokens`).
    let cached: Vec<Option<u64>> = [a, b, c, d].map(|s| m.cached_tokens(s)).to_vec();
    assert_eq!(cached, [Some(0), Some(96), Some(0), Some(95)]);
    let g = m.gauges(600 * MS);
    assert_eq!(g.prefix_hit_tokens, 96 + 95);
    assert_eq!(g.prefix_queried_tokens, 100 * 3 + 96);
    // Without the cache, the same prompt prefills in full.
    let mut off = Model::new(params(10.0, 0.0, 1000.0));
    let _ = off.admit_blocks(0, 100, 1, blocks.clone());
    let e = off.admit_blocks(200 * MS, 100, 1, blocks);
    assert_eq!(all_tokens(&mut off, e, 1), [310 * MS]);
}

/// Every token instant of a busy workload (queueing, chunking, preemption, prefix hits).
fn busy_workload() -> Vec<Vec<u64>> {
    let mut state = 7u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut p = params(5.0, 0.5, 5000.0);
    p.max_num_seqs = 6;
    p.max_batched_tokens = 128;
    p.kv_tokens = 1500;
    p.prefix_cache = true;
    let mut m = Model::new(p);
    let mut reqs = Vec::new();
    let mut t = 0;
    for _ in 0..40 {
        t += next(15) * MS;
        let (prompt, out) = (1 + next(300), 1 + next(40));
        // Half the prompts share a prefix of up to four blocks.
        let shared = next(2) * next(5);
        let blocks = (0..prompt / 16)
            .map(|b| if b < shared { b } else { 1000 + next(1 << 30) })
            .collect();
        reqs.push((m.admit_blocks(t, prompt, out, blocks), out));
    }
    reqs.iter()
        .map(|&(slot, out)| all_tokens(&mut m, slot, out))
        .collect()
}

#[test]
fn the_same_admissions_give_the_same_instants() {
    let first = busy_workload();
    assert_eq!(first.len(), 40);
    assert_eq!(first, busy_workload());
}

#[test]
fn a_request_longer_than_the_context_is_refused() {
    use crate::engine::profile::BatchingSettings;
    use crate::engine::{Admission, Engine};
    let mut p = params(10.0, 0.0, 1000.0);
    p.kv_tokens = 5000;
    let engine = super::Batching::new(BatchingSettings {
        profile: "test".into(),
        params: p,
        max_model_len: 4096,
    });
    let ask = |prompt_tokens, max_tokens| Admission {
        prompt_tokens,
        max_tokens,
        ..Admission::default()
    };
    assert_eq!(engine.refuse(&ask(4000, 96)), None);
    let message = engine.refuse(&ask(4000, 97)).unwrap();
    assert!(
        message.starts_with("This model's maximum context length is 4096 tokens.")
            && message
                .contains("you requested 4097 tokens (4000 in the messages, 97 in the completion)"),
        "{message}"
    );
    // The KV capacity bounds it too when it is the smaller.
    let small = super::Batching::new(BatchingSettings {
        profile: "test".into(),
        params: params(10.0, 0.0, 1000.0),
        max_model_len: u64::MAX,
    });
    assert!(small
        .refuse(&ask(1_000_001, 1))
        .unwrap()
        .contains("1000000 tokens"));
}

#[test]
fn a_sequence_that_outgrows_the_cache_stalls_rather_than_floods() {
    let mut p = params(10.0, 0.0, 1_000_000.0);
    p.kv_tokens = 20;
    let mut m = Model::new(p);
    // A runaway answer: far more tokens than the cache holds.
    let a = m.admit(0, 10, u64::from(u32::MAX));
    let (mut now, mut out) = (0, 0u64);
    for _ in 0..200 {
        match m.due(a, out + 1, now) {
            Ok(at) => {
                now = now.max(at);
                out += 1;
            }
            Err(ask) => {
                assert!(ask > now, "asks again later, never now");
                now = ask;
            }
        }
    }
    // Ten tokens fill the cache with the prompt; then the sequence cannot run again.
    assert!(out <= 11, "{out} tokens");
    assert!(now >= 10 * MS * out, "tokens kept the engine's pace");
}
