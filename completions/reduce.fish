complete -c reduce -l label -d 'Name of a run in tables. Given once, it names every run of the input (the repeats of a loop); given several times, it names the runs in order. Default: the model fire was given, else the run id' -r
complete -c reduce -l percentiles -d 'Percentiles of every latency metric, from 0 to 100, comma-separated. Default: 50,90,99 (and 99 alone for the figures of --vllm-compatible, as vLLM\'s default)' -r
complete -c reduce -l net-latency -d 'The network round trip that llama-benchy measures and subtracts from TTFR to estimate prompt processing time (`est_ppt`), e.g. `3ms`. Default: the one fire measured before its first request (its header\'s `net_latency_ms`, llama-benchy\'s method: the mean of three `GET /models`), else 0. Give llama-benchy\'s printed latency to reproduce its run' -r
complete -c reduce -l slo -d 'SLO bounds for goodput, METRIC=DURATION, comma-separated or repeated; METRIC is one of ttft, ttfr, tpot, e2el, itl (the request\'s mean gap), ttft_sched, e2el_sched, ttfa (time to first answer token: a thinking model\'s first token after its reasoning). A request is good when it is ok and within every bound; one without a value for a metric (no TPOT for a one-token answer) meets that bound. With --vllm-compatible, vLLM\'s goodput takes the ttft, tpot and e2el bounds (its `--goodput ttft:200` is `--slo ttft=200ms`)' -r
complete -c reduce -l meta -d 'Run metadata (model, hardware, engine, topology), carried on every summary and in the reduce header\'s `params.meta`; repeat for several keys, each once' -r
complete -c reduce -l from-vllm -d 'A result file of `vllm bench serve --save-result --save-detailed` to read as a run, after the FILEs; repeat for several. Its per-request arrays become our events' -r -F
complete -c reduce -l phase -d 'Measure only this phase of each run: one that arrivals marked (`fill`, `stabilize`, `measure`, `drain`), or `all` for the whole run. Default: `measure` when the run marks one, else the whole run. A request belongs to the phase it was sent in and is measured whole; throughputs count what was stamped in the phase (docs/metrics.md, "Windows"). A batch run\'s warm-up batches (the schedule\'s `warmup_batches`, llama-benchy\'s discarded run) are left out of every figure unless `all`' -r
complete -c reduce -l warmup -d 'Leave out requests sent in this first stretch of each run (`60s`); measure from there' -r
complete -c reduce -l measure -d 'Measure this long after --warmup (or the run start); default: to the end of the run' -r
complete -c reduce -l every -d 'Also write an `interval` record for every DURATION of the run clock (`10s`), as soon as the run has passed it by a second, so a live pipe shows the run as it goes' -r
complete -c reduce -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c reduce -l no-histograms -d 'Leave out the histograms that let summaries of shards or repeated runs merge exactly'
complete -c reduce -l llama-benchy -d 'Add llama-benchy\'s figures (the summary\'s `llama_benchy`) to every run, not only to batch runs (`arrivals --batch N --runs R`), which always carry them. A run whose requests have no batch index gets the per-request figures only'
complete -c reduce -l per-request -d 'Also write a `result` record per request as soon as it ends (after its run\'s header, before its summary): every per-request value, failed requests included'
complete -c reduce -l vllm-compatible -d 'Also compute every figure of `vllm bench serve` with vLLM\'s own definitions (its chunks, numpy\'s interpolated percentiles, duration from the run start, peaks, goodput) into the summary\'s `vllm` member, under vLLM\'s key names; the other fields keep ours. docs/metrics.md lists each difference'
complete -c reduce -l emit-events -d 'Write the events imported with --from-vllm instead of reducing them, so that a vLLM run can go through any tool that reads fire\'s output'
complete -c reduce -l no-group -d 'Write no group summaries. By default, after the last input, every configuration run two or more times (same label and same parameters in every header of the chain) gets a header and a group summary: latencies pooled over its runs, every figure\'s mean, sample sd, CV % and 95 % t interval over the runs, and bootstrap intervals of the percentiles'
complete -c reduce -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reduce -s V -l version -d 'Print version'
