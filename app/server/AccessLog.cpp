#include "AccessLog.h"

#include <QDateTime>
#include <QFile>

#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

/// `text` with control characters, spaces and non-ASCII bytes as %XX: one field per word.
QByteArray escaped(const QByteArray &text)
{
    return text.toPercentEncoding("/:@!$&'()*+,;=?[]~", "%\"");
}

} // namespace

AccessLog::~AccessLog()
{
    if (m_file && m_ownsFile)
        std::fclose(m_file);
}

Result<void> AccessLog::open(const QString &path)
{
    if (path == u"-"_s) {
        m_file = stderr;
        return {};
    }
    const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || !(m_file = ::fdopen(fd, "a"))) {
        if (fd >= 0)
            ::close(fd);
        return fail(ErrorCode::Unavailable, u"access-log: cannot open %1 for appending"_s.arg(path), u"access-log"_s);
    }
    std::setvbuf(m_file, nullptr, _IOLBF, 0);
    m_ownsFile = true;
    return {};
}

void AccessLog::write(const QString &client, const QByteArray &method, const QByteArray &path, int status,
                      const QString &result, double seconds, const QString &principal)
{
    if (!m_file)
        return;
    const QByteArray line =
        u"%1 %2 %3 %4 %5 %6 %7ms %8\n"_s
            .arg(QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs), client.isEmpty() ? u"-"_s : client,
                 QString::fromLatin1(escaped(method)), QString::fromLatin1(escaped(path)))
            .arg(status)
            .arg(result.isEmpty() ? u"-"_s : result)
            .arg(seconds * 1000.0, 0, 'f', 3)
            .arg(principal.isEmpty() ? u"-"_s : principal)
            .toUtf8();
    std::lock_guard lock(m_mutex);
    std::fwrite(line.constData(), 1, size_t(line.size()), m_file);
}

} // namespace flashstock::server
