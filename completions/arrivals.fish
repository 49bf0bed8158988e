complete -c arrivals -l rate -d 'Mean request rate in requests per second, or `inf` to send all requests at once' -r
complete -c arrivals -l burstiness -d 'Gamma shape of the inter-arrival gaps: 1 is Poisson, <1 burstier, >1 more regular' -r
complete -c arrivals -l concurrency -d 'Closed loop: keep exactly N requests in flight instead of following a timetable' -r
complete -c arrivals -s n -l num-prompts -d 'Number of requests to write' -r
complete -c arrivals -l input-tokens -d 'Prompt length in tokens (at most 16,777,216)' -r
complete -c arrivals -l output-tokens -d 'Tokens to generate per request, `max_tokens` (at most 16,777,216)' -r
complete -c arrivals -l seed -d 'Random seed for arrival times and prompts' -r
complete -c arrivals -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c arrivals -s h -l help -d 'Print help (see more with \'--help\')'
complete -c arrivals -s V -l version -d 'Print version'
