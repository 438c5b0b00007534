#pragma once

#include "Result.h"
#include "gate/RedisConnection.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace flashstock {

/// The gate's Lua scripts (lua/*.lua, embedded as Qt resources under `:/lua/`).
enum class ScriptId {
    Reserve,    ///< reserve-2.lua
    Settle,     ///< settle-2.lua
    MarkSold,   ///< mark-sold-3.lua
    Release,    ///< release-3.lua
    Load,       ///< load-3.lua
    Adjust,     ///< adjust-1.lua
    SetSale,    ///< set-sale-1.lua
    ClearSale,  ///< clear-sale-1.lua
    SetPaused,  ///< set-paused-1.lua
    OpenTokens, ///< open-tokens-2.lua
    SetUsers,   ///< set-users-1.lua
};

/// One embedded script: its file name, KEYS count (from the `name-NUMKEYS.lua` file name),
/// body, and SHA1 computed locally (what SCRIPT LOAD answers).
struct LuaScript {
    ScriptId id = ScriptId::Reserve;
    QString fileName;  ///< e.g. "reserve-2.lua"
    int numKeys = 0;   ///< KEYS the script expects
    QByteArray body;   ///< the Lua source, `--- @include NAME` lines expanded (lua/include/)
    QByteArray sha1;   ///< lower-case hex SHA1 of `body`
};

/// The script registry: reads every script once per process (immutable afterwards, so any
/// thread may use it), loads them into a server (SCRIPT LOAD) and builds the EVALSHA (and,
/// as a last resort after NOSCRIPT, EVAL) commands that run them. GateRouter sends them.
class ScriptRegistry {
public:
    /// The process-wide registry. Aborts with a clear message if a script is missing from
    /// the resources (a build error, not a runtime condition).
    static const ScriptRegistry &instance();

    /// The script `id`.
    const LuaScript &script(ScriptId id) const;
    /// Every script, in ScriptId order.
    const QList<LuaScript> &all() const { return m_scripts; }

    /// SCRIPT LOAD of every script in one round trip. Internal if the server's SHA1 differs
    /// from the local one; Unavailable on transport failure.
    [[nodiscard]] Result<void> loadAll(RedisConnection &conn) const;
    /// Whether every script is in the server's cache (SCRIPT EXISTS).
    [[nodiscard]] Result<bool> allLoaded(RedisConnection &conn) const;

    /// `EVALSHA sha numkeys keys... args...` for script `id`; the count of `keys` must be
    /// the script's numKeys.
    QList<QByteArray> evalshaArgv(ScriptId id, const QList<QByteArray> &keys, const QList<QByteArray> &args) const;
    /// `evalsha` (from evalshaArgv()) as `EVAL body ...`: cannot meet NOSCRIPT, for a server
    /// that lost its cache again between a load and the retry.
    QList<QByteArray> asEval(ScriptId id, QList<QByteArray> evalsha) const;

private:
    ScriptRegistry();

    QList<LuaScript> m_scripts;
};

} // namespace flashstock
