_arrivals() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="arrivals"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        arrivals)
            opts="-n -h -V --num-prompts --seed --rate --burstiness --arrival --vllm-compatible --ramp --ramp-from --ramp-to --ramp-shape --concurrency --fill --batch --runs --no-warmup --max-concurrency --duration --stabilize --measure --shard --pp --input-tokens --input-range --input-dist --tg --output-tokens --output-range --output-dist --range-ratio --same-prompt --prefix-tokens --prefix-groups --token-ids --tokenizer --depth --corpus --turns --think-time --no-salt --salt-tokens --scenario --trace --trace-format --trace-columns --trace-time-unit --time-scale --trace-skip-failed --dataset --generate --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --num-prompts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --burstiness)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --arrival)
                    COMPREPLY=($(compgen -W "gamma constant" -- "${cur}"))
                    return 0
                    ;;
                --ramp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ramp-from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ramp-to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ramp-shape)
                    COMPREPLY=($(compgen -W "linear exponential" -- "${cur}"))
                    return 0
                    ;;
                --concurrency)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fill)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --batch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-concurrency)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stabilize)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --measure)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shard)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --input-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --input-range)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --input-dist)
                    COMPREPLY=($(compgen -W "uniform normal lognormal" -- "${cur}"))
                    return 0
                    ;;
                --output-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-range)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-dist)
                    COMPREPLY=($(compgen -W "uniform normal lognormal" -- "${cur}"))
                    return 0
                    ;;
                --range-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-groups)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token-ids)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tokenizer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --depth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --corpus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --turns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --think-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --salt-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scenario)
                    COMPREPLY=($(compgen -W "a1 a2 b1 b2 c d" -- "${cur}"))
                    return 0
                    ;;
                --trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trace-format)
                    COMPREPLY=($(compgen -W "auto mooncake burstgpt jsonl csv" -- "${cur}"))
                    return 0
                    ;;
                --trace-columns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --trace-time-unit)
                    COMPREPLY=($(compgen -W "s ms us ns" -- "${cur}"))
                    return 0
                    ;;
                --time-scale)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dataset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --generate)
                    COMPREPLY=($(compgen -W "man complete-bash complete-zsh complete-fish schema" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _arrivals -o nosort -o bashdefault -o default arrivals
else
    complete -F _arrivals -o bashdefault -o default arrivals
fi
