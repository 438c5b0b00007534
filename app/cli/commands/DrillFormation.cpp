#include "DrillFormation.h"

#include "ChildProcess.h"
#include "Identifiers.h"
#include "drill/DrillOptions.h"

#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr int kHealTimeoutMs = 240000;
constexpr int kFaultTimeoutMs = 60000;
constexpr int kStartTimeoutMs = 10000;

/// The commands a formation gives.
struct Formation {
    QMap<FaultKind, QStringList> faults;
    QStringList heal;
};

Error badFormation(const QString &file, const QString &why)
{
    return {ErrorCode::InvalidArgument, u"formation: %1: %2"_s.arg(quoteForMessage(file), why), u"formation"_s};
}

/// An array of strings, the first not empty.
std::optional<QStringList> commandOf(const QJsonValue &v)
{
    if (!v.isArray() || v.toArray().isEmpty())
        return std::nullopt;
    QStringList argv;
    for (const QJsonValue &part : v.toArray()) {
        if (!part.isString())
            return std::nullopt;
        argv << part.toString();
    }
    if (argv.first().isEmpty())
        return std::nullopt;
    return argv;
}

/// Runs `argv` and returns its standard output; Unavailable if it cannot start, does not end
/// within `timeoutMs` (then it is killed) or exits with a failure (its last words said).
Result<QByteArray> run(const QStringList &argv, int timeoutMs, const QString &what)
{
    QProcess p;
    p.setProgram(argv.first());
    p.setArguments(argv.mid(1));
    // What it starts may outlive the drill (a node's keeper, a server): none of our
    // descriptors go with it.
    closeDescriptorsOnExec();
    p.start();
    if (!p.waitForStarted(kStartTimeoutMs))
        return fail(ErrorCode::Unavailable, u"formation: %1: cannot start %2: %3"_s.arg(what, argv.first(), p.errorString()),
                    u"formation"_s);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return fail(ErrorCode::Unavailable,
                    u"formation: %1: %2 did not finish within %3 s"_s.arg(what, argv.join(u' ')).arg(timeoutMs / 1000),
                    u"formation"_s);
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        const QStringList said = QString::fromLocal8Bit(p.readAllStandardError()).trimmed().split(u'\n');
        return fail(ErrorCode::Unavailable,
                    u"formation: %1: %2 failed (exit %3): %4"_s.arg(what, argv.join(u' ')).arg(p.exitCode())
                        .arg(said.mid(std::max<qsizetype>(0, said.size() - 3)).join(u" / "_s)),
                    u"formation"_s);
    }
    return p.readAllStandardOutput();
}

/// The JSON object on the last line of `out`, or an empty one.
QJsonObject lastLineObject(const QByteArray &out)
{
    const QList<QByteArray> lines = out.trimmed().split('\n');
    return QJsonDocument::fromJson(lines.last()).object();
}

Result<FormationAct> act(const Formation &f, FaultKind kind)
{
    auto healed = run(f.heal, kHealTimeoutMs, u"heal before "_s + faultName(kind));
    if (!healed)
        return std::unexpected(healed.error());
    const QStringList argv = f.faults.value(kind);
    const qint64 before = QDateTime::currentMSecsSinceEpoch();
    auto out = run(argv, kFaultTimeoutMs, faultName(kind));
    if (!out)
        return std::unexpected(out.error());
    const QJsonObject answer = lastLineObject(*out);
    const qint64 at = answer.value(u"killed_at_ms"_s).toInteger(0);
    return FormationAct{at > 0 ? at : before,
                        u"%1 (healed first: %2)"_s.arg(QString::fromUtf8(QJsonDocument(answer).toJson(QJsonDocument::Compact)),
                                                        QString::fromUtf8(healed->trimmed()))};
}

} // namespace

Result<void> useFormation(DrillVia &via, const QString &file)
{
    QFile in(file);
    if (!in.open(QIODevice::ReadOnly))
        return std::unexpected(badFormation(file, u"cannot read it: "_s + in.errorString()));
    QJsonParseError parsed;
    const QJsonDocument doc = QJsonDocument::fromJson(in.readAll(), &parsed);
    if (!doc.isObject())
        return std::unexpected(badFormation(
            file, u"not a JSON object (%1); give it what scripts/ha-lab.sh status --json prints"_s.arg(parsed.errorString())));
    const QJsonObject o = doc.object();
    Formation f;
    const QJsonObject faults = o.value(u"faults"_s).toObject();
    for (FaultKind kind : {FaultKind::BookFailover, FaultKind::StandbyLoss, FaultKind::ServerKill}) {
        const auto argv = commandOf(faults.value(faultName(kind)));
        if (!argv)
            return std::unexpected(badFormation(
                file, u"faults.%1 must be the command that acts it out: an array of strings, the program first"_s.arg(
                          faultName(kind))));
        f.faults.insert(kind, *argv);
    }
    const auto heal = commandOf(o.value(u"heal"_s));
    if (!heal)
        return std::unexpected(badFormation(
            file, u"heal must be the command that makes the formation whole again: an array of strings, the program first"_s));
    f.heal = *heal;
    via.formationFault = [f](FaultKind kind) { return act(f, kind); };
    via.healFormation = [f]() -> Result<QString> {
        auto out = run(f.heal, kHealTimeoutMs, u"heal"_s);
        if (!out)
            return std::unexpected(out.error());
        return QString::fromUtf8(out->trimmed());
    };
    return {};
}

} // namespace flashstock
