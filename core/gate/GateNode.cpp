#include "gate/GateNode.h"

#include "gate/ScriptRegistry.h"

using namespace Qt::StringLiterals;

namespace flashstock {

GateNode::GateNode(RedisUrl url, bool skipWhileDown)
    : m_conn(std::move(url))
    , m_skipWhileDown(skipWhileDown)
{
}

QString GateNode::address() const
{
    const RedisUrl &u = m_conn.url();
    return u.kind == RedisUrl::Kind::Unix ? u.socketPath : RedisNodeAddress{u.host, u.port}.toString();
}

bool GateNode::skipped() const
{
    return m_skipWhileDown && m_failedAt && Clock::now() - *m_failedAt < std::chrono::milliseconds(kRetryMs);
}

bool GateNode::troubled() const
{
    return m_failedAt && (!m_answeredAt || *m_answeredAt < *m_failedAt);
}

std::unexpected<Error> GateNode::failed(const Error &error)
{
    if (error.code == ErrorCode::Unavailable) {
        m_failedAt = Clock::now();
        m_downReason = error.message;
    }
    return std::unexpected(error);
}

Result<void> GateNode::prepare()
{
    if (skipped())
        return fail(ErrorCode::Unavailable, m_downReason, u"redis"_s);
    if (auto c = m_conn.ensureConnected(); !c)
        return failed(c.error());
    if (m_scriptsLoadedFor != m_conn.connectCount()) {
        auto loaded = reloadScripts();
        // Any other failure (e.g. LOADING) is retried on the call's NOSCRIPT path.
        if (!loaded && loaded.error().code == ErrorCode::Unavailable)
            return loaded;
    }
    return {};
}

Result<void> GateNode::reloadScripts()
{
    auto loaded = noted(ScriptRegistry::instance().loadAll(m_conn));
    if (loaded)
        m_scriptsLoadedFor = m_conn.connectCount();
    return loaded;
}

Result<void> GateNode::send(const QList<QList<QByteArray>> &commands)
{
    if (auto sent = m_conn.send(commands); !sent)
        return failed(sent.error());
    return {};
}

Result<QList<RedisValue>> GateNode::receive(qsizetype count) { return noted(m_conn.receive(count)); }

} // namespace flashstock
