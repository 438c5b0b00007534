#include "support/RedisFixture.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTcpServer>
#include <QThread>

#include <csignal>
#include <sys/prctl.h>

using namespace Qt::StringLiterals;

namespace flashstock {

RedisFixture::RedisFixture(QStringList extraArgs, bool clusterPort)
    : m_dir(QDir::tempPath() + u"/fsredis-XXXXXX"_s)
    , m_extraArgs(std::move(extraArgs))
    , m_port(freePort(clusterPort))
{
}

RedisFixture::~RedisFixture() { stop(); }

bool RedisFixture::serverInstalled()
{
    return !QStandardPaths::findExecutable(u"redis-server"_s).isEmpty();
}

int RedisFixture::freePort(bool clusterPort)
{
    auto isFree = [](int port) {
        QTcpServer probe;
        return probe.listen(QHostAddress::LocalHost, quint16(port));
    };
    if (!clusterPort) {
        QTcpServer probe;
        if (probe.listen(QHostAddress::LocalHost, 0))
            return probe.serverPort();
        return 0;
    }
    // Cluster bus port = data port + 10000, so stay below 55535 and check both.
    for (int attempt = 0; attempt < 200; ++attempt) {
        const int port = 20000 + int(QRandomGenerator::global()->bounded(30000));
        if (isFree(port) && isFree(port + 10000))
            return port;
    }
    return 0;
}

QString RedisFixture::socketPath() const { return m_dir.path() + u"/redis.sock"_s; }

RedisUrl RedisFixture::url(int timeoutMs) const
{
    RedisUrl u = RedisUrl::tcp(u"127.0.0.1"_s, m_port);
    u.connectTimeoutMs = 300;
    u.timeoutMs = timeoutMs;
    return u;
}

RedisUrl RedisFixture::unixUrl() const { return RedisUrl::unixSocket(socketPath()); }

bool RedisFixture::isRunning() const
{
    return m_process && m_process->state() != QProcess::NotRunning;
}

bool RedisFixture::start()
{
    m_error.clear();
    if (!m_dir.isValid() || m_port == 0) {
        m_error = u"no temporary dir or no free port"_s;
        return false;
    }
    if (isRunning())
        return true;
    m_process = std::make_unique<QProcess>();
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    // If the test process dies (abort, crash) the server must not outlive it.
    m_process->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
    QStringList args{u"--bind"_s, u"127.0.0.1"_s,
                     u"--port"_s, QString::number(m_port),
                     u"--unixsocket"_s, socketPath(),
                     u"--unixsocketperm"_s, u"700"_s,
                     u"--dir"_s, m_dir.path(),
                     u"--save"_s, QString(),
                     u"--appendonly"_s, u"no"_s,
                     u"--daemonize"_s, u"no"_s};
    args << m_extraArgs;
    m_process->start(u"redis-server"_s, args);
    if (!m_process->waitForStarted(5000)) {
        m_error = m_process->errorString();
        return false;
    }
    m_admin = std::make_unique<RedisConnection>(url());
    const QDeadlineTimer deadline(5000);
    while (!deadline.hasExpired()) {
        auto r = m_admin->command({QByteArrayLiteral("PING")});
        if (r && r->str == "PONG")
            return true;
        if (m_process->state() == QProcess::NotRunning)
            break;
        QThread::msleep(10);
    }
    m_error = u"redis-server on port %1 did not answer: %2"_s.arg(m_port).arg(
        QString::fromLocal8Bit(m_process->readAll()));
    return false;
}

void RedisFixture::stop()
{
    m_admin.reset();
    if (!isRunning())
        return;
    m_process->terminate();
    if (!m_process->waitForFinished(5000)) {
        m_process->kill();
        m_process->waitForFinished(2000);
    }
}

void RedisFixture::kill()
{
    m_admin.reset();
    if (!isRunning())
        return;
    m_process->kill();
    m_process->waitForFinished(5000);
}

void RedisFixture::freeze()
{
    if (isRunning())
        ::kill(pid_t(m_process->processId()), SIGSTOP);
}

void RedisFixture::thaw()
{
    if (isRunning())
        ::kill(pid_t(m_process->processId()), SIGCONT);
}

Result<RedisValue> RedisFixture::command(const QList<QByteArray> &argv)
{
    if (!m_admin)
        m_admin = std::make_unique<RedisConnection>(url());
    return m_admin->command(argv);
}

} // namespace flashstock
