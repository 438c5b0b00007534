#include "ServerOptions.h"

#include "Identifiers.h"
#include "gate/RedisUrl.h"
#include "store/DbUrl.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QHostAddress>
#include <QSettings>
#include <QThread>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

/// One option: its flag (and the `[server]` key of the same name), what it takes, its help.
struct OptionSpec {
    const char *name;
    const char *valueName; ///< empty: a switch
    const char *help;
};

const OptionSpec kOptions[] = {
    {"data-dir", "DIR", "Where the embedded defaults and flashstock.ini live (env FLASHSTOCK_DATA_DIR)."},
    {"db", "URL", "Book of record: sqlite:///file.db or postgresql://user@host:port/db (password from PGPASSWORD)."},
    {"redis", "URL", "Gate: redis://host:port, unix:///path/redis.sock, redis-cluster://host:port[,host:port...], "
                       "or none (password from "
                       "FLASHSTOCK_REDIS_PASSWORD); default: the data dir's private redis-server."},
    {"operator", "NAME", "Written on ledger rows (default: the OS user)."},
    {"listen", "ADDR:PORT", "Where to listen (default 127.0.0.1:8080; [::1]:8080 for IPv6; port 0 picks one)."},
    {"threads", "N", "Request threads, each polling its own libmicrohttpd daemon on epoll (default: the number of cores)."},
    {"book-writers", "N", "Book writers: book connections, each committing every waiting order in one "
                          "transaction (default 4)."},
    {"engine-workers", "N", "Threads for confirms, releases and reads (default 4)."},
    {"expire-every", "SECONDS", "Release due holds every SECONDS (default 1; 0: never)."},
    {"reconcile-every", "SECONDS", "One reconcile pass every SECONDS (default 0: never)."},
    {"reconcile-grace", "SECONDS", "How old a held token must be to count as orphaned (default 30)."},
    {"no-auth", "", "Serve without bearer tokens (refused unless --listen is a loopback address)."},
    {"access-log", "FILE", "Append one line per request to FILE (- for stderr)."},
    {"max-connections", "N", "Open connections at once (default 10000, bounded by the open-files limit)."},
    {"per-ip-connections", "N", "Open connections from one client address, an IPv6 client counted by its /64 "
                                "(default 1000)."},
    {"idle-timeout", "SECONDS", "Close a connection silent this long (default 15)."},
    {"request-timeout", "SECONDS", "A request's line, headers and body must be in this long after its first byte, "
                                   "however busy its sender looks; else 408 and the connection is closed (default 10)."},
    {"pid-file", "FILE", "Write the process id to FILE while running."},
};

std::unexpected<Error> bad(const QString &field, const QString &message)
{
    return fail(ErrorCode::InvalidArgument, u"%1: %2"_s.arg(field, message), field);
}

Result<int> integer(const QString &name, const QString &text, int min, int max)
{
    bool ok = false;
    const int v = text.trimmed().toInt(&ok);
    if (!ok || v < min || v > max)
        return bad(name, u"must be a whole number from %1 to %2, got %3"_s.arg(min).arg(max).arg(quoteForMessage(text)));
    return v;
}

Result<void> parseListen(const QString &text, ServerOptions &o)
{
    const qsizetype colon = text.lastIndexOf(u':');
    if (colon <= 0)
        return bad(u"listen"_s, u"expected ADDR:PORT, got %1"_s.arg(quoteForMessage(text)));
    QString host = text.left(colon);
    if (host.startsWith(u'[') && host.endsWith(u']'))
        host = host.mid(1, host.size() - 2);
    if (host == u"localhost"_s)
        host = u"127.0.0.1"_s;
    if (QHostAddress(host).isNull())
        return bad(u"listen"_s, u"%1 is not an IP address (IPv6 in brackets: [::1]:8080)"_s.arg(quoteForMessage(host)));
    auto port = integer(u"listen"_s, text.mid(colon + 1), 0, 65535);
    if (!port)
        return std::unexpected(port.error());
    o.host = host;
    o.port = *port;
    return {};
}

/// Applies one setting (from a flag or from the `[server]` section).
Result<void> apply(ServerOptions &o, const QString &name, const QString &value)
{
    auto set = [&](int &target, int min, int max) -> Result<void> {
        auto v = integer(name, value, min, max);
        if (!v)
            return std::unexpected(v.error());
        target = *v;
        return {};
    };
    if (name == u"data-dir"_s) o.profile.dataDir = value;
    else if (name == u"db"_s) o.profile.dbUrl = value;
    else if (name == u"redis"_s) o.profile.redisUrl = value;
    else if (name == u"operator"_s) o.profile.operatorName = value;
    else if (o.profile.setPasswordFile(name, value)) {}
    else if (name == u"listen"_s) return parseListen(value, o);
    else if (name == u"threads"_s) return set(o.http.threads, 1, 64);
    else if (name == u"book-writers"_s) return set(o.bookWriters, 1, 64);
    else if (name == u"engine-workers"_s) return set(o.engineWorkers, 1, 64);
    else if (name == u"expire-every"_s) return set(o.housekeeping.expireEvery, 0, 86400);
    else if (name == u"reconcile-every"_s) return set(o.housekeeping.reconcileEvery, 0, 86400);
    else if (name == u"reconcile-grace"_s) return set(o.housekeeping.reconcileGraceSeconds, 1, 86400);
    else if (name == u"no-auth"_s) {
        const QString v = value.trimmed().toLower();
        if (v != u"true"_s && v != u"false"_s && v != u"1"_s && v != u"0"_s)
            return bad(name, u"must be true or false, got %1"_s.arg(quoteForMessage(value)));
        o.noAuth = v == u"true"_s || v == u"1"_s;
    } else if (name == u"access-log"_s) o.accessLog = value;
    else if (name == u"max-connections"_s) return set(o.http.connectionLimit, 1, 1000000);
    else if (name == u"per-ip-connections"_s) return set(o.http.perIpLimit, 1, 1000000);
    else if (name == u"idle-timeout"_s) return set(o.http.idleTimeoutSeconds, 1, 3600);
    else if (name == u"request-timeout"_s) return set(o.http.requestTimeoutSeconds, 1, 3600);
    else if (name == u"pid-file"_s) o.pidFile = value;
    else return bad(u"server"_s, u"unknown setting %1 in flashstock.ini [server]"_s.arg(quoteForMessage(name)));
    return {};
}

/// Passwords come from the environment or a file only the user can read, never from argv.
Result<void> noPasswordOnCommandLine(const QCommandLineParser &parser)
{
    if (parser.isSet(u"db"_s)) {
        if (!DbUrl::passwordIn(parser.value(u"db"_s)).isEmpty())
            return bad(u"db"_s, u"the URL holds a password, and a server's command line is visible to every user of "
                                u"the machine: give it in PGPASSWORD or --db-password-file"_s);
    }
    if (parser.isSet(u"redis"_s)) {
        if (auto url = RedisUrl::parse(parser.value(u"redis"_s)); url && !url->password.isEmpty())
            return bad(u"redis"_s, u"the URL holds a password, and a server's command line is visible to every user "
                                   u"of the machine: give it in FLASHSTOCK_REDIS_PASSWORD or --redis-password-file"_s);
    }
    return {};
}

Result<void> applySettingsFile(ServerOptions &o, const QCommandLineParser &parser)
{
    const QString file = EngineProfile::settingsFile(EngineProfile::dataDirFor(o.profile.dataDir));
    const QFileInfo info(file);
    if (!info.exists())
        return {};
    QSettings ini(file, QSettings::IniFormat);
    ini.beginGroup(u"server"_s);
    const QStringList keys = ini.childKeys();
    if (!keys.isEmpty() && (info.permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther))
        && (ini.contains(u"db"_s) || ini.contains(u"redis"_s)))
        return bad(u"server"_s, u"%1 names the book or gate and is readable by others: chmod 600 it"_s.arg(file));
    for (const QString &key : keys) {
        if (key == u"data-dir"_s)
            return bad(u"server"_s, u"data-dir cannot be set inside the data dir's own flashstock.ini"_s);
        if (parser.isSet(key))
            continue; // flags win
        if (auto r = apply(o, key, ini.value(key).toString()); !r)
            return fail(r.error().code, u"%1 (in %2 [server])"_s.arg(r.error().message, file), r.error().field);
    }
    return {};
}

} // namespace

QString ServerOptions::usage()
{
    QString text = u"Usage: flashstock-server [options]\n\nServes the FlashStock engine over HTTP (API v1) to storefronts "
                   u"and payment providers.\nSettings may also live in the data dir's flashstock.ini, section [server], "
                   u"under the option names (flags win).\n\nOptions:\n"_s;
    for (const OptionSpec &s : kOptions) {
        const QString flag = u"--"_s + QString::fromLatin1(s.name) + (QString::fromLatin1(s.valueName).isEmpty() ? QString() : u' ' + QString::fromLatin1(s.valueName));
        text += u"  %1\n      %2\n"_s.arg(flag, QString::fromUtf8(s.help));
    }
    for (const EngineProfile::Option &o : EngineProfile::passwordFileOptions())
        text += u"  --%1 %2\n      %3\n"_s.arg(o.name, o.valueName, o.help);
    text += u"  --help, --version\n\nSignals: SIGTERM or SIGINT drain (no new connections, in-flight requests answered, "
            u"at most 10 s) and exit 0.\n"_s;
    return text;
}

Result<ServerOptions> ServerOptions::parse(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    for (const OptionSpec &s : kOptions)
        parser.addOption(QString::fromLatin1(s.valueName).isEmpty()
                             ? QCommandLineOption(QString::fromLatin1(s.name), QString::fromUtf8(s.help))
                             : QCommandLineOption(QString::fromLatin1(s.name), QString::fromUtf8(s.help), QString::fromLatin1(s.valueName)));
    for (const EngineProfile::Option &o : EngineProfile::passwordFileOptions())
        parser.addOption({o.name, o.help, o.valueName});
    parser.addOption({u"help"_s, u"Show help."_s});
    parser.addOption({u"version"_s, u"Show the version and the git revision it was built from."_s});
    if (!parser.parse(QStringList{u"flashstock-server"_s} + arguments))
        return bad(u"arguments"_s, parser.errorText() + u" (flashstock-server --help lists the options)"_s);
    if (!parser.positionalArguments().isEmpty())
        return bad(u"arguments"_s, u"unexpected argument %1"_s.arg(quoteForMessage(parser.positionalArguments().first())));
    ServerOptions o;
    o.http.threads = std::clamp(QThread::idealThreadCount(), 1, 64);
    o.help = parser.isSet(u"help"_s);
    o.version = parser.isSet(u"version"_s);
    if (o.help || o.version)
        return o;
    if (auto r = noPasswordOnCommandLine(parser); !r)
        return std::unexpected(r.error());
    for (const OptionSpec &s : kOptions) {
        const QString name = QString::fromLatin1(s.name);
        if (!parser.isSet(name))
            continue;
        if (parser.values(name).size() > 1)
            return bad(name, u"given more than once"_s);
        const QString value = QString::fromLatin1(s.valueName).isEmpty() ? u"true"_s : parser.value(name);
        if (value.trimmed().isEmpty())
            return bad(name, u"--%1 must not be empty"_s.arg(name));
        if (auto r = apply(o, name, value); !r)
            return std::unexpected(r.error());
    }
    for (const EngineProfile::Option &p : EngineProfile::passwordFileOptions())
        if (parser.isSet(p.name))
            o.profile.setPasswordFile(p.name, parser.value(p.name));
    if (auto r = applySettingsFile(o, parser); !r)
        return std::unexpected(r.error());
    if (o.noAuth && !QHostAddress(o.host).isLoopback())
        return bad(u"no-auth"_s, u"refused: %1 is not a loopback address, and without tokens anyone who reaches it "
                                 u"could reserve and pay"_s.arg(o.host));
    return o;
}

} // namespace flashstock::server
