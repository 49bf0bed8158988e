complete -c table -l format -d 'Output format' -r -f -a "terminal\t'A box-drawn table for a terminal, numbers right-aligned'
markdown\t'A GitHub-flavoured Markdown table, for reports and pull requests'"
complete -c table -l generate -r -f -a "man\t'A roff man page for section 1'
complete-bash\t'A bash completion script'
complete-zsh\t'A zsh completion script'
complete-fish\t'A fish completion script'
schema\t'The JSON Schema of the stream format'"
complete -c table -s h -l help -d 'Print help (see more with \'--help\')'
complete -c table -s V -l version -d 'Print version'
