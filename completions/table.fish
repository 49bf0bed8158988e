complete -c table -l format -d 'Output format' -r -f -a "terminal\t'A box-drawn table for a terminal, numbers right-aligned'
markdown\t'A GitHub-flavoured Markdown table, for reports and pull requests'
csv\t'Comma-separated values: one row per run and a column per summary member, or the chosen layout\'s rows (`--columns`, `--sort`, `--baseline`, pivots, rankings) with raw numbers'
json\t'A JSON array of objects with the members of the CSV columns'
mermaid\t'Mermaid `xychart-beta` bar or line charts of `--cell` (default output throughput) in fenced blocks, which GitHub renders: one chart per `--cols` value with a pivot'
svg\t'One chart as an SVG document (`--chart` picks which)'
html\t'One self-contained HTML page: the table and every chart the runs have data for'"
complete -c table -l style -d 'Layout: `default` is this tool\'s own (see --layout); `vllm` writes each run as the "Serving Benchmark Result" block of `vllm bench serve`, line for line (the summary\'s `vllm` member when it has one, from `reduce --vllm-compatible` or a vLLM result file, else our own figures; its latency sections as `--percentile-metrics` and `--metric-percentiles` choose them, by default vLLM\'s: TTFT, TPOT and ITL with their P99; every text format prints the same block, and charts are refused); `llama-bench` prints llama-benchy\'s own Markdown table byte for byte (a pp and a tg row per run, every column in its order), then the decode and prefill tables its users post, one row per run sorted by concurrency, from each summary\'s llama-benchy figures' -r -f -a "default\t'This tool\'s layouts (runs as columns or rows, pivots, rankings), in the chosen `--format`'
vllm\t'Each run as the "Serving Benchmark Result" block of `vllm bench serve`, one after another, the same in every text format (charts are refused)'
llama-bench\t'llama-benchy\'s own Markdown table, then its users\' decode and prefill throughput tables by concurrency'"
complete -c table -l layout -d 'Runs as columns (`wide`: a row per metric) or as rows (`long`: a row per run, a column per field); `auto` is wide unless `--columns` is given or there are more than 6 runs' -r -f -a "auto\t'Wide while it stays readable, long when `--columns` is given or there are many runs'
wide\t'One column per run, one row per metric (`vllm bench serve`\'s block turned sideways)'
long\t'One row per run, one column per field'"
complete -c table -l columns -d 'The fields to show, comma-separated, in order: `ttft.p50,tpot.p99,output_tps`. A field is `METRIC.STAT` (ttft, tpot, itl, e2el, ttfr, user_tps, … with mean, sd, min, max, median, p90, p99.9, …), a short name (output_tps, total_tps, request_rate, ok, failed, cancelled, not_sent, comparable, verdict, duration, jitter, goodput, peak_tps, tg_tps, pp_tps), a setting (concurrency, rate, burstiness, batch, isl, osl, model), `meta.KEY`, `label`, `file`, `workload` or `runs` (the runs a group summary pools, else 1). `A|B` is A where a run has it, else B (`tg_tps|output_tps`). `--list-fields` lists those of the input' -r
complete -c table -l sort -d 'Orders runs by these fields (`concurrency`, `output_tps:desc`); without it runs keep the order of their labels\' first appearance, then go by their load, in natural order (c2 before c16)' -r
complete -c table -l spread -d 'How the figures of a group summary (repeated runs) read: `cv` is `mean ± sd (CV %)`, `sd` is `mean ± sd`, `ci` is `mean [lo, hi]` (95 % confidence interval of the mean), `none` the mean alone' -r -f -a "cv\t'`mean ± sd (CV %)`: the mean over runs, its sample standard deviation and coefficient of variation'
sd\t'`mean ± sd`, as the arena and hyperfine print it'
ci\t'`mean [lo, hi]`: the 95 % Student-t interval of the mean over runs'
none\t'The mean alone'"
complete -c table -l baseline -d 'Adds ratio columns against the run labelled LABEL (in a pivot, the column LABEL): each run is compared with the baseline run of the same workload (`0.85x`)' -r
complete -c table -l rows -d 'Pivot: one row per value of this field (`model`, `meta.shape`, `concurrency`)' -r
complete -c table -l cols -d 'Pivot: one column per value of this field (`profile`, `label`)' -r
complete -c table -l cell -d 'Pivot: the field in each cell (default `output_tps`); also what `--format mermaid` charts. `A|B` takes A where a run has it, else B: `tg_tps|output_tps` sets llama-benchy\'s decode rate of batch runs beside the output throughput of other runs' -r
complete -c table -l top -d 'Pivot: instead of the table, the best N rows of each column by the cell\'s field (higher throughput, lower latency): "Top 3 by Output [tok/s] per profile". A run that is not comparable is marked `†`, with its reason under the table' -r
complete -c table -l by -d 'A row per part of each run merged from shards (`reduce` of `arrivals --shard` parts): its host, status (`ok`, `lost`: no client record, `missing`), start after the earliest part, lateness against `fire --start-at`, requests planned, seen and lost, whether its client kept up and its clock\'s offset to the server\'s; a line per run under the table gives the start spread, the clock skew and the verdict on the parts. `host` orders the rows by host, `shard` by run and shard. Takes no other layout flag' -r -f -a "host\t'By host, then run and shard: what each machine did'
shard\t'By run, then shard: each plan\'s parts in order'"
complete -c table -l chart -d 'The chart `--format svg` draws: `load` (output throughput, TTFT and TPOT against the load setting that differs between runs, concurrency, rate or batch: a panel per metric, a log₂ axis for a doubling sweep, more than 8 series split over further panels), `pareto` (per-user output tok/s against total output tok/s, each point labelled with its load, the frontier drawn; per GPU when every run has `reduce --meta gpus=N`), `capacity` (each SLO bound\'s figure against the load of a `sweep`, with the bound and the capacity it found), `ttft-cdf` and `itl-cdf` (one cumulative distribution per run, from the summaries\' histograms), `timeline` (output tokens/s and requests in flight over time, from `reduce --every`). Default: `load` when the runs differ in a load setting, else `ttft-cdf`. `--format html` shows every chart the runs have data for' -r -f -a "load\t'Output throughput, TTFT and TPOT (p50 solid, p99 dashed) against the load setting that differs between runs (concurrency, else request rate, else batch size), a panel per metric'
pareto\t'Per-user output tok/s (user_tps p50) against total output tok/s, per GPU with `reduce --meta gpus=N`: a point per load, a line per series, the Pareto frontier'
capacity\t'Each SLO bound\'s figure against the load a `sweep` varied: the points with their 95 % intervals, the bound, and the capacity found (from `sweep`\'s record)'
ttft-cdf\t'The distribution of time to first token, one line per run'
itl-cdf\t'The distribution of inter-token latency, one line per run'
timeline\t'Output tokens/s and requests in flight over a run\'s time, from `reduce --every`'"
complete -c table -l percentile-metrics -d '`--style vllm`: the latency sections of each block, as `vllm bench serve --percentile-metrics` chooses them: ttft, tpot, itl, e2el, comma-separated. Sections keep vLLM\'s order (TTFT, TPOT, ITL, E2EL) whatever the order given. Default, as vLLM\'s: ttft,tpot,itl (no End-to-end Latency)' -r
complete -c table -l metric-percentiles -d '`--style vllm`: the `P…` line of each section for these percentiles, in the order given, as `vllm bench serve --metric-percentiles` prints them (`50,90,99`, `99.9` → `P99.9`). Each must be among the run\'s figures: a vLLM result\'s own, or `reduce --percentiles`. Default, as vLLM\'s: 99' -r
complete -c table -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c table -l only-comparable -d 'Leaves out the runs that are not comparable (docs/verdict.md: a request failed, was cancelled or not sent, the client fell behind, the server counted otherwise) from every table, pivot, ranking and chart, and names each on stderr with its reason: `table: left out LABEL: REASON`. Without it they are shown, marked (`Comparable: no`, `†`)'
complete -c table -l list-fields -d 'Lists the fields the input has, for `--columns`, `--sort`, `--rows`, `--cols` and `--cell`, and exits'
complete -c table -s h -l help -d 'Print help (see more with \'--help\')'
complete -c table -s V -l version -d 'Print version'
