#include "support/TestChecks.h"

#include <QDir>
#include <QFile>

namespace flashstock::test {

bool missingServerFails()
{
    return qEnvironmentVariableIsSet("CI");
}

QStringList descriptorsOn(qint64 pid, const QString &path)
{
    const QString fds = QStringLiteral("/proc/%1/fd").arg(pid);
    QStringList out;
    for (const QString &n : QDir(fds).entryList(QDir::Files | QDir::System | QDir::NoDotAndDotDot))
        if (QFile::symLinkTarget(fds + u'/' + n) == path)
            out << n;
    return out;
}

} // namespace flashstock::test
