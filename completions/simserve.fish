complete -c simserve -l host -d 'Address to listen on' -r
complete -c simserve -l port -d 'Port to listen on; 0 picks a free port (printed on stdout)' -r
complete -c simserve -l ttft-ms -d 'Milliseconds from receiving a request\'s body to sending its first token' -r
complete -c simserve -l itl-ms -d 'Milliseconds between consecutive tokens' -r
complete -c simserve -l model -d 'The name of the one model served (listed by /v1/models, echoed in every answer)' -r
complete -c simserve -l stamps -d 'Write the server\'s own send stamps to FILE as a tokenpipe stream: a header (whose monotonic_origin_ns lines the stamps up with fire\'s), then one `stamp` record per finished request: request_id, received_ns, first_token_ns, last_token_ns, tokens' -r -F
complete -c simserve -l log-requests -d 'Write every generation request to FILE as it arrives, one JSON line each: {"request_id": …, "headers": {name: value, …}, "body": <the JSON body as received>}. Lines are written whole and unbuffered, so the file can be read while the server runs' -r -F
complete -c simserve -l fault -d 'Make a FRACTION of the requests fail as KIND (repeatable; the kinds are in --help)' -r
complete -c simserve -l fault-seed -d 'Seed of the hash that picks the requests --fault fails' -r
complete -c simserve -l fault-after -d 'Tokens sent before a mid-stream fault acts [default: half of max_tokens, at least 1; at most max_tokens]' -r
complete -c simserve -l api-key -d 'Require `Authorization: Bearer KEY` on every /v1 route (GET /health stays open); other requests get 401 with an OpenAI-style error body' -r
complete -c simserve -l headers-delay-ms -d 'Milliseconds a generation answer\'s status and headers are held back, as a server slow to answer at all (tokens stay on their own schedule and leave together once it is over)' -r
complete -c simserve -l tls-cert -d 'Serve https with this certificate chain (PEM, the server\'s certificate first); needs --tls-key. ALPN offers h2 and http/1.1' -r -F
complete -c simserve -l tls-key -d 'The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1)' -r -F
complete -c simserve -l workers -d 'Tokio worker threads' -r
complete -c simserve -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c simserve -l log-connections -d 'Print one line on stderr per accepted connection: its number, peer, protocol, and accept instant on the monotonic clock (the one fire\'s header and --stamps use)'
complete -c simserve -s h -l help -d 'Print help (see more with \'--help\')'
complete -c simserve -s V -l version -d 'Print version'
