complete -c reduce -l label -d 'Name of a run in tables; give once per run, in order. Default: the model fire was given, else the run id' -r
complete -c reduce -l percentiles -d 'Percentiles of every latency metric, from 0 to 100, comma-separated' -r
complete -c reduce -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c reduce -l no-histograms -d 'Leave out the histograms that let summaries of shards or repeated runs merge exactly'
complete -c reduce -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reduce -s V -l version -d 'Print version'
