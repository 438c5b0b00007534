#include "CliDocs.h"

#include "BuildInfo.h"
#include "Cli.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// Text safe inside a roff line: backslashes escaped, a leading dot or quote neutralised.
QString roff(QString text)
{
    text.replace(u'\\', u"\\e"_s);
    if (text.startsWith(u'.') || text.startsWith(u'\''))
        text.prepend(u"\\&"_s);
    return text;
}

/// `--name VALUE` in bold and italics, with roff's minus signs.
QString roffOption(const QCommandLineOption &o)
{
    QStringList names;
    for (const QString &n : o.names())
        names << (n.size() == 1 ? u"\\-"_s : u"\\-\\-"_s) + roff(n).replace(u'-', u"\\-"_s);
    QString text = u"\\fB"_s + names.join(u"\\fR, \\fB"_s) + u"\\fR"_s;
    if (!o.valueName().isEmpty())
        text += u" \\fI"_s + roff(o.valueName()) + u"\\fR"_s;
    return text;
}

/// A synopsis such as `sku add SKU --stock N [--buckets N]`: words bold, the rest as is.
QString roffSynopsis(const CommandSpec &spec)
{
    QString rest = spec.synopsis;
    const QString words = spec.words.join(u' ');
    if (rest.startsWith(words))
        rest = rest.mid(words.size());
    return u"\\fB"_s + roff(words) + u"\\fR"_s + roff(rest).replace(u'-', u"\\-"_s);
}

QString roffOptions(const QList<QCommandLineOption> &options)
{
    QString text;
    for (const QCommandLineOption &o : options)
        text += u".TP\n"_s + roffOption(o) + u'\n' + roff(o.description()) + u'\n';
    return text;
}

/// `--name` for every long name of `options`; `valued` gets those that take a value.
QStringList longNames(const QList<QCommandLineOption> &options, QStringList *valued = nullptr)
{
    QStringList names;
    for (const QCommandLineOption &o : options)
        for (const QString &n : o.names()) {
            const QString flag = (n.size() == 1 ? u"-"_s : u"--"_s) + n;
            names << flag;
            if (valued && !o.valueName().isEmpty())
                *valued << flag;
        }
    return names;
}

} // namespace

QString cliManPage(const Cli &cli)
{
    QString t;
    t += u".TH FLASHSTOCK-CLI 1 \"\" \"FlashStock %1\" \"User Commands\"\n"_s.arg(buildVersion());
    t += u".SH NAME\nflashstock-cli \\- FlashStock flash-sale inventory from the command line\n"_s;
    t += u".SH SYNOPSIS\n.B flashstock-cli\n[\\fIglobal options\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]\n"_s;
    t += u".SH DESCRIPTION\n"_s
         u"\\fBflashstock-cli\\fR runs one FlashStock command against a book of record (SQLite or "
         u"PostgreSQL) and a gate (Redis), for scripts, cron and CI. Without \\fB\\-\\-db\\fR and "
         u"\\fB\\-\\-redis\\fR it uses the embedded defaults: a SQLite book and a private redis-server "
         u"in the data dir.\n.PP\n"
         u"Each command prints text for people, or one JSON object with \\fB\\-\\-json\\fR.\n"_s;
    t += u".SH COMMANDS\n"_s;
    for (const auto &c : cli.commands()) {
        const CommandSpec &spec = c->spec();
        t += u".TP\n"_s + roffSynopsis(spec) + u'\n' + roff(spec.summary) + u'\n';
        if (!spec.options.isEmpty())
            t += u".RS\n"_s + roffOptions(spec.options) + u".RE\n"_s;
    }
    t += u".SH GLOBAL OPTIONS\nBefore or after the command words.\n"_s + roffOptions(Cli::globalOptions());
    t += u".SH EXIT STATUS\n"_s;
    for (const auto &[code, meaning] : Cli::exitCodes())
        t += u".TP\n.B %1\n%2\n"_s.arg(code).arg(roff(meaning));
    t += u".SH ENVIRONMENT\n"_s
         u".TP\n.B FLASHSTOCK_DATA_DIR\nThe data dir when \\fB\\-\\-data\\-dir\\fR is not given "
         u"(else $XDG_DATA_HOME/flashstock).\n"
         u".TP\n.B FLASHSTOCK_REDIS_PASSWORD\nThe gate's password (never on the command line).\n"
         u".TP\n.BR PGPASSWORD \", \" PGPASSFILE\nThe PostgreSQL password, as for libpq.\n"
         u".TP\n.B FLASHSTOCK_ALERT_SECRET\nThe key alerts are signed with, unless "
         u"\\fB\\-\\-alert\\-secret\\-file\\fR is given.\n"
         u".TP\n.B FLASHSTOCK_ALERT_PASSWORD\nThe alert URL's password, unless "
         u"\\fB\\-\\-alert\\-password\\-file\\fR is given.\n"_s;
    t += u".SH SEE ALSO\n.BR flashstock (1),\n.BR flashstock\\-server (1)\n"_s;
    return t;
}

namespace {

/// What both completion scripts are made of: the command table as `'words|--opt ...'` lines
/// (each indented by eight spaces), the global options, and the options that take a value.
struct CompletionTable {
    QString table;
    QString globals;
    QString valued;
};

CompletionTable completionTable(const Cli &cli)
{
    QStringList valued;
    const QStringList globals = longNames(Cli::globalOptions(), &valued);
    QString table;
    for (const auto &c : cli.commands()) {
        const CommandSpec &spec = c->spec();
        table += u"        '%1|%2'\n"_s.arg(spec.words.join(u' '), longNames(spec.options, &valued).join(u' '));
    }
    valued.removeDuplicates();
    return {table, globals.join(u' '), valued.join(u' ')};
}

QString filledIn(QString script, const CompletionTable &t)
{
    return script.replace(u"%VERSION%"_s, buildVersion())
        .replace(u"%TABLE%"_s, t.table)
        .replace(u"%GLOBALS%"_s, t.globals)
        .replace(u"%VALUED%"_s, t.valued);
}

} // namespace

QString cliBashCompletion(const Cli &cli)
{
    QString script = uR"bash(# bash completion for flashstock-cli %VERSION%, generated from its command table
# (flashstock-cli completion bash).
_flashstock_cli()
{
    local commands=(
%TABLE%    )
    local globals='%GLOBALS%'
    local valued=' %VALUED% '
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    if [[ $COMP_CWORD -gt 1 && $valued == *" $prev "* ]]; then
        [[ $prev == --data-dir ]] && COMPREPLY=($(compgen -d -- "$cur"))
        return
    fi
    local typed=() i w
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == -* ]]; then
            [[ $w != *=* && $valued == *" $w "* ]] && ((i++))
            continue
        fi
        typed+=("$w")
    done
    local line=" ${typed[*]} " entry words opts options=$globals next=() cw
    [[ ${#typed[@]} -eq 0 ]] && line=" "
    for entry in "${commands[@]}"; do
        words=${entry%%|*}
        opts=${entry#*|}
        if [[ $line == " $words "* ]]; then
            options="$globals $opts"
        elif [[ " $words " == "$line"* ]]; then
            read -ra cw <<< "$words"
            next+=("${cw[${#typed[@]}]}")
        fi
    done
    if [[ $cur == -* || ${#next[@]} -eq 0 ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$(printf '%s\n' "${next[@]}" | sort -u)" -- "$cur"))
    fi
}
complete -F _flashstock_cli flashstock-cli
)bash"_s;
    return filledIn(script, completionTable(cli));
}

QString cliZshCompletion(const Cli &cli)
{
    // The bash script's rules in zsh: words[1] is the program, CURRENT the word completed.
    const QString script = uR"zsh(#compdef flashstock-cli
# zsh completion for flashstock-cli %VERSION%, generated from its command table
# (flashstock-cli completion zsh).
_flashstock-cli()
{
    local -a commands typed next cw
    commands=(
%TABLE%    )
    local globals='%GLOBALS%'
    local valued=' %VALUED% '
    local cur=${words[CURRENT]} prev=${words[CURRENT-1]}
    if (( CURRENT > 2 )) && [[ $valued == *" $prev "* ]]; then
        [[ $prev == --data-dir ]] && _files -/
        return
    fi
    local i w
    for (( i = 2; i < CURRENT; i++ )); do
        w=${words[i]}
        if [[ $w == -* ]]; then
            [[ $w != *=* && $valued == *" $w "* ]] && (( i++ ))
            continue
        fi
        typed+=("$w")
    done
    local line=" ${typed[*]} " entry cmdwords opts options=$globals
    (( ${#typed} == 0 )) && line=" "
    for entry in "${commands[@]}"; do
        cmdwords=${entry%%|*}
        opts=${entry#*|}
        if [[ $line == " $cmdwords "* ]]; then
            options="$globals $opts"
        elif [[ " $cmdwords " == "$line"* ]]; then
            cw=(${=cmdwords})
            next+=("${cw[${#typed}+1]}")
        fi
    done
    if [[ $cur == -* ]] || (( ${#next} == 0 )); then
        compadd -- ${=options}
    else
        compadd -- ${(ou)next}
    fi
}

_flashstock-cli "$@"
)zsh"_s;
    return filledIn(script, completionTable(cli));
}

} // namespace flashstock
