#include "ServerLog.h"

#include <QDateTime>
#include <QHash>

#include <chrono>
#include <cstdio>
#include <mutex>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

std::mutex g_mutex;

struct Throttle {
    qint64 lastMs = 0;
    qint64 skipped = 0;
};

constexpr qint64 kTroubleEveryMs = 10000;

const char *levelName(ServerLog::Level level)
{
    switch (level) {
    case ServerLog::Level::Error: return "error";
    case ServerLog::Level::Warning: return "warning";
    case ServerLog::Level::Info: return "info";
    }
    return "info";
}

qint64 steadyMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

void ServerLog::write(Level level, const QString &text)
{
    static const bool journal = qEnvironmentVariableIsSet("JOURNAL_STREAM");
    QString line = text;
    line.replace(u'\n', u' ').replace(u'\r', u' ');
    const QByteArray out = journal
        ? u"<%1>%2\n"_s.arg(int(level)).arg(line).toUtf8()
        : u"%1 %2 %3\n"_s.arg(QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs),
                              QString::fromLatin1(levelName(level)), line).toUtf8();
    std::lock_guard lock(g_mutex);
    std::fwrite(out.constData(), 1, size_t(out.size()), stderr);
    std::fflush(stderr);
}

void ServerLog::trouble(const QString &key, const QString &text)
{
    qint64 skipped = 0;
    {
        static QHash<QString, Throttle> throttles;
        std::lock_guard lock(g_mutex);
        Throttle &t = throttles[key];
        const qint64 now = steadyMs();
        if (t.lastMs != 0 && now - t.lastMs < kTroubleEveryMs) {
            ++t.skipped;
            return;
        }
        t.lastMs = now;
        skipped = std::exchange(t.skipped, 0);
    }
    write(Level::Warning,
          skipped > 0 ? u"%1 (%2 more like it in the last 10 s)"_s.arg(text, QString::number(skipped)) : text);
}

} // namespace flashstock::server
