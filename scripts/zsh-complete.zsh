#!/usr/bin/zsh -f
# What zsh's own completion (compsys) makes of each LINE when TAB is pressed at its end, with
# compinit loading the completion functions of DIR from $fpath as an interactive zsh does.
# Usage: zsh -f scripts/zsh-complete.zsh DIR LINE...
# Prints "LINE:<the line after TAB>" once per LINE, in order; the lines are echoed, never run.
# Used by tests/tst_cli_docs.cpp and scripts/package-check.sh.
emulate -L zsh
(( $# >= 2 )) || { print -u2 "usage: zsh-complete.zsh DIR LINE..."; exit 2 }
local dir=${1:A} line out
shift
zmodload zsh/zpty || exit 1
# An interactive zsh on a pseudo-terminal (compinit refuses to start without one), with no
# startup files and an environment of its own.
zpty z env -i HOME=${TMPDIR:-/tmp} TERM=dumb PATH=/usr/bin:/bin zsh -f -i
zpty -w z "unsetopt zle_bracketed_paste; PS1='%% '; fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D; zstyle ':completion:*' menu no; print READY"
zpty -r z out '*READY*' || exit 1
for line in "$@"; do
  # TAB completes; then Ctrl-A and "print -r -- LINE:" turn the line into its own echo.
  zpty -n -w z "$line"$'\t\x01print -r -- LINE:\n'
  zpty -r z out $'*\nLINE:*\n' || exit 1
  out=${out##*$'\n'LINE:}
  print -r -- "LINE:${out%%$'\r'*}"
done
zpty -d z
