#pragma once

#include "HttpServer.h"
#include "Housekeeping.h"
#include "Result.h"
#include "open/EngineProfile.h"

#include <QString>
#include <QStringList>

namespace flashstock::server {

/// Everything flashstock-server is told at start: the command line first, then the data
/// dir's flashstock.ini `[server]` section for what the command line leaves out (flags
/// win), then the defaults.
struct ServerOptions {
    EngineProfile profile;    ///< --data-dir, --db, --redis, --operator (EngineOpener's defaults)
    QString host = QStringLiteral("127.0.0.1"); ///< --listen ADDR:PORT
    int port = 8080;
    HttpLimits http;          ///< --threads, --max-connections, --per-ip-connections, --idle-timeout, --request-timeout
    int bookWriters = 4;      ///< --book-writers: book connections of the book writers (group commit)
    int engineWorkers = 4;    ///< --engine-workers: threads for confirms, releases and reads
    HousekeepingPlan housekeeping; ///< --expire-every, --reconcile-every, --reconcile-grace
    bool noAuth = false;      ///< --no-auth (loopback only)
    QString accessLog;        ///< --access-log FILE or `-`; empty: none
    QString pidFile;          ///< --pid-file FILE; empty: none
    bool help = false;        ///< --help: print usage() and exit 0
    bool version = false;     ///< --version

    /// Parses `arguments` (without the program name) and the `[server]` section of the data
    /// dir's flashstock.ini. InvalidArgument naming the option for bad input, a password on
    /// the command line (argv is visible to every user of the machine), `--no-auth` on an
    /// address that is not loopback, or an unknown key in the section.
    [[nodiscard]] static Result<ServerOptions> parse(const QStringList &arguments);
    /// The --help text.
    static QString usage();
};

} // namespace flashstock::server
