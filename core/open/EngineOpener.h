#pragma once

#include "Engine.h"
#include "Result.h"
#include "gate/RedisUrl.h"
#include "open/EngineProfile.h"
#include "store/DbUrl.h"

#include <memory>
#include <optional>

namespace flashstock {

/// How a profile's gate is reached.
enum class GateMode {
    BookOnly, ///< `none`: no gate at all; reserves go straight to the book
    Url,      ///< a configured Redis URL
    Embedded, ///< the data dir's private redis-server, started or reused when opened
};

/// A profile with every default applied and every URL parsed. Resolving creates, starts and
/// opens nothing, so it is where bad input is found before anything happens.
struct ResolvedProfile {
    QString dataDir;       ///< absolute
    DbUrl book;            ///< the PostgreSQL password from the URL, else PGPASSWORD (DbUrl)
    bool bookInDataDir = false; ///< the book is the data dir's default flashstock.db
    GateMode gateMode = GateMode::Embedded;
    /// Url: the URL, its password from FLASHSTOCK_REDIS_PASSWORD when it names none;
    /// Embedded: the data dir's socket; BookOnly: nullopt.
    std::optional<RedisUrl> gate;
    QString operatorName;  ///< checked (Identifiers: checkName)
};

/// Whether the caller needs the gate: reads of the book alone never start a redis-server.
enum class GateNeed {
    Needed,      ///< attach the gate (start or reuse the embedded one)
    BookIsEnough ///< Embedded: leave the engine without a gate; a Url gate is attached anyway (it costs nothing until used)
};

/// What opening found about the gate.
struct GateReport {
    GateMode mode = GateMode::Embedded;
    bool attached = false;   ///< the engine has a gate in front of its book
    bool startedNow = false; ///< Embedded: this open started the redis-server (else it was running)
    /// Not empty: the gate is configured and could not be brought up (the embedded
    /// redis-server did not start), and why. The engine still has the gate, down: reserves
    /// answer gate_unavailable and sales do not open; it is never book-only by accident.
    QString problem;
};

/// An engine opened from a profile, and what the open found.
struct OpenedEngine {
    std::unique_ptr<Engine> engine; ///< owned by the caller; one thread (Engine's rule)
    ResolvedProfile profile;
    GateReport gate;
};

/// The one way to open an engine from a profile. Plain functions; call them on the thread
/// that will use the engine.
class EngineOpener {
public:
    /// Applies the defaults and parses: data dir (EngineProfile::dataDirFor), book URL (the
    /// data dir's flashstock.db by default), gate (URL with the password from the
    /// environment, `none`, or the data dir's embedded redis-server), operator (the OS user
    /// by default). Passwords a URL does not carry come from the profile's password files
    /// (readSecretFile) or else PGPASSWORD / FLASHSTOCK_REDIS_PASSWORD. InvalidArgument naming
    /// the field (db, redis, operator, db-password-file, redis-password-file) for bad input.
    [[nodiscard]] static Result<ResolvedProfile> resolve(const EngineProfile &profile);

    /// Opens `profile`'s engine for `source` (written on ledger rows: cli, console, drill,
    /// server): creates the data dir (0700) when the defaults live in it, opens the book
    /// (migrations), then attaches the gate. The book comes first, so a refused book leaves
    /// no redis-server behind. An embedded redis-server that does not start is never an
    /// error here: the gate is attached down and GateReport::problem says why. Errors: the
    /// book's (Database::open), or Unavailable if the data dir cannot be created.
    [[nodiscard]] static Result<OpenedEngine> open(const ResolvedProfile &profile, const QString &source,
                                                   GateNeed need = GateNeed::Needed);
};

} // namespace flashstock
