complete -c sweep -l scan -d 'Run every value: NAME=LIST (`1,2,4,8`, `0.5,1,2`), NAME=A..B (every whole number) or NAME=A..BxK (A, A·K, A·K², … up to B, rounded to whole numbers when A and B are whole). Values are numbers above zero, run in increasing order, each once' -r
complete -c sweep -l find -d 'Search NAME=A..B for the largest value that meets --slo (required with it). Whole numbers when A and B are written without a point (a concurrency), decimals otherwise (a rate)' -r
complete -c sweep -l slo -d 'The SLO, METRIC.pQ<=DURATION, comma-separated or repeated: percentile Q of the metric over a point\'s requests at most DURATION (`ttft.p99<=2s`, `tpot.p50<=50ms`). METRIC is one of reduce --slo\'s: ttft, ttfr, tpot, e2el, itl, ttft_sched, e2el_sched, ttfa' -r
complete -c sweep -l resolution -d 'How narrow --find\'s bracket gets: a whole step for whole numbers (default 1), a relative step for decimals (default 5%; `2%` or `0.02`)' -r
complete -c sweep -l repeat -d 'The most runs a point gets: while a bounded percentile\'s interval straddles its bound, the point is run again and its comparable runs pooled. Default 3 with --slo; without one, every point runs this many times (default 1)' -r
complete -c sweep -l between -d 'A command run under `sh -c` before every run but the first (a cache reset, a cool-down `sleep 5`); its failure ends the sweep' -r
complete -c sweep -l max-runs -d 'Start no run after this many measured runs; the record says the sweep stopped short' -r
complete -c sweep -l max-time -d 'Start no run once this long has passed since the first (`30m`)' -r
complete -c sweep -l knee-gain -d 'The gain per doubling of load below which the knee is marked (default 10%; `0.1`)' -r
complete -c sweep -l label -d 'Name of the sweep\'s runs in tables and charts (reduce\'s `--label`): a model, a serving shape (`8xH200`). Default: the model fire was given, else the run id' -r
complete -c sweep -l meta -d 'Run metadata carried on every point\'s summary (reduce\'s `--meta`: model, shape, engine, `gpus=N` for `table --chart pareto` per GPU); repeat for several keys, each once' -r
complete -c sweep -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c sweep -l warmup -d 'Run the first value once before the sweep, unmeasured and not written'
complete -c sweep -l stop-at-knee -d 'Stop a scan at the saturation knee: once a load\'s output tokens/s gained less than --knee-gain per doubling over the load below it while the median E2EL grew by at least as much'
complete -c sweep -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sweep -s V -l version -d 'Print version'
