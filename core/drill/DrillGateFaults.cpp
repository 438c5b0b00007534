#include "drill/DrillGateFaults.h"

#include "gate/EmbeddedRedis.h"
#include "gate/RedisConnection.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>
#include <QThread>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// Inodes of this process's open sockets.
QSet<QString> ownSocketInodes()
{
    QSet<QString> inodes;
    const QDir fds(u"/proc/self/fd"_s);
    for (const QString &fd : fds.entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::System)) {
        const QString target = QFile::symLinkTarget(fds.filePath(fd));
        const QString name = target.isEmpty() ? QFileInfo(fds.filePath(fd)).symLinkTarget() : target;
        const QString base = QFileInfo(name).fileName();
        if (base.startsWith(u"socket:["_s))
            inodes.insert(base.mid(8).chopped(1));
    }
    return inodes;
}

/// `ip:port` of this process's IPv4 TCP sockets connected to `remotePort`.
QSet<QString> ownTcpEndpoints(int remotePort)
{
    const QSet<QString> inodes = ownSocketInodes();
    QSet<QString> out;
    QFile f(u"/proc/self/net/tcp"_s);
    if (!f.open(QIODevice::ReadOnly))
        return out;
    f.readLine(); // header
    while (!f.atEnd()) {
        const QStringList cols = QString::fromLatin1(f.readLine()).simplified().split(u' ');
        if (cols.size() < 10 || !inodes.contains(cols.at(9)))
            continue;
        const QStringList local = cols.at(1).split(u':');
        const QStringList remote = cols.at(2).split(u':');
        if (local.size() != 2 || remote.size() != 2 || remote.at(1).toInt(nullptr, 16) != remotePort)
            continue;
        const quint32 ip = local.at(0).toUInt(nullptr, 16); // little-endian in /proc
        out.insert(u"%1.%2.%3.%4:%5"_s.arg(ip & 0xff).arg((ip >> 8) & 0xff).arg((ip >> 16) & 0xff).arg(ip >> 24)
                       .arg(local.at(1).toInt(nullptr, 16)));
    }
    return out;
}

} // namespace

DrillGateFaults::DrillGateFaults(RedisUrl url, QString embeddedDataDir)
    : m_url(std::move(url))
    , m_dataDir(std::move(embeddedDataDir))
{
}

Result<QString> DrillGateFaults::restart()
{
    if (!isEmbedded())
        return killOwnConnections();
    EmbeddedRedis embedded(m_dataDir);
    auto stopped = embedded.stop(10000);
    if (!stopped)
        return std::unexpected(stopped.error());
    auto started = embedded.start();
    if (!started)
        return std::unexpected(started.error());
    return u"embedded redis-server stopped and started again"_s;
}

Result<QString> DrillGateFaults::killOwnConnections()
{
    if (m_url.kind != RedisUrl::Kind::Tcp)
        return fail(ErrorCode::Unavailable,
                    u"external redis on a unix socket: the drill's connections cannot be told apart from other "
                    u"clients', so none were killed"_s);
    RedisConnection admin(m_url);
    auto self = admin.command({"CLIENT", "ID"});
    if (!self)
        return std::unexpected(self.error());
    auto list = admin.command({"CLIENT", "LIST"});
    if (!list)
        return std::unexpected(list.error());
    const QSet<QString> ours = ownTcpEndpoints(m_url.port);
    int killed = 0;
    for (const QByteArray &line : list->str.split('\n')) {
        QString id, addr;
        for (const QByteArray &field : line.trimmed().split(' ')) {
            if (field.startsWith("id="))
                id = QString::fromLatin1(field.mid(3));
            else if (field.startsWith("addr="))
                addr = QString::fromLatin1(field.mid(5));
        }
        if (id.isEmpty() || id.toLongLong() == self->integer || !ours.contains(addr))
            continue;
        auto k = admin.command({"CLIENT", "KILL", "ID", id.toLatin1()});
        if (k && !k->isError())
            ++killed;
    }
    return u"external redis: killed %1 of the drill's own connections (CLIENT KILL ID); the server was not "
           u"restarted"_s.arg(killed);
}

Result<void> DrillGateFaults::flushScripts()
{
    // Right after a restart the server may still answer LOADING (or not yet accept): retry.
    Error last{ErrorCode::Unavailable, {}, {}};
    for (int attempt = 0; attempt < 100; ++attempt) {
        if (attempt > 0)
            QThread::msleep(50);
        RedisConnection admin(m_url);
        auto r = admin.command({"SCRIPT", "FLUSH"});
        if (!r) {
            last = r.error();
            continue;
        }
        if (!r->isError())
            return {};
        last = {ErrorCode::Internal, u"SCRIPT FLUSH failed: %1"_s.arg(QString::fromUtf8(r->str)), {}};
    }
    return std::unexpected(last);
}

} // namespace flashstock
