#include "ChildProcess.h"

#include <QDir>

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

} // namespace flashstock
