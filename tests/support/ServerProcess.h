#pragma once

#include "Engine.h"
#include "auth/AccessToken.h"
#include "gate/RedisUrl.h"
#include "store/DbUrl.h"
#include "support/EngineHelpers.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <optional>
#include <vector>

namespace flashstock::test {

/// A real flashstock-server process for one test: on `--listen 127.0.0.1:0` (the port it
/// picked is read from its start line), its own data dir, the given book and gate (the
/// PostgreSQL password through PGPASSWORD, as the server wants it). Killed by the
/// destructor. Use from the thread that made it.
class ServerProcess {
public:
    /// `gate` nullopt: `--redis none`. `extraArgs` go after ours.
    ServerProcess(const DbUrl &book, const std::optional<RedisUrl> &gate, QStringList extraArgs = {});
    ~ServerProcess();
    ServerProcess(const ServerProcess &) = delete;
    ServerProcess &operator=(const ServerProcess &) = delete;

    /// Starts the server and waits (up to 15 s) for its start line. False with errorString().
    /// Again after a stop or kill: the same data dir and, if it was known, the same port.
    bool start();
    /// SIGTERM (a drain), SIGKILL (a crash).
    void terminate();
    void kill();
    /// Waits for the process to end; its exit code, or -1 if it did not end in `ms` or crashed.
    int waitForExit(int ms);
    bool isRunning() const;
    qint64 pid() const;

    int port() const { return m_port; }
    /// `http://127.0.0.1:PORT`.
    QString baseUrl() const;
    /// The book URL the server was given (no password in it).
    QString bookArgument() const { return m_bookArg; }
    /// The gate URL it was given (`none` for book-only).
    QString gateArgument() const { return m_gateArg; }
    /// Its arguments as start() passes them (the port once known, else 0).
    QStringList arguments() const;
    /// Its data dir (flashstock.ini goes there).
    QString dataDir() const { return m_dir.path(); }
    /// Everything it wrote on stderr so far.
    QString log();
    QString errorString() const { return m_error; }
    /// The environment it runs with (PGPASSWORD set for a PostgreSQL book).
    QProcessEnvironment environment() const { return m_env; }

    /// The path of the flashstock-server binary (FLASHSTOCK_SERVER_PATH, set by CMake).
    static QString binary();

private:
    QTemporaryDir m_dir;
    QString m_bookArg;
    QString m_gateArg;
    QStringList m_extra;
    QProcessEnvironment m_env;
    std::unique_ptr<QProcess> m_process;
    QByteArray m_log;
    int m_port = 0;
    QString m_error;
};

/// One HTTP exchange, as a test sees it.
struct HttpAnswer {
    int status = 0;                      ///< 0: no answer (see error)
    QByteArray body;
    QJsonObject json;                    ///< the body, when it is a JSON object
    QHash<QByteArray, QByteArray> headers; ///< lower-case names
    QString error;                       ///< transport failure, for the test's message
};

/// Sends one request (blocking, through QNetworkAccessManager on the calling thread's event
/// loop) and returns the answer. `token` empty: no Authorization header. `contentType`
/// empty: none sent.
HttpAnswer http(const QByteArray &method, const QString &url, const QByteArray &body = {}, const QString &token = {},
                const QByteArray &contentType = "application/json", int timeoutMs = 15000);

/// One request for an HttpCrowd: method, URL path, JSON body (empty: none).
struct CurlRequest {
    QByteArray method;
    QString path;
    QByteArray body;
};

/// Several client processes sending requests at once: `clients` curl processes, each with
/// all its requests in flight together (`--parallel`). Request i goes to process
/// i % clients, so the copies of one request sent k times in a row land in k processes.
/// The token goes in a config file readable by the owner only, never on a command line.
/// Use from the thread that made it; the destructor kills what still runs.
class HttpCrowd {
public:
    HttpCrowd(const QString &baseUrl, const QString &token, QList<CurlRequest> requests, int clients = 3);
    ~HttpCrowd();
    HttpCrowd(const HttpCrowd &) = delete;
    HttpCrowd &operator=(const HttpCrowd &) = delete;

    /// Starts every client; false with errorString() if one could not start.
    bool start();
    /// Waits up to `ms` for every client to end; false if one is still running.
    bool waitForFinished(int ms);
    /// The answers, in request order (`{}` where none came: a refused or cut connection).
    QList<QJsonObject> answers() const;
    QString errorString() const { return m_error; }

private:
    QString outputOf(qsizetype request) const;

    QTemporaryDir m_dir;
    QString m_baseUrl;
    QString m_token;
    QList<CurlRequest> m_requests;
    int m_clients;
    std::vector<std::unique_ptr<QProcess>> m_processes;
    QString m_error;
};

/// Starts an HttpCrowd, waits for it (up to 60 s) and returns its answers; a failure to
/// start or finish is a warning and empty answers.
QList<QJsonObject> sendAtOnce(const QString &baseUrl, const QString &token, const QList<CurlRequest> &requests,
                              int clients = 3);

/// How many of `answers` have the result word `result`.
int countResults(const QList<QJsonObject> &answers, const QString &result);

/// A new bearer token `name` with `scopes` in `engine`'s book; returns its secret (empty,
/// with a warning, if it could not be added). A running server sees it within 2 s.
QString addAccessToken(Engine &engine, const QString &name, AccessScopes scopes);

/// What "nothing moved" compares: the ledger's length, and per SKU the book's levels and
/// the gate's available.
struct StockSnapshot {
    qint64 ledgerRows = -1;
    QList<std::pair<QString, std::pair<SkuLevels, qint64>>> skus;
    bool operator==(const StockSnapshot &o) const;
};
StockSnapshot snapshot(Engine &engine, const QStringList &skus);
/// For QCOMPARE failures.
char *toString(const StockSnapshot &s);

} // namespace flashstock::test

/// FS_GATED_ENGINE(backend) (declares fresh, redis, engine), plus `token` (a bearer token
/// with every scope) and `server`, a flashstock-server on both, started, with `...` as
/// extra arguments.
#define FS_SERVED(backend, ...)                                                                                  \
    FS_GATED_ENGINE(backend);                                                                                    \
    const QString token = flashstock::test::addAccessToken(                                                      \
        *engine, QStringLiteral("all"),                                                                          \
        flashstock::AccessScope::Reserve | flashstock::AccessScope::Pay | flashstock::AccessScope::Read);        \
    flashstock::test::ServerProcess server(fresh.url(), redis.url(), QStringList{__VA_ARGS__});                  \
    QVERIFY2(server.start(), qPrintable(server.errorString()))
