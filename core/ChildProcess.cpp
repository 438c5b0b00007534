#include "ChildProcess.h"

#include <QDir>
#include <QFile>

#include <cerrno>
#include <csignal>

#include <fcntl.h>
#include <unistd.h>

namespace flashstock {

void closeDescriptorsOnExec()
{
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
    const QStringList open = QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::Files | QDir::System | QDir::NoDotAndDotDot);
    for (const QString &name : open)
        if (const int fd = name.toInt(); fd > 2)
            ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

bool processGone(qint64 pid)
{
    if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH)
        return true;
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return true; // reaped since the kill(2) above
    bool zombie = false;
    qint64 threads = -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("State:"))
            zombie = line.mid(6).trimmed().startsWith('Z');
        else if (line.startsWith("Threads:"))
            threads = line.mid(8).trimmed().toLongLong();
    }
    // The leader turns zombie when it has exited, the process's threads count drops as each
    // other thread is released, after it closed its share of the descriptors.
    return zombie && threads == 1;
}

} // namespace flashstock
