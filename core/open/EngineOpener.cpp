#include "open/EngineOpener.h"

#include "Identifiers.h"
#include "gate/EmbeddedRedis.h"
#include "open/SecretFile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QUrl>

#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// A gate URL (`redis://`, `rediss://`, `unix://`, ...) given password `pw` (its file's or
/// FLASHSTOCK_REDIS_PASSWORD) when it names no password itself and `pw` is not empty;
/// anything else unchanged. Before parsing: a URL with a user and no password is malformed
/// until it gets one.
QString withPassword(const QString &url, const QString &pw)
{
    const QString text = url.trimmed();
    if (pw.isEmpty() || !text.contains(u"://"_s))
        return url;
    const QString encoded = QString::fromLatin1(QUrl::toPercentEncoding(pw));
    if (text.startsWith(u"unix://"_s)) {
        if (text.contains(u"password="_s))
            return url;
        return text + (text.contains(u'?') ? u"&"_s : u"?"_s) + u"password="_s + encoded;
    }
    const qsizetype start = text.indexOf(u"://"_s) + 3;
    qsizetype end = text.indexOf(u'/', start);
    if (end < 0)
        end = text.size();
    const QString authority = text.mid(start, end - start);
    const qsizetype at = authority.lastIndexOf(u'@');
    if (at < 0)
        return text.left(start) + u":"_s + encoded + u"@"_s + text.mid(start);
    if (authority.left(at).contains(u':'))
        return url; // the URL has its own password
    return text.left(start + at) + u":"_s + encoded + text.mid(start + at);
}

/// A path FlashStock keeps its data in (`field`: data-dir or db): refused, changing nothing,
/// if it is a symlink, not owned by this user, or group- or world-writable. A path that does
/// not exist yet passes (it is created private).
Result<void> checkPrivate(const QString &path, const QString &field, const QString &what)
{
    struct stat st {};
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        return {};
    auto refuse = [&](const QString &why) {
        return fail(ErrorCode::InvalidArgument,
                    u"%1: %2 %3 %4; FlashStock keeps its data only where no one else can change it (give a %5 of "
                    u"your own, mode 0700 or 0600)"_s.arg(field, what, path, why, what),
                    field);
    };
    if (S_ISLNK(st.st_mode))
        return refuse(u"is a symlink"_s);
    if (st.st_uid != ::geteuid())
        return refuse(u"belongs to another user (uid %1)"_s.arg(st.st_uid));
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return refuse(u"is writable by group or others (mode %1)"_s.arg(st.st_mode & 07777, 4, 8, QChar(u'0')));
    return {};
}

} // namespace

Result<ResolvedProfile> EngineOpener::resolve(const EngineProfile &profile)
{
    ResolvedProfile r;
    r.dataDir = QDir(EngineProfile::dataDirFor(profile.dataDir)).absolutePath();
    r.operatorName = normalizedName(profile.operatorName.isEmpty() ? EngineProfile::osUserName()
                                                                   : profile.operatorName);
    if (auto ok = checkName(r.operatorName, u"operator"_s); !ok)
        return std::unexpected(ok.error());
    r.bookInDataDir = profile.dbUrl.isEmpty();
    // Passwords come from a file only the user can read, or the environment; never argv.
    std::optional<QString> bookPassword;
    if (!profile.dbPasswordFile.isEmpty()) {
        auto pw = readSecretFile(profile.dbPasswordFile, u"db-password-file"_s);
        if (!pw)
            return std::unexpected(pw.error());
        bookPassword = *pw;
    }
    auto gatePassword = secretFromFileOrEnvironment(profile.redisPasswordFile, u"redis-password-file"_s,
                                                    "FLASHSTOCK_REDIS_PASSWORD");
    if (!gatePassword)
        return std::unexpected(gatePassword.error());
    auto book = DbUrl::parse(r.bookInDataDir ? u"sqlite:///"_s + QDir(r.dataDir).absoluteFilePath(u"flashstock.db"_s)
                                             : profile.dbUrl,
                             bookPassword);
    if (!book)
        return std::unexpected(book.error());
    r.book = *book;
    if (profile.redisUrl.isEmpty()) {
        r.gateMode = GateMode::Embedded;
        r.gate = EmbeddedRedis(r.dataDir).url();
        return r;
    }
    auto gate = RedisUrl::parse(withPassword(profile.redisUrl, *gatePassword));
    if (!gate)
        return std::unexpected(gate.error());
    if (gate->isNone()) {
        r.gateMode = GateMode::BookOnly;
        return r;
    }
    r.gateMode = GateMode::Url;
    r.gate = *gate;
    return r;
}

Result<OpenedEngine> EngineOpener::open(const ResolvedProfile &profile, const QString &source, GateNeed need)
{
    const bool embedded = profile.gateMode == GateMode::Embedded && need == GateNeed::Needed;
    if (profile.bookInDataDir || embedded) {
        if (auto r = checkPrivate(profile.dataDir, u"data-dir"_s, u"data dir"_s); !r)
            return std::unexpected(r.error());
        // Only a directory this call creates is made private; an existing one is never chmod'ed.
        if (!QFileInfo::exists(profile.dataDir)) {
            if (!QDir().mkpath(profile.dataDir))
                return fail(ErrorCode::Unavailable, u"cannot create data dir %1"_s.arg(profile.dataDir),
                            u"data-dir"_s);
            QFile::setPermissions(profile.dataDir,
                                  QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        }
    }
    if (profile.book.dialect == Dialect::Sqlite) {
        if (auto r = checkPrivate(profile.book.path, u"db"_s, u"book"_s); !r)
            return std::unexpected(r.error());
    }
    auto engine = Engine::open(EngineOptions{profile.book, std::nullopt, Actor{profile.operatorName, source}});
    if (!engine)
        return std::unexpected(engine.error());
    OpenedEngine opened{std::move(*engine), profile, GateReport{profile.gateMode, false, false, {}}};
    if (profile.gateMode == GateMode::BookOnly || (profile.gateMode == GateMode::Embedded && !embedded))
        return opened;
    if (embedded) {
        EmbeddedRedis server(profile.dataDir);
        if (auto started = server.start())
            opened.gate.startedNow = !server.wasReused();
        else
            opened.gate.problem = started.error().message;
    }
    opened.engine->attachGate(*profile.gate);
    opened.gate.attached = true;
    return opened;
}

} // namespace flashstock
