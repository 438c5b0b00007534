#include "bench/PgBench.h"

#include "store/BookSql.h"

#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryFile>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// pgbench's clients connect inside its timed window: shorter runs on a busy machine may
/// finish no transaction at all.
constexpr int kMinSeconds = 2;

QString pgbenchPath()
{
    // Debian's wrapper in /usr/bin needs a cluster configuration; the binary itself does not.
    const QString packaged = u"/usr/lib/postgresql/15/bin/pgbench"_s;
    if (QFileInfo(packaged).isExecutable())
        return packaged;
    return QStandardPaths::findExecutable(u"pgbench"_s);
}

} // namespace

Result<PgBenchResult> runPgBench(const DbUrl &url, const QString &sku, int clients, int seconds, const QString &nowExpr)
{
    if (url.dialect != Dialect::Postgres)
        return fail(ErrorCode::InvalidArgument, u"pgbench runs against PostgreSQL only"_s, u"db"_s);
    const QString program = pgbenchPath();
    if (program.isEmpty())
        return fail(ErrorCode::Unavailable, u"pgbench not found (Debian: postgresql-15)"_s);
    QTemporaryFile script;
    if (!script.open())
        return fail(ErrorCode::Unavailable, u"cannot write the pgbench script: %1"_s.arg(script.errorString()));
    script.write(sql::pgbenchSingleOrderScript(nowExpr).toUtf8());
    script.flush();

    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!url.password.isEmpty())
        env.insert(u"PGPASSWORD"_s, url.password);
    if (const auto attrs = url.parameter(u"target_session_attrs"_s))
        env.insert(u"PGTARGETSESSIONATTRS"_s, *attrs);
    p.setProcessEnvironment(env);
    const QStringList args{u"-n"_s, u"-M"_s, u"prepared"_s, u"-c"_s, QString::number(clients), u"-j"_s,
                           QString::number(std::min(clients, 4)), u"-T"_s, QString::number(std::max(kMinSeconds, seconds)),
                           u"-D"_s, u"sku="_s + sku, u"-D"_s, u"bucket=0"_s, u"-D"_s, u"qty=1"_s, u"-f"_s,
                           script.fileName(), u"-h"_s, url.hostList(), u"-p"_s, url.portList(), u"-U"_s,
                           url.user, url.database};
    p.start(program, args);
    if (!p.waitForFinished(std::max(kMinSeconds, seconds) * 1000 + 60000)) {
        p.kill();
        p.waitForFinished();
        return fail(ErrorCode::Unavailable, u"pgbench did not finish: %1"_s.arg(p.errorString()));
    }
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    const auto tps = QRegularExpression(u"tps = ([0-9.]+)"_s).match(out);
    if (p.exitCode() != 0 || !tps.hasMatch())
        return fail(ErrorCode::Unavailable,
                    u"pgbench failed (exit %1): %2"_s.arg(p.exitCode()).arg((err + out).trimmed().left(600)));
    PgBenchResult r;
    r.clients = clients;
    r.seconds = std::max(kMinSeconds, seconds);
    r.tps = tps.captured(1).toDouble();
    if (const auto lat = QRegularExpression(u"latency average = ([0-9.]+) ms"_s).match(out); lat.hasMatch())
        r.latencyMs = lat.captured(1).toDouble();
    return r;
}

} // namespace flashstock
