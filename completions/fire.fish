complete -c fire -l url -d 'Base URL of the API, up to and including `/v1` (http:// or https://). Credentials in it (`http://alice:pw@host/v1`) are sent as HTTP Basic auth to that host only and written as `alice:***` (also in --endpoint and --server-metrics); they win over --api-key, an `-H Authorization` wins over them' -r
complete -c fire -l api -d 'Which endpoint to call [default: chat for a batch schedule, as llama-benchy always calls it; completions otherwise]' -r -f -a "completions\t'`POST {url}/completions` with `prompt`'
chat\t'`POST {url}/chat/completions` with one user message'"
complete -c fire -l model -d 'Model name to send; by default the first model listed by `GET {url}/models`' -r
complete -c fire -l api-key -d 'Bearer token for the `Authorization` header (never written anywhere: the output records only that one was given)' -r
complete -c fire -l endpoint -d 'Path of the generation endpoint on the host of --url, for servers whose API is not at `{url}/completions` (`{url}/chat/completions`): e.g. `/openai/deployments/m/completions`. A full `http://` URL is taken as it is. --url stays the base of `GET {url}/models`' -r
complete -c fire -s H -l header -d 'Extra HTTP header on every request, models list included: "Name: value" (repeatable). Values of headers whose name looks secret (authorization, *key*, *token*, cookie) are recorded as `***`. An `Authorization` header replaces --api-key' -r
complete -c fire -l extra-body -d 'JSON object merged into every request body (`\'{"top_p":0.9}\'`). A request\'s own `extra_body` wins for a member both give; fire\'s own members (model, prompt, messages, max_tokens, stream, stream_options, ignore_eos) cannot be set this way' -r
complete -c fire -l temperature -d 'Sampling temperature sent in every body; it replaces a `temperature` from --extra-body or a request\'s `extra_body`. Not sent unless given (the server\'s default applies)' -r
complete -c fire -l stream-usage -d 'Usage reporting asked of the stream: `on` (`stream_options.include_usage`), `continuous` (also vLLM\'s `continuous_usage_stats`, usage on every event), `off` (no `stream_options`, for servers that refuse it; tokens are then counted one per event)' -r -f -a "on\t'`stream_options: {include_usage: true}`: one usage chunk at the end (OpenAI, vLLM, SGLang)'
continuous\t'Also `continuous_usage_stats: true`: usage on every chunk (vLLM), so each event\'s token count is exact even when one event carries several tokens'
off\t'No `stream_options` member at all, for servers that refuse it'"
complete -c fire -l concurrency -d 'Closed loop: requests kept in flight, overriding the schedule\'s concurrency (ignored, with a warning, for open-loop schedules). At most 1,000,000, as in a schedule' -r
complete -c fire -l timeout -d 'Longest a request may take from send to the end of its stream (`timeout`): a duration such as 500ms, 90s, 30m, or plain seconds' -r
complete -c fire -l connect-timeout -d 'Longest wait for a TCP connection to be made (`connect_timeout`)' -r
complete -c fire -l first-token-timeout -d 'Longest wait from the send to the first event with content (`first_token_timeout`); off unless given, since queueing on a loaded server is a wait worth measuring' -r
complete -c fire -l idle-timeout -d 'Longest silence between two reads of a response body, once its first byte came (`idle_timeout`), so that a stalled stream fails in a minute rather than at --timeout; 0 turns it off' -r
complete -c fire -l retry-connect -d 'When 8 requests failed to connect since the last success, wait for the server instead of stopping: new requests wait while fire tries to connect after 100 ms, then twice as long each time up to 5 s, and sending goes on once a connection opens, so that a run survives a server restart. The requests that failed stay failed (they are data). It gives up, and the run stops, when no connection opened within DURATION of waiting (60s unless given, as --retry-connect=2m). Off by default' -r
complete -c fire -l threads -d 'Network threads (1 runs everything on one thread, the cheapest for a few thousand streams)' -r
complete -c fire -l save -d 'Also write the events to FILE, from fire\'s own writer: the file is complete (whole lines) after Ctrl-C even when a `tee` or `reduce` downstream died of it' -r -F
complete -c fire -l output-buffer -d 'Output bytes held for a slow reader before fire waits for it and writes a `stall` record (suffixes K, M, G: KiB, MiB, GiB)' -r
complete -c fire -l server-metrics -d 'Read the server\'s Prometheus metrics before the first request and after the last (and on Ctrl-C), each as a `server_metrics` record, so that `reduce` reports the server\'s own token counts and mean TTFT, ITL and E2E latency beside the client\'s. The URL is the base URL without `/v1`, then `/metrics` (where vLLM serves it), unless one is given. A scrape that fails is a warning, never a failed run. Give another URL with `=` (`--server-metrics=http://host:9090/metrics`): after a space it would be read as the input file. The API key and -H headers go only to the host the requests go to' -r
complete -c fire -l latency-mode -d 'Batch schedules: how the network latency is measured before the first batch, written as the header\'s `net_latency_ms`, which reduce\'s llama-benchy figures subtract' -r -f -a "api\t'Mean of three `GET {url}/models`, each to its whole answer (llama-benchy\'s default)'
generation\t'Mean of three streamed one-token requests on the run\'s API, each to its first bytes'
none\t'Not measured: 0 ms'"
complete -c fire -l cacert -d 'Trust only the CA certificates in FILE (PEM) for an https:// URL, instead of the system\'s (as curl\'s --cacert)' -r -F
complete -c fire -l connections -d 'HTTP/2 connections to spread requests over, in turn (a server\'s limit on streams per connection, often 100 to 250, makes requests beyond it wait inside the client)' -r
complete -c fire -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c fire -l keep-going -d 'Run every request even when they fail to connect (by default the run stops once 8 requests failed to connect since the last success: the server is gone; docs/fire/protocol.md)'
complete -c fire -l no-ignore-eos -d 'Do not send `ignore_eos: true` (then the model may stop before `max_tokens`)'
complete -c fire -l record-text -d 'Write each request\'s generated text (reasoning left out) in its `done` record (`done.text`), to check answers or replay a conversation'
complete -c fire -l progress -d 'Show the progress view on stderr even when it is not a terminal (then as a plain line a second). Without it the view shows only on a terminal'
complete -c fire -s q -l quiet -d 'No progress view and no end-of-run counts. Warnings that the measurements may be distorted (the client did not keep up, a stalled output) and errors still print'
complete -c fire -l no-warmup -d 'Batch schedules: do not send llama-benchy\'s two warm-up requests before the first batch (one-token chat requests, user `Warmup ` × 10, then the same as a system message and a user `.`; their `usage.prompt_tokens` go in the header as `warmup_prompt_tokens`). As llama-benchy\'s --no-warmup, they are still sent when the prompts are adapted (see --no-adapt-prompt). The schedule\'s warm-up batch is arrivals\' (`arrivals --no-warmup`)'
complete -c fire -l no-adapt-prompt -d 'Batch schedules: send the prompts as written. By default, when the schedule names its tokenizer (`arrivals --tokenizer`), every prompt is shortened by the tokens the server counts beyond the text in the warm-up (its chat template), as llama-benchy adapts them: at depth 0 the prompt, otherwise the system context, each to no less than one token. The tokens cut are the header\'s `adapt_tokens`'
complete -c fire -l insecure -d 'Accept any certificate over https (a self-signed test server); prints a warning'
complete -c fire -l http2 -d 'Speak HTTP/2 only: h2c with prior knowledge for http://, ALPN h2 for https://. Requests are multiplexed on --connections connections. Without it, fire speaks HTTP/1.1, one connection per request in flight'
complete -c fire -l preconnect -d 'Open the connections before the run\'s clock starts (as many as can be in flight, or --connections with --http2), so the first wave of requests does not wait on connects [default: on for closed loops, off for open loops]'
complete -c fire -l no-preconnect -d 'Do not pre-open connections: the first requests connect as they are sent'
complete -c fire -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fire -s V -l version -d 'Print version'
