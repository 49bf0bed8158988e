//! The continuous-batching model itself, on virtual time: a scheduler that runs one step at a
//! time over the sequences it holds, as vLLM's does, and records when each token came out.
//!
//! A step starts when the previous one ends (or when a request arrives at an idle engine). At
//! its start the scheduler fixes what it does, in vLLM's order:
//! 1. every running sequence: one decode token each, or the next chunk of its prefill, within
//!    the step's token budget (`max_batched_tokens`, chunked prefill);
//! 2. then waiting sequences, first come first served, while there are fewer than
//!    `max_num_seqs` running, budget left, and room in the KV cache for their chunk.
//!
//! A running sequence that needs one more KV token than the cache has left preempts the
//! newest running sequence (it goes back to the front of the queue, gives up its cache, and
//! later prefills its prompt and its tokens so far again: vLLM's recompute), or waits itself if
//! it is the newest. The step lasts `decode(B) + P / prefill_rate(P)`: `B` the sequences in the
//! step, `P` the prompt tokens prefilled in it. Its end is when every token it produced is
//! due: one per decoding sequence, and the first token of each sequence whose prefill it
//! completed.
//!
//! Nothing here reads a clock: [`Model::advance`] runs every step that starts by the instant
//! it is given, so the same model runs in the server (monotonic nanoseconds) and in tests
//! (plain numbers).

use super::curve::Curve;
use super::prefix::{PrefixCache, BLOCK_TOKENS};
use std::collections::VecDeque;

/// The limits and costs of a simulated engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// Time of a step by the number of sequences in it, in ms (`a + b·batch`, or measured
    /// points).
    pub decode_ms: Curve,
    /// Prefill throughput by prompt tokens in a step, in tokens/s.
    pub prefill_tps: Curve,
    /// Most sequences running at once (vLLM's `--max-num-seqs`).
    pub max_num_seqs: usize,
    /// Tokens one step may process, decode and prefill together (vLLM's
    /// `--max-num-batched-tokens`).
    pub max_batched_tokens: u64,
    /// KV-cache capacity in tokens.
    pub kv_tokens: u64,
    /// Whether prompts that share leading blocks with earlier ones skip their prefill (see
    /// [`super::prefix`]).
    pub prefix_cache: bool,
}

/// Where a sequence is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Queued: not yet scheduled, or preempted.
    Waiting,
    /// Being prefilled or decoded.
    Running,
    /// Produced all its tokens; its cache is freed, it waits for its client to leave.
    Done,
}

/// One request in the model.
#[derive(Debug, Clone)]
struct Seq {
    arrival_ns: u64,
    prompt: u64,
    max_tokens: u64,
    /// Tokens to prefill before the next token can come out (the prompt, less a cached
    /// prefix; after a preemption, the prompt and every token so far).
    to_prefill: u64,
    /// Tokens produced so far.
    generated: u64,
    /// KV-cache tokens held.
    kv: u64,
    state: State,
    /// When each produced token came out, oldest first: token `first_kept` is at the front.
    times: VecDeque<u64>,
    first_kept: u64,
    /// How often it was preempted.
    preemptions: u32,
    /// The end of the step under way when that step produces its next token: answers `due`
    /// without scanning the step's work.
    next_token_at: Option<u64>,
    /// The prompt's block hashes, for the prefix cache (empty without one).
    blocks: Vec<u64>,
    /// Prompt tokens the prefix cache held when it was first scheduled (vLLM's
    /// `num_cached_tokens`, the usage's `cached_tokens`); `None` before.
    cached: Option<u64>,
}

/// What a sequence does in the current step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Work {
    slot: usize,
    /// Prompt tokens prefilled in the step (0 for a decode).
    prefill: u64,
    /// Whether a token comes out at the step's end.
    produces: bool,
}

/// The step under way.
#[derive(Debug, Clone)]
struct Step {
    end_ns: u64,
    work: Vec<Work>,
}

/// What the model holds now, for `/metrics` and for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Gauges {
    /// Sequences running.
    pub running: usize,
    /// Sequences waiting (queued or preempted).
    pub waiting: usize,
    /// KV-cache tokens in use.
    pub kv_used: u64,
    /// Steps run so far.
    pub steps: u64,
    /// Preemptions so far.
    pub preemptions: u64,
    /// Prompt tokens prefilled so far (recomputed ones included).
    pub prefilled_tokens: u64,
    /// Tokens produced so far.
    pub generated_tokens: u64,
    /// Prompt tokens looked up in the prefix cache (each scheduling of a sequence counts).
    pub prefix_queried_tokens: u64,
    /// Prompt tokens found there, whose prefill was skipped.
    pub prefix_hit_tokens: u64,
}

/// A continuous-batching engine on virtual time.
#[derive(Debug, Clone)]
pub struct Model {
    params: Params,
    /// Sequences by slot; `None` once departed (the slot is reused).
    seqs: Vec<Option<Seq>>,
    free: Vec<usize>,
    /// Waiting slots, first served first (preempted ones go back to the front).
    waiting: VecDeque<usize>,
    /// Running slots, oldest first (the newest is preempted first).
    running: Vec<usize>,
    step: Option<Step>,
    /// When the last step ended (or 0).
    last_end_ns: u64,
    gauges: Gauges,
    /// The prefix cache, when the parameters ask for one.
    prefix: Option<PrefixCache>,
}

/// The shortest step: keeps time moving even when a profile's costs round to nothing.
const MIN_STEP_NS: u64 = 1_000;

impl Model {
    /// An idle engine.
    pub fn new(params: Params) -> Self {
        Self {
            seqs: Vec::new(),
            free: Vec::new(),
            waiting: VecDeque::new(),
            running: Vec::new(),
            step: None,
            last_end_ns: 0,
            gauges: Gauges::default(),
            prefix: params
                .prefix_cache
                .then(|| PrefixCache::new(params.kv_tokens)),
            params,
        }
    }

    /// A request arrives at `arrival_ns`; returns its slot. Every step that starts before it is
    /// run first, so it joins at the next step boundary, as in a real engine.
    pub fn admit(&mut self, arrival_ns: u64, prompt: u64, max_tokens: u64) -> usize {
        self.admit_blocks(arrival_ns, prompt, max_tokens, Vec::new())
    }

    /// [`Model::admit`] with the hashes of the prompt's whole blocks, oldest first (see
    /// [`super::prefix`]); ignored without a prefix cache.
    pub fn admit_blocks(
        &mut self,
        arrival_ns: u64,
        prompt: u64,
        max_tokens: u64,
        blocks: Vec<u64>,
    ) -> usize {
        self.advance(arrival_ns);
        let blocks = if self.prefix.is_some() {
            blocks
        } else {
            Vec::new()
        };
        let seq = Seq {
            arrival_ns,
            prompt: prompt.max(1),
            max_tokens,
            to_prefill: prompt.max(1),
            generated: 0,
            kv: 0,
            state: State::Waiting,
            times: VecDeque::new(),
            first_kept: 1,
            preemptions: 0,
            blocks,
            next_token_at: None,
            cached: None,
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.seqs[slot] = Some(seq);
                slot
            }
            None => {
                self.seqs.push(Some(seq));
                self.seqs.len() - 1
            }
        };
        if max_tokens == 0 {
            if let Some(s) = self.seqs[slot].as_mut() {
                s.state = State::Done;
            }
        } else {
            self.waiting.push_back(slot);
            self.start_step_if_idle(arrival_ns);
        }
        slot
    }

    /// When token `k` (1-based) of `slot` comes out, asked at `now_ns`: `Ok(instant)` once the
    /// step producing it has started, else `Err(instant to ask again)`, which is the end of the
    /// step under way (never later than the token's own instant). Tokens before `k` are
    /// forgotten: a stream never asks for them again.
    pub fn due(&mut self, slot: usize, k: u64, now_ns: u64) -> Result<u64, u64> {
        self.advance(now_ns);
        let step_end = self.step.as_ref().map(|s| s.end_ns);
        let lone_step = self.lone_step_ns();
        let Some(seq) = self.seqs.get_mut(slot).and_then(Option::as_mut) else {
            return Ok(now_ns);
        };
        let k = k.clamp(1, seq.max_tokens.max(1));
        while seq.first_kept < k && !seq.times.is_empty() {
            seq.times.pop_front();
            seq.first_kept += 1;
        }
        if k <= seq.generated || seq.state == State::Done {
            let idx = usize::try_from(k - seq.first_kept).unwrap_or(usize::MAX);
            return Ok(seq.times.get(idx).copied().unwrap_or(now_ns));
        }
        match (step_end, seq.next_token_at) {
            (_, Some(end)) if k == seq.generated + 1 => Ok(end),
            (Some(end), _) => Err(end.max(now_ns + 1)),
            // Nothing under way and the token not out: the sequence cannot be scheduled (it
            // outgrew the KV cache, as a runaway `endless` answer does). It stalls, as on a
            // real engine, asking again a one-sequence step later; it never floods.
            (None, _) => Err(now_ns + lone_step),
        }
    }

    /// How long a step of one decoding sequence takes (at least [`MIN_STEP_NS`]).
    fn lone_step_ns(&self) -> u64 {
        ((self.params.decode_ms.at(1.0) * 1e6).round() as u64).max(MIN_STEP_NS)
    }

    /// The request in `slot` left: its cache and slot are freed. A step it is part of runs on
    /// as it was fixed (its cost was spent); what it would have produced is dropped.
    pub fn depart(&mut self, slot: usize) {
        let Some(seq) = self.seqs.get_mut(slot).and_then(Option::take) else {
            return;
        };
        self.gauges.kv_used -= seq.kv;
        self.waiting.retain(|&s| s != slot);
        self.running.retain(|&s| s != slot);
        self.free.push(slot);
    }

    /// What the model holds, after running every step that starts by `now_ns`.
    pub fn gauges(&mut self, now_ns: u64) -> Gauges {
        self.advance(now_ns);
        Gauges {
            running: self.running.len(),
            waiting: self.waiting.len(),
            ..self.gauges
        }
    }

    /// Prompt tokens the prefix cache held for `slot` when it was first scheduled; `None`
    /// before that, or without a prefix cache.
    pub fn cached_tokens(&self, slot: usize) -> Option<u64> {
        self.seqs.get(slot)?.as_ref()?.cached
    }

    /// How often the sequence in `slot` was preempted.
    pub fn preemptions(&self, slot: usize) -> u32 {
        self.seqs
            .get(slot)
            .and_then(Option::as_ref)
            .map_or(0, |s| s.preemptions)
    }

    /// Runs every step that starts by `now_ns`: finishes the steps that ended and starts the
    /// next ones.
    pub fn advance(&mut self, now_ns: u64) {
        while let Some(end) = self.step.as_ref().map(|s| s.end_ns) {
            if end > now_ns {
                return;
            }
            self.finish_step();
            self.start_step(end);
        }
        self.start_step_if_idle(now_ns);
    }

    /// Starts a step for the first waiting request that has arrived, when nothing runs.
    fn start_step_if_idle(&mut self, now_ns: u64) {
        if self.step.is_some() {
            return;
        }
        let first = self
            .waiting
            .iter()
            .filter_map(|&s| self.seqs[s].as_ref())
            .map(|s| s.arrival_ns)
            .min();
        if let Some(arrival) = first {
            let start = arrival.max(self.last_end_ns);
            if start <= now_ns {
                self.start_step(start);
            }
        }
    }

    /// Applies the step under way: prefill done, tokens out, finished sequences' caches freed.
    fn finish_step(&mut self) {
        let Some(step) = self.step.take() else {
            return;
        };
        self.last_end_ns = step.end_ns;
        self.gauges.steps += 1;
        for w in &step.work {
            let Some(seq) = self.seqs.get_mut(w.slot).and_then(Option::as_mut) else {
                continue;
            };
            seq.next_token_at = None;
            if seq.state != State::Running {
                continue;
            }
            seq.to_prefill -= w.prefill;
            seq.kv += w.prefill;
            self.gauges.prefilled_tokens += w.prefill;
            if w.prefill > 0 && seq.to_prefill == 0 {
                if let Some(cache) = self.prefix.as_mut() {
                    cache.insert(&seq.blocks);
                }
            }
            if w.produces {
                seq.generated += 1;
                seq.kv += 1;
                self.gauges.kv_used += 1;
                self.gauges.generated_tokens += 1;
                seq.times.push_back(step.end_ns);
            }
            if seq.generated >= seq.max_tokens {
                seq.state = State::Done;
                self.gauges.kv_used -= seq.kv;
                seq.kv = 0;
                self.running.retain(|&s| s != w.slot);
            }
        }
    }

    /// Fixes what the step starting at `start_ns` does and when it ends; none when there is
    /// nothing to do.
    fn start_step(&mut self, start_ns: u64) {
        let mut budget = self.params.max_batched_tokens.max(1);
        let mut work: Vec<Work> = Vec::new();
        // KV tokens this step will add, not yet in `gauges.kv_used`.
        let mut kv_planned = 0u64;
        let cap = self.params.kv_tokens;
        let mut i = 0;
        while i < self.running.len() && budget > 0 {
            let slot = self.running[i];
            let Some(seq) = self.seqs[slot].as_ref() else {
                i += 1;
                continue;
            };
            let (prefill, produces) = if seq.to_prefill > 0 {
                let chunk = seq.to_prefill.min(budget);
                (chunk, chunk == seq.to_prefill)
            } else {
                (0, true)
            };
            let need = prefill + u64::from(produces);
            if self.gauges.kv_used + kv_planned + need > cap {
                // Make room by preempting the newest running sequence, or wait if this is it.
                let newest = *self.running.last().unwrap_or(&slot);
                self.preempt(newest);
                if let Some(pos) = work.iter().position(|w| w.slot == newest) {
                    let undone = work.remove(pos);
                    kv_planned -= undone.prefill + u64::from(undone.produces);
                    budget += undone.prefill.max(u64::from(undone.produces));
                }
                continue;
            }
            kv_planned += need;
            budget -= prefill.max(u64::from(produces)).min(budget);
            work.push(Work {
                slot,
                prefill,
                produces,
            });
            i += 1;
        }
        // Waiting sequences in queue order; one that arrived after the step starts (its
        // arrival was stamped on another thread a moment late) waits for the next step.
        let mut j = 0;
        while budget > 0 && self.running.len() < self.params.max_num_seqs {
            let Some(&slot) = self.waiting.get(j) else {
                break;
            };
            let Some(seq) = self.seqs[slot].as_ref() else {
                self.waiting.remove(j);
                continue;
            };
            if seq.arrival_ns > start_ns {
                j += 1;
                continue;
            }
            if seq.kv == 0 {
                self.look_up_prefix(slot);
            }
            let Some(seq) = self.seqs[slot].as_ref() else {
                continue;
            };
            let chunk = seq.to_prefill.min(budget);
            let produces = chunk == seq.to_prefill;
            let need = chunk + u64::from(produces);
            if self.gauges.kv_used + kv_planned + need > cap {
                break;
            }
            self.waiting.remove(j);
            if let Some(seq) = self.seqs[slot].as_mut() {
                seq.state = State::Running;
            }
            self.running.push(slot);
            kv_planned += need;
            budget -= chunk;
            work.push(Work {
                slot,
                prefill: chunk,
                produces,
            });
        }
        if work.is_empty() {
            self.last_end_ns = self.last_end_ns.max(start_ns);
            return;
        }
        // Prefilled tokens enter the cache when the step ends; reserve them now so that the
        // next step's plan sees them.
        let prefill: u64 = work.iter().map(|w| w.prefill).sum();
        self.gauges.kv_used += prefill;
        let batch = work.len() as f64;
        let mut ns = self.params.decode_ms.at(batch) * 1e6;
        if prefill > 0 {
            let rate = self.params.prefill_tps.at(prefill as f64).max(1e-9);
            ns += prefill as f64 / rate * 1e9;
        }
        let ns = (ns.round() as u64).max(MIN_STEP_NS);
        let end_ns = start_ns.saturating_add(ns);
        for w in work.iter().filter(|w| w.produces) {
            if let Some(seq) = self.seqs[w.slot].as_mut() {
                seq.next_token_at = Some(end_ns);
            }
        }
        self.step = Some(Step { end_ns, work });
    }

    /// A sequence about to be scheduled with nothing in the cache: what it must prefill, less
    /// the leading blocks the prefix cache holds (never its last prompt token, which must be
    /// computed to produce the next one, as in vLLM).
    fn look_up_prefix(&mut self, slot: usize) {
        let (Some(cache), Some(seq)) = (
            self.prefix.as_mut(),
            self.seqs.get_mut(slot).and_then(Option::as_mut),
        ) else {
            return;
        };
        let cached = (cache.hits(&seq.blocks) * BLOCK_TOKENS).min(seq.prompt - 1);
        seq.to_prefill = seq.prompt + seq.generated - cached;
        seq.cached.get_or_insert(cached);
        self.gauges.prefix_queried_tokens += seq.prompt;
        self.gauges.prefix_hit_tokens += cached;
    }

    /// Sends a running sequence back to the front of the queue, freeing its cache: it will
    /// prefill its prompt and its tokens so far again.
    fn preempt(&mut self, slot: usize) {
        self.running.retain(|&s| s != slot);
        if let Some(seq) = self.seqs[slot].as_mut() {
            self.gauges.kv_used -= seq.kv;
            seq.kv = 0;
            seq.to_prefill = seq.prompt + seq.generated;
            seq.state = State::Waiting;
            seq.preemptions += 1;
            self.gauges.preemptions += 1;
            self.waiting.push_front(slot);
        }
    }
}
