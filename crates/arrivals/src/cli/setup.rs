//! From a command line to a [`Plan`]: defaults, scenarios, the process, the prompt source,
//! phases, and the header that records every setting.

use crate::cli::dataset::DatasetKind;
use crate::cli::pacing::{ArrivalKind, RampOver};
use crate::cli::Args;
use crate::process::{self, ProcessSpec, Ramp, RateShape, TraceSpec, UnitGaps};
use crate::prompts::{
    self, LengthDist, Prefixes, PromptSpec, Shape, TokenIds, TokenMaker, TokenizerMaker,
    VllmLengths, Words,
};
use crate::session::{Sessions, ThinkTime};
use crate::{seed_stream, streams, Bounds, Error, Plan};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;
use tokenpipe_format::vocab;
use tokenpipe_format::{Header, LoopMode, Phase, Shard};

/// Requests written when neither --num-prompts nor a duration bounds the schedule.
const DEFAULT_REQUESTS: u64 = 100;
/// Prompt tokens when neither --input-tokens nor a scenario sets them.
const DEFAULT_INPUT_TOKENS: u64 = 1024;
/// Answer tokens when --output-tokens is not given (and a dataset line gives none).
const DEFAULT_OUTPUT_TOKENS: u64 = 128;

/// Measured batches when --batch is given without --runs: llama-benchy's default.
const DEFAULT_RUNS: u64 = 3;

/// The generator every draw comes from, named in the header so that a schedule can be
/// reproduced (or checked) by another implementation.
const GENERATOR: &str = "ChaCha8 (rand_chacha 0.10), one stream per kind of draw; rand_distr 0.6";

/// The plan the command line describes (`argv` is recorded in its header); bad input when the
/// flags describe no process or no prompt source.
pub(crate) fn plan(args: &Args, argv: Vec<String>) -> Result<Plan, Error> {
    // clap leaves `requires` unchecked when the flag required conflicts with one given.
    if args.pacing.batch.is_none() {
        if args.pacing.runs.is_some() {
            return Err(Error::Flags("--runs counts batches: give --batch N"));
        }
        if args.pacing.no_warmup {
            return Err(Error::Flags(
                "--no-warmup drops the warm-up batch: give --batch N",
            ));
        }
    }
    let settings = Settings::from(args);
    let spec = settings.process_spec(args)?;
    let process = process::build(spec, crate::arrival_rng(args.seed))?;
    let bounds = settings.bounds(args, process.mode());
    let needed = bounds
        .count
        .or(process.limit())
        .map(|n| match process.limit() {
            Some(limit) => n.min(limit),
            None => n,
        });
    let prompts = prompts::build(settings.prompt_spec(args, needed)?)?;
    let (low, high) = args.content.think_time.unwrap_or_default();
    let think = if low == high {
        ThinkTime::Fixed(ns(low))
    } else {
        ThinkTime::Uniform(ns(low), ns(high))
    };
    let sessions = Sessions {
        turns: settings.turns,
        think,
        rng: seed_stream(args.seed, streams::THINK),
    };
    let salt_tokens = if args.content.no_salt {
        0
    } else {
        args.content.salt_tokens
    };
    let mut header = Header::new("arrivals", schedule_id(&argv), argv);
    header.seed = Some(args.seed);
    header.shard = args.pacing.shard.map(|s| Shard {
        index: u32::try_from(s.index).unwrap_or(u32::MAX),
        count: u32::try_from(s.count).unwrap_or(u32::MAX),
    });
    let plan = Plan {
        header,
        process,
        prompts,
        prompt_rng: crate::prompt_rng(args.seed),
        bounds,
        sessions,
        shard: args.pacing.shard,
        salt_tokens,
    };
    // The schedule record is checked now, so that a shard with no share fails before any
    // output.
    plan.schedule()?;
    let mut plan = plan;
    plan.header.params = settings.params(args, &plan);
    Ok(plan)
}

/// The settings after defaults and the scenario have been applied.
struct Settings {
    count: Option<u64>,
    input_tokens: u64,
    same: bool,
    prefix_tokens: Option<u64>,
    turns: u32,
}

impl From<&Args> for Settings {
    fn from(args: &Args) -> Self {
        let (p, c) = (&args.pacing, &args.content);
        let scenario = c.scenario;
        let bounded_by_time = p.duration.is_some() || p.measure.is_some();
        let count = match (args.num_prompts, p.batch) {
            (_, Some(_)) => None,
            (Some(n), _) => Some(n),
            (None, _) if bounded_by_time => None,
            // A trace ends with its last row.
            (None, _) if args.trace.trace.is_some() => None,
            (None, _) => Some(DEFAULT_REQUESTS),
        };
        Settings {
            count,
            input_tokens: c
                .input_tokens
                .or(scenario.map(|s| s.input_tokens()))
                .unwrap_or(DEFAULT_INPUT_TOKENS),
            same: c.same_prompt || scenario.is_some_and(|s| s.same()),
            prefix_tokens: c.prefix_tokens.or(scenario.and_then(|s| s.prefix_tokens())),
            turns: c.turns.or(scenario.map(|s| s.turns())).unwrap_or(1),
        }
    }
}

impl Settings {
    fn process_spec(&self, args: &Args) -> Result<ProcessSpec, Error> {
        let p = &args.pacing;
        let t = &args.trace;
        if let Some(path) = &t.trace {
            return Ok(ProcessSpec::Trace(TraceSpec {
                path: path.clone(),
                format: t.trace_format.into(),
                columns: t.trace_columns.clone().unwrap_or_default(),
                time_unit: t.trace_time_unit.map(Into::into),
                time_scale: t.time_scale,
                skip_failed: t.trace_skip_failed,
            }));
        }
        if let Some(concurrency) = p.concurrency {
            return Ok(ProcessSpec::Closed { concurrency });
        }
        if let Some(size) = p.batch {
            let runs = p.runs.unwrap_or(DEFAULT_RUNS);
            let warmup = warmup_batches(args).unwrap_or(0);
            return Ok(ProcessSpec::Batch {
                size,
                runs: runs.saturating_add(warmup),
            });
        }
        let gaps = match p.arrival {
            ArrivalKind::Gamma => UnitGaps::Gamma {
                burstiness: p.burstiness,
            },
            ArrivalKind::Constant => UnitGaps::Constant,
        };
        let ramp = || Ramp {
            start: p.ramp_from.unwrap_or(1.0),
            end: p.ramp_to.unwrap_or(1.0),
            shape: p.ramp_shape.into(),
        };
        let rate = match p.ramp {
            Some(RampOver::Time(over_s)) => RateShape::OverTime {
                ramp: ramp(),
                over_s,
            },
            Some(RampOver::Requests) => RateShape::ByIndex {
                ramp: ramp(),
                requests: self.count.ok_or(Error::Flags(
                    "--ramp requests spans the requests: give their number with --num-prompts",
                ))?,
            },
            None if p.rate.is_infinite() => return Ok(ProcessSpec::AllAtOnce),
            None => RateShape::Fixed(p.rate),
        };
        if p.vllm_compatible {
            let requests = self.count.ok_or(Error::Flags(
                "--vllm-compatible rescales to the last request: give their number with --num-prompts",
            ))?;
            let seed = u32::try_from(args.seed).map_err(|_| {
                Error::Flags("--vllm-compatible draws its gaps from numpy's generator as vLLM does, and numpy takes seeds of 0 to 4294967295")
            })?;
            return Ok(ProcessSpec::Vllm {
                gaps,
                rate,
                requests,
                seed,
            });
        }
        Ok(ProcessSpec::Open { gaps, rate })
    }

    fn bounds(&self, args: &Args, mode: LoopMode) -> Bounds {
        let p = &args.pacing;
        let shards = p.shard.map_or(1, |s| s.count);
        let mut phases = vec![];
        let mut at = 0u64;
        let fill_interval_ns = p.fill.map(ns);
        if let (Some(gap), Some(c)) = (fill_interval_ns, p.concurrency) {
            let end = gap.saturating_mul(c.saturating_sub(1));
            phases.push(phase("fill", 0, Some(end)));
            at = end;
        }
        let mut duration_ns = p.duration.map(ns);
        if let Some(measure) = p.measure {
            if let Some(stabilize) = p.stabilize.filter(|s| !s.is_zero()) {
                phases.push(phase("stabilize", at, Some(at + ns(stabilize))));
                at += ns(stabilize);
            }
            phases.push(phase("measure", at, Some(at + ns(measure))));
            at += ns(measure);
            phases.push(phase("drain", at, None));
            duration_ns = Some(at);
        }
        Bounds {
            count: self.count,
            duration_ns,
            max_concurrency: p.max_concurrency.filter(|_| mode == LoopMode::Open),
            // Each shard starts its own share of the first wave; spacing its starts by the
            // number of shards keeps the whole fill at the asked pace.
            fill_interval_ns: fill_interval_ns.map(|gap| gap.saturating_mul(shards)),
            phases,
            warmup_batches: warmup_batches(args),
        }
    }

    /// The prompt source the flags describe; `needed` is the number of sessions the schedule
    /// holds, where known.
    fn prompt_spec(&self, args: &Args, needed: Option<u64>) -> Result<PromptSpec, Error> {
        let c = &args.content;
        let depth = c.depth.unwrap_or(0);
        if let (Some(path), Some(tokenizer)) = (&c.corpus, &c.tokenizer) {
            return Ok(PromptSpec::Corpus {
                path: path.clone(),
                tokenizer: tokenizer.clone(),
                input_tokens: self.input_tokens,
                output_tokens: c.output_tokens.unwrap_or(DEFAULT_OUTPUT_TOKENS),
                depth,
            });
        }
        // Token ids, the model's own tokenizer (exact text and exact counts of a dataset's
        // prompts), or plain words.
        let maker: Box<dyn TokenMaker> = match (c.token_ids, &c.tokenizer) {
            (Some([start, end]), _) => Box::new(TokenIds { start, end }),
            (None, Some(path)) => Box::new(TokenizerMaker::open(path)?),
            (None, None) => Box::new(Words),
        };
        if let Some(dataset) = &args.dataset.dataset {
            let path = dataset.path.clone();
            return Ok(match dataset.kind {
                DatasetKind::ShareGpt => PromptSpec::ShareGpt {
                    path,
                    maker,
                    fixed_output: c.output_tokens,
                    needed,
                    seed: args.seed,
                },
                DatasetKind::Jsonl => PromptSpec::Jsonl {
                    path,
                    maker,
                    fixed_output: c.output_tokens,
                    default_output: DEFAULT_OUTPUT_TOKENS,
                },
            });
        }
        let lengths = |flags| move |source| Error::Lengths { flags, source };
        let input = LengthDist::new(self.input_tokens, c.input_dist, c.input_spread())
            .map_err(lengths("--input-range/--range-ratio"))?;
        let output_tokens = c.output_tokens.unwrap_or(DEFAULT_OUTPUT_TOKENS);
        let output = LengthDist::new(output_tokens, c.output_dist, c.output_spread())
            .map_err(lengths("--output-range/--range-ratio"))?;
        // vLLM's random dataset draws its lengths from numpy with the run's seed.
        let vllm = match (args.pacing.vllm_compatible, self.count) {
            (true, Some(n)) => VllmLengths::new(args.seed, n, input, output),
            _ => None,
        };
        Ok(PromptSpec::Synthetic {
            input,
            output,
            shape: if self.same {
                Shape::Same
            } else {
                Shape::Distinct
            },
            prefixes: self.prefix_tokens.map(|tokens| Prefixes {
                tokens,
                groups: c.prefix_groups,
            }),
            maker,
            seed: args.seed,
            vllm,
            depth,
        })
    }

    /// Every setting worth keeping with the data, for the header's `params`.
    fn params(&self, args: &Args, plan: &Plan) -> BTreeMap<String, Value> {
        let (p, c) = (&args.pacing, &args.content);
        let mode = plan.process.mode();
        let mut params = BTreeMap::new();
        let mut put = |k: &str, v: Value| {
            if !v.is_null() {
                params.insert(k.to_string(), v);
            }
        };
        put("mode", json!(mode));
        let trace = &args.trace;
        match mode {
            LoopMode::Open if trace.trace.is_some() => {
                put(
                    "trace",
                    json!(trace.trace.as_ref().map(|p| p.display().to_string())),
                );
                // The layout the replay resolved (`auto` becomes what it found).
                for (k, v) in plan.process.header_params() {
                    put(&k, v);
                }
                put("time_scale", json!(trace.time_scale));
                put(vocab::MAX_CONCURRENCY.key, json!(p.max_concurrency));
            }
            LoopMode::Open => {
                // JSON has no infinity: `inf` is written as a string.
                let rate = if p.rate.is_finite() {
                    json!(p.rate)
                } else {
                    json!("inf")
                };
                if p.ramp.is_none() {
                    put(vocab::RATE.key, rate);
                }
                put(vocab::BURSTINESS.key, json!(p.burstiness));
                put(
                    "arrival",
                    json!(match p.arrival {
                        ArrivalKind::Gamma => "gamma",
                        ArrivalKind::Constant => "constant",
                    }),
                );
                if p.vllm_compatible {
                    put("vllm_compatible", json!(true));
                }
                if let Some(over) = p.ramp {
                    put("ramp_from_per_s", json!(p.ramp_from));
                    put("ramp_to_per_s", json!(p.ramp_to));
                    put(
                        "ramp_shape",
                        json!(format!("{:?}", p.ramp_shape).to_lowercase()),
                    );
                    match over {
                        RampOver::Time(s) => put("ramp_s", json!(s)),
                        RampOver::Requests => put("ramp_over", json!("requests")),
                    }
                }
                put(vocab::MAX_CONCURRENCY.key, json!(p.max_concurrency));
            }
            LoopMode::Closed => {
                put(vocab::CONCURRENCY.key, json!(p.concurrency));
                put("fill_interval_s", json!(p.fill.map(|d| d.as_secs_f64())));
            }
            LoopMode::Batch => {
                put(vocab::BATCH.key, json!(p.batch));
                put("runs", json!(p.runs.unwrap_or(DEFAULT_RUNS)));
                // In the header chain too, as the phases are: reduce leaves these batches out
                // of every figure and never sees the schedule record.
                if let Some(w) = warmup_batches(args) {
                    put(vocab::WARMUP_BATCHES, json!(w));
                }
            }
        }
        put(vocab::NUM_PROMPTS.key, json!(self.count));
        put(
            vocab::DURATION.key,
            json!(p.duration.map(|d| d.as_secs_f64())),
        );
        put("stabilize_s", json!(p.stabilize.map(|d| d.as_secs_f64())));
        put("measure_s", json!(p.measure.map(|d| d.as_secs_f64())));
        // The phases travel in the header chain too, so that reduce finds the measured window
        // in fire's output, which does not repeat the schedule.
        if !plan.bounds.phases.is_empty() {
            put("phases", json!(plan.bounds.phases));
        }
        // A trace's rows give every length and a dataset its own; the length flags are then
        // not used (the dataset conflicts with the range flags, so they stay unset).
        let lengths_from_flags = trace.trace.is_none();
        match &args.dataset.dataset {
            Some(dataset) => {
                put("dataset", json!(dataset.kind.name()));
                put("dataset_path", json!(dataset.path.display().to_string()));
                put(vocab::OUTPUT_TOKENS.key, json!(c.output_tokens));
            }
            None if lengths_from_flags => {
                put(vocab::INPUT_TOKENS.key, json!(self.input_tokens));
                let output = c.output_tokens.unwrap_or(DEFAULT_OUTPUT_TOKENS);
                put(vocab::OUTPUT_TOKENS.key, json!(output));
            }
            None => {}
        }
        if lengths_from_flags && c.input_spread() > 0.0 {
            put("input_range", json!(c.input_spread()));
            put(
                "input_dist",
                json!(format!("{:?}", c.input_dist).to_lowercase()),
            );
        }
        if lengths_from_flags && c.output_spread() > 0.0 {
            put("output_range", json!(c.output_spread()));
            put(
                "output_dist",
                json!(format!("{:?}", c.output_dist).to_lowercase()),
            );
        }
        if self.same {
            put("same_prompt", json!(true));
        }
        if let Some(tokens) = self.prefix_tokens {
            put("prefix_tokens", json!(tokens));
            put("prefix_groups", json!(c.prefix_groups));
        }
        if self.turns > 1 {
            put("turns", json!(self.turns));
            let (low, high) = c.think_time.unwrap_or_default();
            put(
                "think_time_s",
                json!([low.as_secs_f64(), high.as_secs_f64()]),
            );
        }
        // Written whenever given, and always in batch mode, where llama-benchy names it.
        if c.depth.is_some() || mode == LoopMode::Batch {
            put(vocab::DEPTH.key, json!(c.depth.unwrap_or(0)));
        }
        put(
            "corpus",
            json!(c.corpus.as_ref().map(|p| p.to_string_lossy())),
        );
        put("scenario", json!(c.scenario.map(|s| format!("{s:?}"))));
        put("token_ids", json!(c.token_ids));
        put(
            "tokenizer",
            json!(c.tokenizer.as_ref().map(|p| p.to_string_lossy())),
        );
        put("exact_lengths", json!(plan.prompts.exact_lengths()));
        put("salt_tokens", json!(plan.salt_tokens));
        put("generator", json!(GENERATOR));
        params
    }
}

/// The warm-up batches written before the measured ones: one in batch mode (llama-benchy's
/// discarded run 0) unless --no-warmup; `None` outside batch mode.
fn warmup_batches(args: &Args) -> Option<u64> {
    let p = &args.pacing;
    (p.batch.is_some() && !p.no_warmup).then_some(1)
}

fn phase(name: &str, start_ns: u64, end_ns: Option<u64>) -> Phase {
    Phase {
        name: name.to_string(),
        start_ns,
        end_ns,
    }
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A stable id for a schedule: FNV-1a over the arguments after the program name, so the same
/// command gives the same id (and the same bytes) wherever the binary lives.
fn schedule_id(argv: &[String]) -> String {
    let h = tokenpipe_format::ids::fnv1a(argv.iter().skip(1).map(|a| a.as_bytes()));
    format!("arrivals-{h:016x}")
}
