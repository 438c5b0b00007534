#include "gate/RedisConnection.h"

#include <hiredis/hiredis.h>

#include <poll.h>

#include <csignal>
#include <memory>
#include <mutex>
#include <vector>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// Frees the root reply only: hiredis owns the nested elements through it.
struct ReplyDeleter {
    void operator()(redisReply *r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

struct ContextDeleter {
    void operator()(redisContext *c) const { redisFree(c); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextDeleter>;

timeval toTimeval(int ms)
{
    timeval tv{};
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    return tv;
}

RedisValue convert(const redisReply *r)
{
    RedisValue v;
    switch (r->type) {
    case REDIS_REPLY_INTEGER:
        v.type = RedisValue::Type::Integer;
        v.integer = r->integer;
        break;
    case REDIS_REPLY_STRING:
        v.type = RedisValue::Type::String;
        v.str = QByteArray(r->str, qsizetype(r->len));
        break;
    case REDIS_REPLY_STATUS:
        v.type = RedisValue::Type::Status;
        v.str = QByteArray(r->str, qsizetype(r->len));
        break;
    case REDIS_REPLY_ERROR:
        v.type = RedisValue::Type::Error;
        v.str = QByteArray(r->str, qsizetype(r->len));
        break;
    case REDIS_REPLY_ARRAY:
        v.type = RedisValue::Type::Array;
        v.elements.reserve(qsizetype(r->elements));
        for (size_t i = 0; i < r->elements; ++i)
            v.elements.append(convert(r->element[i]));
        break;
    default:
        v.type = RedisValue::Type::Nil;
        break;
    }
    return v;
}

/// argv/argvlen views of `args`; valid while `args` lives.
struct ArgvView {
    std::vector<const char *> argv;
    std::vector<size_t> lens;
    explicit ArgvView(const QList<QByteArray> &args)
    {
        argv.reserve(size_t(args.size()));
        lens.reserve(size_t(args.size()));
        for (const QByteArray &a : args) {
            argv.push_back(a.constData());
            lens.push_back(size_t(a.size()));
        }
    }
};

void ignoreSigpipeOnce()
{
    // Writing to a socket the server closed raises SIGPIPE; we want EPIPE instead.
    static std::once_flag once;
    std::call_once(once, [] { std::signal(SIGPIPE, SIG_IGN); });
}

} // namespace

qint64 RedisValue::toInteger(qint64 fallback) const
{
    if (type == Type::Integer)
        return integer;
    if (type == Type::String || type == Type::Status) {
        bool ok = false;
        const qint64 v = str.toLongLong(&ok);
        return ok ? v : fallback;
    }
    return fallback;
}

RedisConnection::RedisConnection(RedisUrl url)
    : m_url(std::move(url))
{
    ignoreSigpipeOnce();
}

RedisConnection::~RedisConnection() { disconnect(); }

void RedisConnection::disconnect()
{
    if (m_context) {
        redisFree(m_context);
        m_context = nullptr;
    }
}

Result<RedisValue> RedisConnection::transportFailure(const char *what)
{
    QString reason = m_context && m_context->err ? QString::fromLocal8Bit(m_context->errstr)
                                                 : u"no reply"_s;
    disconnect(); // the context is dead: never reuse it
    return fail(ErrorCode::Unavailable,
                u"Redis at %1 unavailable (%2): %3"_s.arg(m_url.toDisplayString(),
                                                          QString::fromLatin1(what), reason),
                u"redis"_s);
}

bool RedisConnection::peerClosed() const
{
    // Between commands nothing may be readable (RESP2, no pub/sub): readable means the
    // server closed the connection (idle timeout, restart). Reconnect before sending, so a
    // command is never written to a dead socket and then lost or retried.
    pollfd p{};
    p.fd = m_context->fd;
    p.events = POLLIN;
    return ::poll(&p, 1, 0) != 0;
}

Result<void> RedisConnection::ensureConnected()
{
    if (m_context && !peerClosed())
        return {};
    disconnect();
    if (m_url.isNone())
        return fail(ErrorCode::InvalidArgument, u"no gate configured (--redis none)"_s, u"redis"_s);
    if (m_url.isCluster()) // a programming error: the gate routes to one node's URL
        return fail(ErrorCode::InvalidArgument,
                    u"a connection goes to one node, not to the cluster %1"_s.arg(m_url.toDisplayString()),
                    u"redis"_s);

    const timeval connectTv = toTimeval(m_url.connectTimeoutMs);
    ContextPtr ctx;
    if (m_url.kind == RedisUrl::Kind::Unix)
        ctx.reset(redisConnectUnixWithTimeout(m_url.socketPath.toLocal8Bit().constData(), connectTv));
    else
        ctx.reset(redisConnectWithTimeout(m_url.host.toUtf8().constData(), m_url.port, connectTv));
    if (!ctx)
        return fail(ErrorCode::Unavailable, u"cannot allocate a Redis context"_s, u"redis"_s);
    if (ctx->err)
        return fail(ErrorCode::Unavailable,
                    u"cannot connect to Redis at %1: %2"_s.arg(m_url.toDisplayString(),
                                                               QString::fromLocal8Bit(ctx->errstr)),
                    u"redis"_s);
    if (redisSetTimeout(ctx.get(), toTimeval(m_url.timeoutMs)) != REDIS_OK)
        return fail(ErrorCode::Unavailable, u"cannot set the Redis command timeout"_s, u"redis"_s);
    // Keepalive is a TCP option: on a unix socket it fails and would poison the context.
    if (m_url.kind == RedisUrl::Kind::Tcp && redisEnableKeepAlive(ctx.get()) != REDIS_OK)
        return fail(ErrorCode::Unavailable, u"cannot enable TCP keepalive"_s, u"redis"_s);

    m_context = ctx.release();
    auto handshake = [this](const QList<QByteArray> &argv) -> Result<RedisValue> {
        auto reply = command(argv);
        if (reply && reply->isError())
            disconnect();
        return reply;
    };
    if (!m_url.password.isEmpty()) {
        QList<QByteArray> argv{QByteArrayLiteral("AUTH")};
        if (!m_url.user.isEmpty())
            argv.append(m_url.user.toUtf8());
        argv.append(m_url.password.toUtf8());
        auto r = handshake(argv);
        if (!r)
            return std::unexpected(r.error());
        if (r->isError())
            return authenticationFailed(QString::fromUtf8(r->str));
    }
    if (m_url.db != 0) {
        auto r = handshake({QByteArrayLiteral("SELECT"), QByteArray::number(m_url.db)});
        if (!r)
            return std::unexpected(r.error());
        if (r->isError())
            return fail(ErrorCode::InvalidArgument,
                        u"Redis at %1 refused SELECT %2: %3"_s.arg(m_url.toDisplayString()).arg(m_url.db).arg(
                            QString::fromUtf8(r->str)),
                        u"redis"_s);
    }
    ++m_connectCount;
    return {};
}

Result<RedisValue> RedisConnection::command(const QList<QByteArray> &argv)
{
    if (auto c = ensureConnected(); !c)
        return std::unexpected(c.error());
    ArgvView view(argv);
    ReplyPtr reply(static_cast<redisReply *>(
        redisCommandArgv(m_context, int(view.argv.size()), view.argv.data(), view.lens.data())));
    if (!reply)
        return transportFailure("command");
    RedisValue value = convert(reply.get());
    if (value.isErrorWith("NOAUTH"))
        return authenticationFailed(QString::fromUtf8(value.str));
    return value;
}

std::unexpected<Error> RedisConnection::authenticationFailed(const QString &reply)
{
    disconnect();
    return fail(ErrorCode::Unavailable,
                u"authentication failed: Redis at %1 %2 (%3). Give its password in FLASHSTOCK_REDIS_PASSWORD"_s.arg(
                    m_url.toDisplayString(),
                    m_url.password.isEmpty() ? u"requires a password and none was given"_s
                                             : u"refused the password given"_s,
                    reply),
                u"redis"_s);
}

Result<QList<RedisValue>> RedisConnection::pipeline(const QList<QList<QByteArray>> &commands)
{
    if (auto sent = send(commands); !sent)
        return std::unexpected(sent.error());
    return receive(commands.size());
}

Result<void> RedisConnection::send(const QList<QList<QByteArray>> &commands)
{
    if (auto c = ensureConnected(); !c)
        return c;
    for (const auto &argv : commands) {
        ArgvView view(argv);
        if (redisAppendCommandArgv(m_context, int(view.argv.size()), view.argv.data(),
                                   view.lens.data()) != REDIS_OK)
            return std::unexpected(transportFailure("pipeline append").error());
    }
    for (int done = 0; !done;)
        if (redisBufferWrite(m_context, &done) != REDIS_OK)
            return std::unexpected(transportFailure("pipeline write").error());
    return {};
}

Result<QList<RedisValue>> RedisConnection::receive(qsizetype count)
{
    if (!m_context)
        return std::unexpected(transportFailure("pipeline read").error());
    QList<RedisValue> out;
    out.reserve(count);
    for (qsizetype i = 0; i < count; ++i) {
        void *raw = nullptr;
        if (redisGetReply(m_context, &raw) != REDIS_OK || !raw)
            return std::unexpected(transportFailure("pipeline read").error());
        ReplyPtr reply(static_cast<redisReply *>(raw));
        out.append(convert(reply.get()));
    }
    for (const RedisValue &v : std::as_const(out))
        if (v.isErrorWith("NOAUTH"))
            return authenticationFailed(QString::fromUtf8(v.str));
    return out;
}

} // namespace flashstock
