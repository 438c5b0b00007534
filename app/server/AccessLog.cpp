#include "AccessLog.h"

#include <QDateTime>
#include <QFile>

#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

/// One field of a line: `text` with control characters, spaces, `%`, `"` and non-ASCII bytes
/// as %XX, so a field is one word whatever a client sent; `-` when empty.
QByteArray field(const QByteArray &text)
{
    return text.isEmpty() ? QByteArrayLiteral("-") : text.toPercentEncoding("/:@!$&'()*+,;=?[]~", "%\"");
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
    // Joined, never formatted: a client's text never goes through a formatter that reads
    // placeholders in it (QString::arg would read `%1B` of an escaped path as its own).
    QByteArray line = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toLatin1();
    for (const QByteArray &text : {field(client.toUtf8()), field(method), field(path), QByteArray::number(status),
                                   field(result.toUtf8()), QByteArray::number(seconds * 1000.0, 'f', 3) + "ms",
                                   field(principal.toUtf8())})
        line += ' ' + text;
    line += '\n';
    std::lock_guard lock(m_mutex);
    std::fwrite(line.constData(), 1, size_t(line.size()), m_file);
}

} // namespace flashstock::server
