complete -c fire -l url -d 'Base URL of the API, up to and including `/v1` (http:// only for now)' -r
complete -c fire -l api -d 'Which endpoint to call' -r -f -a "completions\t'`POST {url}/completions` with `prompt`'
chat\t'`POST {url}/chat/completions` with one user message'"
complete -c fire -l model -d 'Model name to send; by default the first model listed by `GET {url}/models`' -r
complete -c fire -l api-key -d 'Bearer token for the `Authorization` header' -r
complete -c fire -l concurrency -d 'Closed loop: requests kept in flight, overriding the schedule\'s concurrency (ignored, with a warning, for open-loop schedules)' -r
complete -c fire -l timeout -d 'Seconds a request may take from send to the end of its stream' -r
complete -c fire -l threads -d 'Network threads (1 runs everything on one thread, the cheapest for a few thousand streams)' -r
complete -c fire -l save -d 'Also write the events to FILE, from fire\'s own writer: the file is complete (whole lines) after Ctrl-C even when a `tee` or `reduce` downstream died of it' -r -F
complete -c fire -l output-buffer -d 'Output bytes held for a slow reader before fire waits for it and writes a `stall` record (suffixes K, M, G: KiB, MiB, GiB)' -r
complete -c fire -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c fire -l no-ignore-eos -d 'Do not send `ignore_eos: true` (then the model may stop before `max_tokens`)'
complete -c fire -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fire -s V -l version -d 'Print version'
