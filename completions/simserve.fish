complete -c simserve -l host -d 'Address to listen on' -r
complete -c simserve -l port -d 'Port to listen on; 0 picks a free port (printed on stdout)' -r
complete -c simserve -l ttft-ms -d 'Milliseconds from receiving a request\'s body to sending its first token, with the fixed timetable (giving it selects `--profile fixed`) [default: 50]' -r
complete -c simserve -l itl-ms -d 'Milliseconds between consecutive tokens, with the fixed timetable (giving it selects `--profile fixed`) [default: 10]' -r
complete -c simserve -l profile -d 'The engine\'s profile: small-gpu (default), spark-gpt-oss-120b, multinode-tp4, or fixed' -r
complete -c simserve -l max-num-seqs -d 'Most sequences running at once [default: the profile\'s]' -r
complete -c simserve -l max-num-batched-tokens -d 'Tokens one step may process, prefill chunks and decodes together [default: the profile\'s]' -r
complete -c simserve -l kv-cache-tokens -d 'KV-cache capacity in tokens; also the longest prompt + completion served [default: the profile\'s]' -r
complete -c simserve -l decode-step-ms -d 'Time of a step by sequences in it, in ms: `A+B` (A + B·batch, e.g. `8+0.5`) or points BATCH:MS (`1:17.5,8:53.1,64:141.4`) [default: the profile\'s]' -r
complete -c simserve -l prefill-tps -d 'Prefill tokens per second: a number, or points TOKENS_IN_STEP:TPS (`1024:3500,8192:7100`) [default: the profile\'s]' -r
complete -c simserve -l prefix-cache -d 'Prompts that share leading 16-token blocks with recent ones skip their prefill (vLLM\'s automatic prefix caching) [default: on]. /metrics counts its lookups and hits (`vllm:prefix_cache_queries_total`, `vllm:prefix_cache_hits_total`, in prompt tokens); given as `on`, each stream\'s usage also says `prompt_tokens_details.cached_tokens`, as vLLM does with --enable-prompt-tokens-details' -r
complete -c simserve -l spec-decode -d 'Speculative decoding: each decode step drafts K tokens, each accepted with probability P until the first rejection, plus one token of the target model\'s' -r
complete -c simserve -l gpus -d 'Model N GPUs on /metrics in NVIDIA DCGM exporter\'s names (a simulation: no GPU is read)' -r
complete -c simserve -l model -d 'The name of the one model served (listed by /v1/models, echoed in every answer)' -r
complete -c simserve -l stamps -d 'Write the server\'s own send stamps to FILE as a tokenpipe stream: a header (whose monotonic_origin_ns lines the stamps up with fire\'s), then one `stamp` record per finished request: request_id, received_ns, first_token_ns, last_token_ns, tokens, and late_max_ns and late_sum_ns, how far after their instants its tokens were handed over' -r -F
complete -c simserve -l token-stamps -d 'With --stamps, also write every token\'s hand-over instant to FILE, one JSON line per finished request: {"request_id": …, "token_ns": [t1, t2, …]}, nanoseconds from the stamps file\'s origin, one entry per token (tokens handed over together share an instant). A client\'s gaps between tokens can then be checked against the server\'s (the benchmark\'s ITL error); it costs 8 bytes per token of a request in flight' -r -F
complete -c simserve -l log-requests -d 'Write every generation request to FILE as it arrives, one JSON line each: {"request_id": …, "headers": {name: value, …}, "body": <the JSON body as received>}. Lines are written whole and unbuffered, so the file can be read while the server runs' -r -F
complete -c simserve -l fault -d 'Make a FRACTION of the requests fail as KIND (repeatable; the kinds are in --help)' -r
complete -c simserve -l fault-seed -d 'Seed of the hash that picks the requests --fault fails' -r
complete -c simserve -l fault-after -d 'Tokens sent before a mid-stream fault acts [default: half of max_tokens, at least 1; at most max_tokens]' -r
complete -c simserve -l retry-after -d 'Seconds the `Retry-After` header of an http=429 or http=503 fault says' -r
complete -c simserve -l api-key -d 'Require `Authorization: Bearer KEY` on every /v1 route (GET /health stays open); other requests get 401 with an OpenAI-style error body' -r
complete -c simserve -l headers-delay-ms -d 'Milliseconds a generation answer\'s status and headers are held back, as a server slow to answer at all (tokens stay on their own schedule and leave together once it is over)' -r
complete -c simserve -l tls-cert -d 'Serve https with this certificate chain (PEM, the server\'s certificate first); needs --tls-key. ALPN offers h2 and http/1.1' -r -F
complete -c simserve -l tls-key -d 'The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1)' -r -F
complete -c simserve -l tokenizer -d 'Count prompt tokens with this Hugging Face tokenizer.json, as an engine serving its model would [default: whitespace-separated words]' -r -F
complete -c simserve -l template-tokens -d 'Tokens added to every chat request\'s prompt count, as a chat template would add (role markers, BOS, the generation prompt): a fixed count, whether words or --tokenizer count' -r
complete -c simserve -l reasoning-share -d 'Stream this share of each chat answer\'s tokens as reasoning first, from 0 to 1, as a thinking model (gpt-oss, DeepSeek-R1, Qwen3) does [default: none]' -r
complete -c simserve -l reasoning-member -d 'The delta member reasoning is sent in: reasoning_content (vLLM\'s reasoning parsers, llama.cpp\'s --reasoning-format deepseek) or reasoning (vLLM 0.10 on, llama.cpp\'s newer builds) [default: reasoning_content]' -r
complete -c simserve -l workers -d 'Tokio worker threads' -r
complete -c simserve -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c simserve -l log-connections -d 'Print one line on stderr per accepted connection: its number, peer, protocol, and accept instant on the monotonic clock (the one fire\'s header and --stamps use)'
complete -c simserve -s h -l help -d 'Print help (see more with \'--help\')'
complete -c simserve -s V -l version -d 'Print version'
