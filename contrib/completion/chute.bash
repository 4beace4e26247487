# bash completion for chute(1): subcommands, their options, job states, and
# the job IDs of the spool (or postgresql:// queue) named on the command line.
#
# The subcommands and options are read from the installed chute's own usage
# (`chute --help`; chute-pgsql's for a URI), not from a copy of its table
# here, so a new option completes as soon as chute has it.  Self-contained:
# it needs none of the bash-completion package's helpers.
# Installed as /usr/share/bash-completion/completions/chute; to try it from
# the source tree: . contrib/chute.bash-completion

# _chute_usage CMD SPOOL: the usage of subcommand CMD (without "chute CMD "),
# or every subcommand's usage line when CMD is empty.  A URI's subcommands
# take more options (--queue, --lease), which only chute-pgsql's usage has.
_chute_usage()
{
	local prog=chute
	case $2 in
	postgres://* | postgresql://*)
		command -v chute-pgsql >/dev/null 2>&1 && prog=chute-pgsql ;;
	esac
	# chute-pgsql prints its usage on stderr (with status 64).
	if [[ -z $1 ]]; then
		"$prog" --help 2>&1 | sed -n 's/^  chute //p'
	else
		"$prog" --help 2>&1 | sed -n "s/^  chute $1 //p"
	fi
}

# _chute_ids SPOOL [STATE] [QUEUE]: the job IDs in SPOOL, one per line: the
# last column of `chute ls`, whose first line is a header.
_chute_ids()
{
	local -a args=(ls "$1")
	[[ -n $2 ]] && args+=("$2")
	[[ -n $3 ]] && args+=(--queue "$3")
	chute "${args[@]}" 2>/dev/null | awk 'NR > 1 { print $NF }'
}

_chute()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmd=${COMP_WORDS[1]} usage spool queue dashdash npos
	local -a opts argopts states
	COMPREPLY=()

	# chute help NAME: NAME's usage.
	if ((COMP_CWORD == 1)) || { [[ $cmd == help ]] && ((COMP_CWORD == 2)); }; then
		COMPREPLY=($(compgen -W "$(_chute_usage '' | cut -d' ' -f1) \
		    --help --version" -- "$cur"))
		return
	fi

	# chute's usage says which options take a value, which tells the
	# spool from an option's value; a URI's usage is chute-pgsql's.
	usage=$(_chute_usage "$cmd" '')
	[[ -z $usage ]] && return
	_chute_parse_usage "$usage"
	_chute_scan_words
	case $spool in
	postgres://* | postgresql://*)
		usage=$(_chute_usage "$cmd" "$spool")
		_chute_parse_usage "$usage"
		_chute_scan_words ;;
	esac
	spool=${spool/#\~/$HOME}

	if ((dashdash)); then
		# run's handler: a command first, then its arguments.
		if ((npos == 0)); then
			# compgen -c lists a name once per kind (alias, builtin, file).
			COMPREPLY=($(compgen -c -- "$cur" | sort -u))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return
	fi

	case " ${argopts[*]} " in
	*" $prev "*)
		_chute_optarg "$prev" "$usage"
		return ;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${opts[*]}" -- "$cur"))
		return
	fi
	if [[ -z $spool ]]; then
		# The spool is a directory (or a URI, which nothing completes).
		COMPREPLY=($(compgen -d -- "$cur"))
		return
	fi
	case $cmd in
	status | wait | cancel | log)
		COMPREPLY=($(compgen -W "$(_chute_ids "$spool" '' "$queue")" \
		    -- "$cur")) ;;
	retry)
		COMPREPLY=($(compgen -W "$(_chute_ids "$spool" failed "$queue")" \
		    -- "$cur")) ;;
	submit)
		COMPREPLY=($(compgen -f -- "$cur")) ;;
	*)
		COMPREPLY=($(compgen -W "${states[*]}" -- "$cur")) ;;
	esac
}

# _chute_scan_words: what the words between the subcommand and the cursor
# say: the spool (the first operand), the --queue, whether run's "--" has
# been passed and how many words follow it.  Reads _chute's argopts.
_chute_scan_words()
{
	local i word
	spool= queue= dashdash=0 npos=0
	for ((i = 2; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		if ((dashdash)); then
			((npos++))
		elif [[ $word == -- ]]; then
			dashdash=1
		elif [[ ${COMP_WORDS[i-1]} == --queue ]]; then
			queue=$word
		elif [[ $word != -* && -z $spool ]] &&
		    ! _chute_in "${COMP_WORDS[i-1]}" "${argopts[@]}"; then
			spool=$word
		fi
	done
}

# _chute_in WORD LIST...: is WORD one of LIST?
_chute_in()
{
	local w=$1 x
	shift
	for x in "$@"; do
		[[ $x == "$w" ]] && return 0
	done
	return 1
}

# _chute_parse_usage USAGE: sets opts (every option of the usage line),
# argopts (those whose value is the next word: "--x VALUE", not "[--x]" nor
# "[--x[=VALUE]]") and
# states (the bare state words, as in ls's [new|cur|...]).
_chute_parse_usage()
{
	local -a words=($1)
	local i w next
	opts=() argopts=() states=()
	for ((i = 0; i < ${#words[@]}; i++)); do
		w=${words[i]#[}
		next=${words[i+1]}
		case $w in
		-- | --\]) ;;
		-[a-zA-Z]* | --[a-zA-Z]*)
			# "[--drain]", "[--syslog[=FACILITY]]": the name alone.
			opts+=("${w%%[][=]*}")
			[[ $w == "${w%%[][=]*}" && -n $next &&
			    $next != [-[\|]* ]] && argopts+=("$w") ;;
		*new\|* | *\|failed*)
			# ls's [new|cur|defer|done|failed]; not --state's values.
			[[ ${words[i-1]} == --state ]] && continue
			w=${w//[][]/}
			states+=(${w//|/ }) ;;
		esac
	done
}

# _chute_optarg OPTION USAGE: the values OPTION takes, where they are known:
# groups for --group, the states the usage lists after --state.
_chute_optarg()
{
	local s
	case $1 in
	--group)
		COMPREPLY=($(compgen -g -- "$cur")) ;;
	--state)
		s=${2#*--state }
		s=${s%% *}
		s=${s//[][]/}
		COMPREPLY=($(compgen -W "${s//|/ }" -- "$cur")) ;;
	esac
}

complete -F _chute chute
