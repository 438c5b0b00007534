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
    return m_skipWhileDown && m_downSince.isValid() && m_downSince.elapsed() < kRetryMs;
}

Result<void> GateNode::prepare()
{
    if (skipped())
        return fail(ErrorCode::Unavailable, m_downReason, u"redis"_s);
    if (auto c = m_conn.ensureConnected(); !c) {
        if (c.error().code == ErrorCode::Unavailable) {
            m_downSince.start();
            m_downReason = c.error().message;
        }
        return c;
    }
    m_downSince.invalidate();
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
    auto loaded = ScriptRegistry::instance().loadAll(m_conn);
    if (loaded)
        m_scriptsLoadedFor = m_conn.connectCount();
    return loaded;
}

} // namespace flashstock
