#include "support/TinyDisk.h"

#include "support/TestChecks.h"

#include <QByteArray>
#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock::test {

namespace {

QString fillerPath(const QString &dir) { return dir + u"/filler"_s; }

} // namespace

TinyDisk::TinyDisk(qint64 kib)
{
    if (!m_dir.isValid()) {
        m_problem = u"tiny disk: no temporary directory: "_s + m_dir.errorString();
        return;
    }
    const QByteArray options = "size=" + QByteArray::number(kib) + "k,mode=0700";
    if (::mount("tmpfs", QFile::encodeName(m_dir.path()).constData(), "tmpfs", MS_NOSUID | MS_NODEV,
                options.constData())
        != 0) {
        m_problem = u"tiny disk: cannot mount a tmpfs on %1 (%2): a full disk needs root"_s.arg(
            m_dir.path(), QString::fromLocal8Bit(std::strerror(errno)));
        m_skip = !missingServerFails();
        return;
    }
    m_mounted = true;
}

TinyDisk::~TinyDisk()
{
    if (m_mounted)
        ::umount2(QFile::encodeName(m_dir.path()).constData(), MNT_DETACH);
}

bool TinyDisk::fill()
{
    const int fd = ::open(QFile::encodeName(fillerPath(m_dir.path())).constData(),
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    const QByteArray block(4096, 'f');
    bool refused = false;
    while (!refused) {
        const ssize_t n = ::write(fd, block.constData(), size_t(block.size()));
        refused = n < 0 && errno == ENOSPC;
        if (n < 0 && !refused)
            break;
    }
    ::close(fd);
    return refused;
}

bool TinyDisk::makeRoom()
{
    return QFile::remove(fillerPath(m_dir.path()));
}

} // namespace flashstock::test
