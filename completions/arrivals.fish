complete -c arrivals -s n -l num-prompts -d 'Number of requests to write (sessions with --turns) [default: 100; no limit for a closed loop bounded by --duration or --measure, the whole file with --trace]' -r
complete -c arrivals -l seed -d 'Random seed for arrival times and prompts' -r
complete -c arrivals -l rate -d 'Mean request rate in requests per second (from 0.000001, one request in 11.6 days, to 1000000000, one a nanosecond), or `inf` to send all requests at once' -r
complete -c arrivals -l burstiness -d 'Gamma shape of the gaps between arrivals: 1 is Poisson, <1 burstier, >1 more regular (from 0.000001 to 1000000)' -r
complete -c arrivals -l arrival -d 'Gamma-distributed gaps, or every gap exactly 1/RATE' -r -f -a "gamma\t'Gamma-distributed gaps of shape --burstiness (Poisson at 1)'
constant\t'Every gap exactly 1/RATE'"
complete -c arrivals -l ramp -d 'Ramp the rate from --ramp-from to --ramp-to: over a time (`30s`), or over the requests by index (`requests`, vLLM\'s --ramp-up-strategy)' -r
complete -c arrivals -l ramp-from -d 'Rate at the start of the ramp, requests per second (0, or a --rate)' -r
complete -c arrivals -l ramp-to -d 'Rate at the end of the ramp, requests per second (held after a ramp over time; 0, or a --rate)' -r
complete -c arrivals -l ramp-shape -d 'How the ramp moves between its rates' -r -f -a "linear\t'Equal steps'
exponential\t'Equal ratios'"
complete -c arrivals -l concurrency -d 'Closed loop: keep exactly N requests in flight instead of following a timetable (at most 1,000,000)' -r
complete -c arrivals -l fill -d 'Closed loop: start the first N requests one by one at this pace (`1/s`, or a gap such as `500ms`) instead of all at once: the fill phase' -r
complete -c arrivals -l batch -d 'Batch mode (llama-benchy\'s --concurrency N): send N requests together, wait for all, repeat --runs times, after one warm-up batch that `reduce` leaves out (see --no-warmup). Our --concurrency is a closed loop, not llama-benchy\'s batches. At most 1,000,000' -r
complete -c arrivals -l runs -d 'Batch mode: how many measured batches [default: 3, llama-benchy\'s]' -r
complete -c arrivals -l max-concurrency -d 'Open loop: at most N requests in flight; a request due while all are busy waits for a slot, and `fire` records the wait. At most 1,000,000' -r
complete -c arrivals -l duration -d 'Stop sending new requests this long after the start (`120s`, `5m`)' -r
complete -c arrivals -l stabilize -d 'Mark a warm-up phase of this length (after the fill) whose requests `reduce` can leave out' -r
complete -c arrivals -l measure -d 'Mark the measured phase (after the fill and --stabilize); no request is sent after it, and those in flight drain' -r
complete -c arrivals -l shard -d 'Write only part I of N of the schedule (from 0): run one `fire` per part and merge. `auto` takes I and N from the launcher\'s environment: TOKENPIPE_SHARD=I/N, GNU parallel\'s PARALLEL_SEQ or a Kubernetes Indexed Job\'s JOB_COMPLETION_INDEX (each with TOKENPIPE_SHARDS=N), or Slurm\'s SLURM_PROCID and SLURM_NTASKS, the first set in that order; none set is an error naming them' -r
complete -c arrivals -l input-tokens -l pp -d 'Prompt length in tokens, at most 16,777,216 [default: 1024, or the --scenario\'s]. `--pp` is llama-benchy\'s name for it' -r
complete -c arrivals -l input-range -d 'Spread of prompt lengths: the range ratio of a uniform draw (0.2 gives ±20 %), or the coefficient of variation of a normal or lognormal one' -r
complete -c arrivals -l input-dist -d 'How prompt lengths spread around --input-tokens' -r -f -a "uniform\t'Uniform within mean × (1 ± spread) (vLLM\'s range ratio)'
normal\t'Normal, spread = standard deviation / mean'
lognormal\t'Lognormal, spread = standard deviation / mean'"
complete -c arrivals -l output-tokens -l tg -d 'Tokens to generate per request, `max_tokens` (at most 16,777,216) [default: 128; with --dataset, each prompt\'s own answer length]. `--tg` is llama-benchy\'s name for it' -r
complete -c arrivals -l output-range -d 'Spread of answer lengths, as --input-range' -r
complete -c arrivals -l output-dist -d 'How answer lengths spread around --output-tokens' -r -f -a "uniform\t'Uniform within mean × (1 ± spread) (vLLM\'s range ratio)'
normal\t'Normal, spread = standard deviation / mean'
lognormal\t'Lognormal, spread = standard deviation / mean'"
complete -c arrivals -l range-ratio -d 'Spread prompt and answer lengths alike: vLLM\'s --random-range-ratio, the same as --input-range R --output-range R' -r
complete -c arrivals -l prefix-tokens -d 'Start every prompt with a shared prefix of this many tokens, added to --input-tokens' -r
complete -c arrivals -l prefix-groups -d 'How many different shared prefixes; request i uses prefix i mod GROUPS' -r
complete -c arrivals -l token-ids -d 'Token ids to make prompts of, START..END (end excluded): exact lengths on /v1/completions, for any model whose vocabulary holds them' -r
complete -c arrivals -l tokenizer -d 'A Hugging Face `tokenizer.json` to make text prompts of exactly --input-tokens tokens for its model (special tokens and the chat template not counted), with a salt of words that are one token each in it. For exact token ids instead, use --token-ids' -r -F
complete -c arrivals -l depth -d 'Tokens of extra context before each prompt, sent as a system message (llama-benchy\'s --depth): exact with --tokenizer, approximate words without it. Counted apart from --input-tokens, as llama-benchy counts it' -r
complete -c arrivals -l corpus -d 'Cut every prompt (and its --depth context) out of this text, as llama-benchy cuts them out of its book: the text is tokenized once with --tokenizer, and each request takes --input-tokens + --depth consecutive tokens from a start drawn with --seed (the text repeated when it is too short); the first --depth of them, decoded, are the context, the rest the prompt. llama-benchy\'s book is Project Gutenberg\'s `1661-0.txt`' -r -F
complete -c arrivals -l turns -d 'Turns per session: each arrival starts a conversation whose later turns carry the earlier turns and the answers really received. --num-prompts then counts sessions [default: 1, or the --scenario\'s]' -r
complete -c arrivals -l think-time -d 'Think time before each later turn: a duration (`2s`) or a uniform range (`1s..5s`)' -r
complete -c arrivals -l salt-tokens -d 'Salt length in tokens (counted in each first prompt\'s length)' -r
complete -c arrivals -l scenario -d 'A workload of the closed-loop study (seed 004): A1 same short prompt, A2 same long, B1 distinct short, B2 distinct long, C long shared prefix and short queries, D multi-turn' -r -f -a "a1\t'Identical 50-token prompts: best case for a prefix cache'
a2\t'Identical 2,500-token prompts: prefix cache with long prefill'
b1\t'Distinct 50-token prompts: raw throughput, no caching'
b2\t'Distinct 2,500-token prompts: diverse and long'
c\t'A 2,000-token shared prefix before distinct 50-token queries (RAG, agents)'
d\t'Five-turn conversations of 50-token messages: history grows each turn'"
complete -c arrivals -l trace -d 'Replay this trace (JSONL or CSV): each row is a request sent at its timestamp\'s distance from the first row\'s, with the row\'s prompt and answer lengths. Streamed, so any size fits; the whole trace unless --num-prompts or --duration cut it' -r -F
complete -c arrivals -l trace-format -d 'The trace\'s layout: told from the extension and the first line\'s columns (`auto`), Mooncake JSONL, BurstGPT CSV, or any JSONL/CSV with --trace-columns' -r -f -a "auto\t'By extension and by the first line\'s columns'
mooncake\t'Mooncake JSONL: timestamp (ms), input_length, output_length'
burstgpt\t'BurstGPT CSV: Timestamp (s), Request tokens, Response tokens'
jsonl\t'JSON lines, columns from --trace-columns or a known layout'
csv\t'CSV with a header, columns from --trace-columns or a known layout'"
complete -c arrivals -l trace-columns -d 'Which columns hold the send time, the prompt length and the answer length; any left out come from the built-in layout' -r
complete -c arrivals -l trace-time-unit -d 'Unit of the time column [default: the layout\'s: ms for Mooncake, s otherwise]' -r -f -a "s\t'Seconds'
ms\t'Milliseconds'
us\t'Microseconds'
ns\t'Nanoseconds'"
complete -c arrivals -l time-scale -d 'Multiply every offset by F: 0.5 replays twice as fast, 2 half as fast' -r
complete -c arrivals -l dataset -d 'Take prompts from a file, KIND:PATH. `sharegpt:FILE` reads a ShareGPT JSON array whole and samples it as `vllm bench serve --dataset-name sharegpt` does (shuffled by --seed; first message as the prompt, the answer\'s length as max_tokens unless --output-tokens is given). `jsonl:FILE` streams one `{"prompt": ..., "output_tokens": N}` object a line, in order, starting again from the top when the schedule needs more. Prompt lengths are counted approximately (one token per 4 characters) without a tokenizer. A trace sets its own lengths, so --trace takes synthetic prompts instead' -r
complete -c arrivals -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c arrivals -l vllm-compatible -d 'Reproduce `vllm bench serve`\'s schedule: the first request waits its own gap, and the offsets are rescaled so that the last lands at NUM_PROMPTS/RATE. Gaps and uniform lengths are drawn from numpy\'s generators as vLLM draws them, so the same --seed gives vLLM\'s requests at vLLM\'s instants'
complete -c arrivals -l no-warmup -d 'Batch mode: no warm-up batch. By default one more batch goes first, marked in the schedule (`warmup_batches: 1`) and left out of every figure, as llama-benchy discards its run 0 (llama-benchy\'s --no-warmup)'
complete -c arrivals -l same-prompt -d 'Send the same prompt every time (best case for a prefix cache)'
complete -c arrivals -l no-salt -d 'Do not salt prompts. By default `fire` puts a short salt, new for every run, before each session\'s first prompt, so a repeated run never finds its prompts in a warm prefix cache (shared prefixes stay shared within a run)'
complete -c arrivals -l trace-skip-failed -d 'Leave out rows with 0 output tokens (BurstGPT\'s failed requests) instead of sending them with max_tokens 1'
complete -c arrivals -s h -l help -d 'Print help (see more with \'--help\')'
complete -c arrivals -s V -l version -d 'Print version'
