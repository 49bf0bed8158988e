complete -c table -l format -d 'Output format' -r -f -a "terminal\t'A box-drawn table for a terminal, numbers right-aligned'
markdown\t'A GitHub-flavoured Markdown table, for reports and pull requests'
csv\t'Comma-separated values, one row per run and one column per summary member'
json\t'A JSON array, one object per run with the members of the CSV columns'"
complete -c table -l style -d 'Layout: `default` is one column per run in the chosen format; `vllm` writes each run as the "Serving Benchmark Result" block of `vllm bench serve`, line for line (the summary\'s `vllm` member when it has one, from `reduce --vllm-compatible` or a vLLM result file, else our own figures; `--format` is then ignored); `llama-bench` prints llama-benchy\'s decode and prefill tables (Markdown) from each summary\'s llama-benchy figures, one row per run sorted by concurrency' -r -f -a "default\t'One column per run, one row per metric, in the chosen `--format`'
vllm\t'Each run as the "Serving Benchmark Result" block of `vllm bench serve`, one after another; `--format` is ignored'
llama-bench\t'llama-benchy\'s two Markdown tables: decode and prefill throughput by concurrency'"
complete -c table -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c table -s h -l help -d 'Print help (see more with \'--help\')'
complete -c table -s V -l version -d 'Print version'
