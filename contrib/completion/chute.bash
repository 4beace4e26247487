# bash completion for chute(1): subcommands, their options, job states, and
# the job IDs of the spool (or postgresql:// queue) named on the command line.
#
# The subcommands and options are read from the installed chute's own usage
# (`chute --help`; chute-pgsql's for a URI), not from a copy of its table
# here, so a new option completes as soon as chute has it.  Self-contained:
# it needs none of the bash-completion package's helpers.
# Installed as /usr/share/bash-completion/completions/chute; to try it from
# the source tree: . contrib/completion/chute.bash
#
# A job ID is whatever a submitter chose ($(...) included) and root may be
# the one pressing TAB: no ID is ever expanded or evaluated here (no
# compgen -W, no eval, no unquoted expansion), and each is inserted quoted
# (tests/completion.sh).

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

# _chute_ids SPOOL [STATE] [QUEUE]: the job IDs in SPOOL, one per line, as
# they are: the last column of `chute ls` (whose first line is a header;
# a key has no space, an ID none unescaped, so the sixth column is it),
# which shows an ID escaped as strvis(3) does, decoded again.  An ID holds
# no control byte, so only \\, \s (a space) and \ooo (a byte above 0x7e)
# occur; a line with anything else is not an ID and is left out.
_chute_ids()
{
	local -a args=(ls "$1")
	[[ -n $2 ]] && args+=("$2")
	[[ -n $3 ]] && args+=(--queue "$3")
	chute "${args[@]}" 2>/dev/null | LC_ALL=C awk '
	NR > 1 {
		if (!sub(/^[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, ""))
			next
		id = ""
		while ((i = index($0, "\\")) > 0) {
			id = id substr($0, 1, i - 1)
			e = substr($0, i + 1, 3)
			if (substr(e, 1, 1) == "\\") {
				id = id "\\"; n = 2
			} else if (substr(e, 1, 1) == "s") {
				id = id " "; n = 2
			} else if (e ~ /^[0-3][0-7][0-7]$/) {
				c = substr(e, 1, 1) * 64 + substr(e, 2, 1) * 8
				id = id sprintf("%c", c + substr(e, 3, 1))
				n = 4
			} else
				next
			$0 = substr($0, i + n)
		}
		print id $0
	}'
}

# _chute_reply WORD...: COMPREPLY, the WORDs that begin with the word being
# completed, each quoted so that the shell reads it back as it is.  Never
# `compgen -W`, which expands its words ($(...), `...`, globs): an ID is
# whatever a submitter chose.  The word on the line is compared without its
# quoting.  Readline replaces only its own part of that word (after an open
# quote, or after a COMP_WORDBREAKS character such as the : of a URI), so
# each reply is the rest of WORD after what precedes that part, quoted as
# the open quote (if any) wants: readline closes the quote itself.  That
# part is what bash passed _chute as $2 (ctext).
_chute_reply()
{
	local w raw=${words[cword]} text=$ctext
	local pre dpre word q
	[[ $raw == *"$text" ]] || text=$raw
	pre=${raw:0:${#raw}-${#text}}
	_chute_dequote "$pre" dpre q
	_chute_dequote "$raw" word
	for w; do
		[[ $w == "$word"* ]] || continue
		_chute_quote "${w:${#dpre}}" "$q" w
		COMPREPLY+=("$w")
	done
	return 0
}

# _chute_quote WORD Q VAR: WORD quoted for the shell into VAR, within an
# open quote Q (' or "), or with backslashes (printf %q) when Q is empty.
_chute_quote()
{
	local out
	case $2 in
	"'")
		out=${1//\'/\'\\\'\'} ;;
	'"')
		out=${1//\\/\\\\}
		out=${out//\$/\\\$}
		out=${out//\`/\\\`}
		out=${out//\"/\\\"}
		# A ! would start history expansion even here: end the quote
		# around it.
		out=${out//!/\"\'!\'\"} ;;
	*)
		printf -v out %q "$1" ;;
	esac
	printf -v "$3" %s "$out"
}

# _chute_reply_files -c|-d|-f|-g: COMPREPLY, the commands, directories,
# files or groups that begin with the word being completed, as names of
# files, which readline quotes itself (and ends a directory with /).  As in
# bash's own file completion, a name with a COMP_WORDBREAKS character (:,
# =, @) is not completed past it.
_chute_reply_files()
{
	local word
	_chute_dequote "${words[cword]}" word
	mapfile -t COMPREPLY < <(compgen "$1" -- "$word" | sort -u)
	compopt -o filenames 2>/dev/null
	return 0
}

# _chute_reply_lines COMMAND...: _chute_reply with the lines COMMAND prints.
_chute_reply_lines()
{
	local -a lines
	mapfile -t lines < <("$@")
	_chute_reply "${lines[@]}"
}

# _chute_subcommands: every subcommand's name, and chute's own options.
_chute_subcommands()
{
	_chute_usage '' | cut -d' ' -f1
	printf '%s\n' --help --version
}

# _chute_dequote WORD VAR [QVAR]: WORD as the shell would pass it, into VAR,
# its backslashes and quotes removed (an unclosed quote runs to the end),
# and nothing expanded: no eval, $ and ` stay as they are.  QVAR, if given,
# is set to the quote left open at the end (' or "), or to nothing.  Its
# own variables begin with _: VAR and QVAR are the caller's names.
_chute_dequote()
{
	local _in=$1 _out= _c _q= _i
	for ((_i = 0; _i < ${#_in}; _i++)); do
		_c=${_in:_i:1}
		if [[ $_q == "'" ]]; then
			[[ $_c == "'" ]] && _q= || _out+=$_c
		elif [[ $_c == '\' ]]; then
			((_i++))
			_c=${_in:_i:1}
			# Within "...", a backslash quotes only $ ` " \.
			[[ $_q == '"' && $_c != [\$\`\"\\] ]] && _out+='\'
			_out+=$_c
		elif [[ $_c == '"' ]]; then
			[[ $_q == '"' ]] && _q= || _q='"'
		elif [[ $_c == "'" && -z $_q ]]; then
			_q="'"
		else
			_out+=$_c
		fi
	done
	printf -v "$2" %s "$_out"
	[[ -n ${3-} ]] && printf -v "$3" %s "$_q"
	return 0
}

# _chute_words: words and cword, COMP_WORDS and COMP_CWORD with the words
# that COMP_WORDBREAKS split but the shell would not joined again: bash
# splits postgresql://host/db into "postgresql", ":", "//host/db".  A
# piece is joined to the one before when no blank separates them on the
# line.
_chute_words()
{
	local line=${COMP_LINE:0:COMP_POINT} i w
	words=()
	# Called without the line (a program setting only COMP_WORDS and
	# COMP_CWORD, as bash-completion's tests do): its words as they are.
	if [[ -z ${COMP_LINE+set} ]]; then
		words=("${COMP_WORDS[@]:0:COMP_CWORD+1}")
		cword=$COMP_CWORD
		return
	fi
	for ((i = 0; i <= COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((i > 0)) && [[ $line != [[:blank:]]* ]]; then
			words[${#words[@]}-1]+=$w
		else
			words+=("$w")
		fi
		line=${line#"${line%%[![:blank:]]*}"}
		line=${line:${#w}}
	done
	cword=$((${#words[@]} - 1))
}

_chute()
{
	# $2: the part of the word readline replaces (its current word when
	# called without arguments).
	local cur prev cmd usage spool queue dashdash npos cword
	local ctext=${2-${COMP_WORDS[COMP_CWORD]}}
	local -a words opts argopts states
	COMPREPLY=()
	_chute_words
	cur=${words[cword]} prev=${words[cword-1]} cmd=${words[1]}

	# chute help NAME: NAME's usage.
	if ((cword == 1)) || { [[ $cmd == help ]] && ((cword == 2)); }; then
		_chute_reply_lines _chute_subcommands
		return
	fi
	# A subcommand's name goes into a sed expression below.
	[[ $cmd =~ ^[a-z][a-z-]*$ ]] || return

	# chute's usage says which options take a value, which tells the
	# spool from an option's value; a URI's usage is chute-pgsql's.
	usage=$(_chute_usage "$cmd" '')
	[[ -z $usage ]] && return
	_chute_parse_usage "$usage"
	_chute_scan_words
	# (chute web is chute-web's, for a URI too: its usage is chute's.)
	case $spool in
	postgres://* | postgresql://*)
		usage=$(_chute_usage "$cmd" "$spool")
		[[ -n $usage ]] || usage=$(_chute_usage "$cmd" '')
		_chute_parse_usage "$usage"
		_chute_scan_words ;;
	esac
	spool=${spool/#\~/$HOME}

	if ((dashdash)); then
		# run's handler: a command first, then its arguments.
		if ((npos == 0)); then
			_chute_reply_files -c
		else
			_chute_reply_files -f
		fi
		return
	fi

	case " ${argopts[*]} " in
	*" $prev "*)
		_chute_optarg "$prev" "$usage"
		return ;;
	esac

	if [[ $cur == -* ]]; then
		_chute_reply "${opts[@]}"
		return
	fi
	if [[ -z $spool ]]; then
		# The spool is a directory (or a URI, which nothing completes).
		_chute_reply_files -d
		return
	fi
	case $cmd in
	status | wait | cancel | log)
		_chute_reply_lines _chute_ids "$spool" '' "$queue" ;;
	retry)
		_chute_reply_lines _chute_ids "$spool" failed "$queue" ;;
	submit)
		_chute_reply_files -f ;;
	*)
		_chute_reply "${states[@]}" ;;
	esac
}

# _chute_scan_words: what the words between the subcommand and the cursor
# say: the spool (the first operand), the --queue, whether run's "--" has
# been passed and how many words follow it.  Reads _chute's words, cword
# and argopts.
_chute_scan_words()
{
	local i word
	spool= queue= dashdash=0 npos=0
	for ((i = 2; i < cword; i++)); do
		word=${words[i]}
		if ((dashdash)); then
			((npos++))
		elif [[ $word == -- ]]; then
			dashdash=1
		elif [[ ${words[i-1]} == --queue ]]; then
			_chute_dequote "$word" queue
		elif [[ $word != -* && -z $spool ]] &&
		    ! _chute_in "${words[i-1]}" "${argopts[@]}"; then
			_chute_dequote "$word" spool
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
	local -a uuwords names
	local i w next
	opts=() argopts=() states=()
	read -ra uwords <<<"$1"
	for ((i = 0; i < ${#uwords[@]}; i++)); do
		w=${uwords[i]#[}
		next=${uwords[i+1]}
		case $w in
		-- | --\]) ;;
		-[a-zA-Z]* | --[a-zA-Z]*)
			# "[--drain]", "[--syslog[=FACILITY]]": the name alone.
			opts+=("${w%%[][=]*}")
			[[ $w == "${w%%[][=]*}" && -n $next &&
			    $next != [-[\|]* ]] && argopts+=("$w") ;;
		*new\|* | *\|failed*)
			# ls's [wait|new|cur|defer|done|failed]; not --state's values.
			[[ ${uwords[i-1]} == --state ]] && continue
			IFS='|' read -ra names <<<"${w//[][]/}"
			states+=("${names[@]}") ;;
		esac
	done
}

# _chute_optarg OPTION USAGE: the values OPTION takes, where they are known:
# groups for --group, the states the usage lists after --state, files for
# web's --auth-file.
_chute_optarg()
{
	local s
	local -a values
	case $1 in
	--group)
		_chute_reply_files -g ;;
	--auth-file)
		_chute_reply_files -f ;;
	--state)
		s=${2#*--state }
		s=${s%% *}
		s=${s//[][]/}
		IFS='|' read -ra values <<<"$s"
		_chute_reply "${values[@]}" ;;
	esac
}

complete -F _chute chute
