#pragma once

#include <QString>

namespace flashstock {

class Cli;

/// flashstock-cli(1) in roff (man(7) macros): every command of `cli`'s table with its
/// synopsis, summary and options, the global options and the exit codes, the same data
/// `--help` prints. Written at build time by the cli-manpage tool.
QString cliManPage(const Cli &cli);

/// A bash completion script for flashstock-cli, generated from `cli`'s command table:
/// command words, then each command's and the global options; directories after --data-dir.
/// Printed by `flashstock-cli completion bash`.
QString cliBashCompletion(const Cli &cli);

/// The same completion for zsh (a `#compdef` file, installed as
/// /usr/share/zsh/vendor-completions/_flashstock-cli). Printed by `flashstock-cli completion zsh`.
QString cliZshCompletion(const Cli &cli);

} // namespace flashstock
