#pragma once

#include "Result.h"
#include "drill/DrillChannel.h"

#include <QString>
#include <QUrl>

#include <functional>
#include <optional>

namespace flashstock {

/// How `drill --via` reaches a running flashstock-server and, for the server-kill fault,
/// restarts it.
struct DrillViaSettings {
    QUrl base;                 ///< the server, e.g. http://127.0.0.1:8080 (http only)
    QByteArray token;          ///< bearer token with the reserve and pay scopes (empty: --no-auth server)
    QString serverPidFile;     ///< the server's --pid-file; empty: server-kill is left out
    /// Started (through /bin/sh -c, detached) after the kill to bring the server back; empty:
    /// a supervisor (systemd's Restart=) does, and the drill only waits for it.
    QString serverCommand;
    int restartTimeoutSeconds = 60; ///< how long the server may take to be ready again
};

/// The DrillVia of `settings`: channels that send each buyer's reserve and payment callback
/// as HTTP requests (Qt Network, one QNetworkAccessManager per channel, so per worker thread),
/// retrying connection failures and 503s other than gate_unavailable with the same request
/// (idempotent) until the server answers or restartTimeoutSeconds pass; a check of the
/// server before the sale (ready, the token's scopes, the drill's SKU in its book, the same
/// gate figure as `gateAvailable` reads); and, with a pid file, the server-kill fault
/// (SIGKILL to the pid in the file, then `serverCommand` or the supervisor, until /readyz
/// answers 200 from a new process). `gateAvailable(sku)`: the drill's own gate reading of
/// the SKU (nullopt: book-only); called on the drill's controller thread.
/// Errors: InvalidArgument naming `via` for a URL that is not http://host:port.
[[nodiscard]] Result<DrillVia> makeDrillVia(const DrillViaSettings &settings,
                                            std::function<std::optional<qint64>(const QString &sku)> gateAvailable);

} // namespace flashstock
