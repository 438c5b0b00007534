// flashstock-cli's --version, its bash and zsh completions and its man page: each generated from
// the binary's own data (build info, the command table), so they cannot drift from it.

#include "BuildInfo.h"
#include "Cli.h"
#include "CliDocs.h"
#include "support/TestChecks.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace flashstock;

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run cli(const QStringList &args)
{
    Run run;
    QTextStream out(&run.out), err(&run.err);
    Cli c;
    run.exitCode = c.run(args, out, err);
    return run;
}

/// Writes `text` (UTF-8) to `name` in `dir`; false if it cannot.
bool writeIn(const QTemporaryDir &dir, const QString &name, const QString &text)
{
    QFile file(dir.filePath(name));
    return file.open(QIODevice::WriteOnly) && file.write(text.toUtf8()) == text.toUtf8().size();
}

/// The completion script of `shell` (`bash` or `zsh`) that `flashstock-cli completion`
/// prints for `cli`.
QString completionScript(const QString &shell, const Cli &cli)
{
    return shell == u"bash"_s ? cliBashCompletion(cli) : cliZshCompletion(cli);
}

/// What `shell`'s completion offers for `line` (the word under the cursor last, "" for a
/// new word), with `script` loaded as the shell loads it: bash sources it; zsh autoloads it
/// from a directory of $fpath, with compadd and _files (compsys's, which need a terminal)
/// stood in for by functions that print what they are given: compadd the words that match
/// the word under the cursor, _files its arguments.
QStringList complete(const QString &shell, const QString &script, const QStringList &line)
{
    QTemporaryDir dir;
    const QString name = shell == u"bash"_s ? u"completion.bash"_s : u"_flashstock-cli"_s;
    if (!writeIn(dir, name, script))
        return {u"<cannot write the script>"_s};
    QStringList quoted;
    for (const QString &w : line)
        quoted << u"'"_s + w + u"'"_s;
    const QString program
        = shell == u"bash"_s
              ? u"source \"$1\"; COMP_WORDS=(flashstock-cli %1); COMP_CWORD=%2; _flashstock_cli; "
                u"printf '%s\\n' \"${COMPREPLY[@]}\""_s.arg(quoted.join(u' ')).arg(line.size())
              : u"fpath=(\"${1:h}\" $fpath); autoload -Uz _flashstock-cli; "
                u"compadd() { [[ $1 == -- ]] && shift; local w; for w in \"$@\"; do [[ $w == ${PREFIX}* ]] && "
                u"print -r -- $w; done; }; _files() { print -r -- \"_files $*\"; }; "
                u"words=(flashstock-cli %1); CURRENT=%2; PREFIX=${words[CURRENT]}; _flashstock-cli; exit 0"_s
                    .arg(quoted.join(u' '))
                    .arg(line.size() + 1);
    QProcess run;
    run.start(shell, shell == u"bash"_s ? QStringList{u"-c"_s, program, u"_"_s, dir.filePath(name)}
                                        : QStringList{u"-f"_s, u"-c"_s, program, u"_"_s, dir.filePath(name)});
    if (!run.waitForFinished(10000) || run.exitCode() != 0)
        return {u"<%1 failed: %2>"_s.arg(shell, QString::fromUtf8(run.readAllStandardError()))};
    return QString::fromUtf8(run.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
}

/// Rows `bash` and `zsh` of column `shell`.
void addShellRows()
{
    QTest::addColumn<QString>("shell");
    QTest::newRow("bash") << u"bash"_s;
    QTest::newRow("zsh") << u"zsh"_s;
}

} // namespace

class TestCliDocs : public QObject {
    Q_OBJECT
private slots:
    void versionNamesTheRevision();
    void completionScriptParses_data() { addShellRows(); }
    void completionScriptParses();
    void completionOffersTheTable_data() { addShellRows(); }
    void completionOffersTheTable();
    void zshCompletesWithCompinit();
    void completionRefusesOtherShells();
    void manPageHasEveryCommandAndOption();
};

void TestCliDocs::versionNamesTheRevision()
{
    const Run text = cli({u"--version"_s});
    QCOMPARE(text.exitCode, 0);
    QCOMPARE(text.out, u"flashstock-cli %1 (git %2)\n"_s.arg(buildVersion(), buildRevision()));
    QVERIFY2(QRegularExpression(u"^\\d+\\.\\d+\\.\\d+$"_s).match(buildVersion()).hasMatch(), qPrintable(buildVersion()));
    // Built from this git checkout: a hex revision, not "unknown".
    QVERIFY2(QRegularExpression(u"^[0-9a-f]{7,}(-dirty)?$"_s).match(buildRevision()).hasMatch(),
             qPrintable(buildRevision()));

    const Run json = cli({u"--version"_s, u"--json"_s});
    QCOMPARE(json.exitCode, 0);
    const QJsonObject o = QJsonDocument::fromJson(json.out.toUtf8()).object();
    QCOMPARE(o.value(u"version"_s).toString(), buildVersion());
    QCOMPARE(o.value(u"revision"_s).toString(), buildRevision());
}

void TestCliDocs::completionScriptParses()
{
    QFETCH(QString, shell);
    FS_REQUIRE(!QStandardPaths::findExecutable(shell).isEmpty(), "the shell is not installed (scripts/install-deps.sh)");
    const Run run = cli({u"completion"_s, shell});
    QCOMPARE(run.exitCode, 0);
    QTemporaryDir dir;
    QVERIFY(writeIn(dir, u"completion"_s, run.out));
    QProcess check;
    check.start(shell, {u"-n"_s, dir.filePath(u"completion"_s)});
    QVERIFY(check.waitForFinished(10000));
    QVERIFY2(check.exitCode() == 0, check.readAllStandardError().constData());
    if (shell == u"zsh"_s)
        QVERIFY(run.out.startsWith(u"#compdef flashstock-cli\n"_s));
}

void TestCliDocs::completionOffersTheTable()
{
    QFETCH(QString, shell);
    FS_REQUIRE(!QStandardPaths::findExecutable(shell).isEmpty(), "the shell is not installed (scripts/install-deps.sh)");
    const Cli table;
    const QString script = completionScript(shell, table);
    QStringList first;
    for (const auto &c : table.commands()) {
        const CommandSpec &spec = c->spec();
        first << spec.words.first();
        // The next word after each prefix of the command's words.
        for (qsizetype n = 1; n < spec.words.size(); ++n)
            QVERIFY2(complete(shell, script, spec.words.mid(0, n) + QStringList{QString()}).contains(spec.words[n]),
                     qPrintable(spec.words.join(u' ')));
        // Every option of the command, with the global ones.
        QStringList line = spec.words;
        line << u"--"_s;
        const QStringList offered = complete(shell, script, line);
        for (const QCommandLineOption &o : spec.options)
            QVERIFY2(offered.contains(u"--"_s + o.names().constFirst()),
                     qPrintable(spec.words.join(u' ') + u": --"_s + o.names().constFirst()));
        QVERIFY2(offered.contains(u"--data-dir"_s), qPrintable(spec.words.join(u' ')));
    }
    first.removeDuplicates();
    first.sort();
    QCOMPARE(complete(shell, script, {QString()}), first);
    // A value option's value is not taken for a command word, and --data-dir completes directories.
    QCOMPARE(complete(shell, script, {u"--operator"_s, u"sku"_s, u"sh"_s}), QStringList{});
    QCOMPARE(complete(shell, script, {u"--operator"_s, u"ops"_s, u"sku"_s, u"sh"_s}), QStringList{u"show"_s});
    if (shell == u"bash"_s)
        QVERIFY(complete(shell, script, {u"--data-dir"_s, u"/"_s}).contains(u"/tmp"_s));
    else
        QCOMPARE(complete(shell, script, {u"--data-dir"_s, u"/"_s}), QStringList{u"_files -/"_s});
}

void TestCliDocs::zshCompletesWithCompinit()
{
    // zsh's own completion system, not stand-ins: compinit finds _flashstock-cli on $fpath by
    // its #compdef line, and TAB in an interactive zsh completes the line.
    FS_REQUIRE(!QStandardPaths::findExecutable(u"zsh"_s).isEmpty(), "zsh is not installed (scripts/install-deps.sh)");
    const Run run = cli({u"completion"_s, u"zsh"_s});
    QCOMPARE(run.exitCode, 0);
    QTemporaryDir dir;
    QVERIFY(writeIn(dir, u"_flashstock-cli"_s, run.out));
    // --data-dir completes directories only: "su" is the directory subdir, not the file sumfile.
    QVERIFY(QDir(dir.path()).mkdir(u"subdir"_s));
    QVERIFY(writeIn(dir, u"sumfile"_s, QString()));
    const QStringList typed{u"flashstock-cli sa"_s, u"flashstock-cli sale c"_s, u"flashstock-cli sku add X --st"_s,
                            u"flashstock-cli --operator ops sku sh"_s,
                            u"flashstock-cli --data-dir %1/su"_s.arg(dir.path())};
    const QStringList expected{u"flashstock-cli sale"_s, u"flashstock-cli sale create"_s,
                               u"flashstock-cli sku add X --stock"_s, u"flashstock-cli --operator ops sku show"_s,
                               u"flashstock-cli --data-dir %1/subdir"_s.arg(dir.path())};
    QProcess zsh;
    zsh.start(u"zsh"_s, QStringList{u"-f"_s, QStringLiteral(FLASHSTOCK_SOURCE_DIR "/scripts/zsh-complete.zsh"), dir.path()}
                            + typed);
    QVERIFY2(zsh.waitForFinished(60000), "zsh-complete.zsh did not finish in 60 s");
    QVERIFY2(zsh.exitCode() == 0, zsh.readAllStandardError().constData());
    QStringList got = QString::fromUtf8(zsh.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
    for (QString &line : got)
        line.remove(0, qsizetype(sizeof "LINE:" - 1));
    QCOMPARE(got, expected);
}

void TestCliDocs::completionRefusesOtherShells()
{
    for (const QStringList &args : {QStringList{u"completion"_s}, QStringList{u"completion"_s, u"fish"_s}}) {
        const Run run = cli(args);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.startsWith(u"error: shell: expected bash or zsh"_s), qPrintable(run.err));
        QVERIFY(run.out.isEmpty());
    }
}

void TestCliDocs::manPageHasEveryCommandAndOption()
{
    const Cli table;
    const QString page = cliManPage(table);
    QVERIFY(page.startsWith(u".TH FLASHSTOCK-CLI 1 \"\" \"FlashStock %1\""_s.arg(buildVersion())));
    auto roffName = [](QString name) { return name.replace(u'-', u"\\-"_s); };
    for (const auto &c : table.commands()) {
        const CommandSpec &spec = c->spec();
        QVERIFY2(page.contains(u".TP\n\\fB"_s + spec.words.join(u' ') + u"\\fR"_s), qPrintable(spec.synopsis));
        QVERIFY2(page.contains(spec.summary), qPrintable(spec.summary));
        for (const QCommandLineOption &o : spec.options)
            QVERIFY2(page.contains(u"\\fB\\-\\-"_s + roffName(o.names().constFirst()) + u"\\fR"_s),
                     qPrintable(o.names().constFirst()));
    }
    for (const QCommandLineOption &o : Cli::globalOptions())
        QVERIFY2(page.contains(u"\\-\\-"_s + roffName(o.names().constLast())), qPrintable(o.names().constLast()));
    for (const auto &[code, meaning] : Cli::exitCodes())
        QVERIFY2(page.contains(u".B %1\n%2\n"_s.arg(code).arg(meaning)), qPrintable(meaning));
    // No line a roff reader would take for a request by accident.
    for (const QString &line : page.split(u'\n'))
        QVERIFY2(!line.startsWith(u'\'') && (!line.startsWith(u'.') || QRegularExpression(u"^\\.[A-Z]{1,2}( |$)"_s).match(line).hasMatch()),
                 qPrintable(line));
}

QTEST_GUILESS_MAIN(TestCliDocs)
#include "tst_cli_docs.moc"
