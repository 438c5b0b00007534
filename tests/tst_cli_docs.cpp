// flashstock-cli's --version, its bash completion and its man page: each generated from
// the binary's own data (build info, the command table), so they cannot drift from it.

#include "BuildInfo.h"
#include "Cli.h"
#include "CliDocs.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
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

/// What bash's completion offers for `line` (the word under the cursor last, "" for a new
/// word), with `script` sourced.
QStringList complete(const QString &script, const QStringList &line)
{
    QTemporaryDir dir;
    QFile file(dir.filePath(u"completion.bash"_s));
    if (!file.open(QIODevice::WriteOnly) || file.write(script.toUtf8()) < 0)
        return {u"<cannot write the script>"_s};
    file.close();
    QStringList quoted;
    for (const QString &w : line)
        quoted << u"'"_s + w + u"'"_s;
    const QString program = u"source \"$1\"; COMP_WORDS=(flashstock-cli %1); COMP_CWORD=%2; _flashstock_cli; "
                            u"printf '%s\\n' \"${COMPREPLY[@]}\""_s.arg(quoted.join(u' ')).arg(line.size());
    QProcess bash;
    bash.start(u"bash"_s, {u"-c"_s, program, u"_"_s, file.fileName()});
    if (!bash.waitForFinished(10000) || bash.exitCode() != 0)
        return {u"<bash failed: %1>"_s.arg(QString::fromUtf8(bash.readAllStandardError()))};
    return QString::fromUtf8(bash.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
}

} // namespace

class TestCliDocs : public QObject {
    Q_OBJECT
private slots:
    void versionNamesTheRevision();
    void completionScriptParses();
    void completionOffersTheTable();
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
    const Run run = cli({u"completion"_s, u"bash"_s});
    QCOMPARE(run.exitCode, 0);
    QTemporaryDir dir;
    QFile file(dir.filePath(u"completion.bash"_s));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(run.out.toUtf8());
    file.close();
    QProcess bash;
    bash.start(u"bash"_s, {u"-n"_s, file.fileName()});
    QVERIFY(bash.waitForFinished(10000));
    QVERIFY2(bash.exitCode() == 0, bash.readAllStandardError().constData());
}

void TestCliDocs::completionOffersTheTable()
{
    const Cli table;
    const QString script = cliBashCompletion(table);
    QStringList first;
    for (const auto &c : table.commands()) {
        const CommandSpec &spec = c->spec();
        first << spec.words.first();
        // The next word after each prefix of the command's words.
        for (qsizetype n = 1; n < spec.words.size(); ++n)
            QVERIFY2(complete(script, spec.words.mid(0, n) + QStringList{QString()}).contains(spec.words[n]),
                     qPrintable(spec.words.join(u' ')));
        // Every option of the command, with the global ones.
        QStringList line = spec.words;
        line << u"--"_s;
        const QStringList offered = complete(script, line);
        for (const QCommandLineOption &o : spec.options)
            QVERIFY2(offered.contains(u"--"_s + o.names().constFirst()),
                     qPrintable(spec.words.join(u' ') + u": --"_s + o.names().constFirst()));
        QVERIFY2(offered.contains(u"--data-dir"_s), qPrintable(spec.words.join(u' ')));
    }
    first.removeDuplicates();
    first.sort();
    QCOMPARE(complete(script, {QString()}), first);
    // A value option's value is not taken for a command word, and --data-dir completes directories.
    QCOMPARE(complete(script, {u"--operator"_s, u"sku"_s, u"sh"_s}), QStringList{});
    QCOMPARE(complete(script, {u"--operator"_s, u"ops"_s, u"sku"_s, u"sh"_s}), QStringList{u"show"_s});
    QVERIFY(complete(script, {u"--data-dir"_s, u"/"_s}).contains(u"/tmp"_s));
}

void TestCliDocs::completionRefusesOtherShells()
{
    for (const QStringList &args : {QStringList{u"completion"_s}, QStringList{u"completion"_s, u"fish"_s}}) {
        const Run run = cli(args);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.startsWith(u"error: shell: expected bash"_s), qPrintable(run.err));
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
