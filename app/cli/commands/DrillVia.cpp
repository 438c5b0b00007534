#include "DrillVia.h"

#include "ChildProcess.h"
#include "Identifiers.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QProcess>
#include <QThread>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr int kRetrySleepMs = 50;
constexpr int kRequestTimeoutMs = 10000;
constexpr int kKillWaitMs = 10000;

/// One HTTP answer: status 0 when none came (refused, reset, timed out).
struct HttpAnswer {
    int status = 0;
    QJsonObject body;
    QString transportError;

    /// Worth sending again, unchanged: no answer, or a 503 that is not the gate's answer
    /// (draining, outcome_unknown, the book unreachable). Every request the drill sends is
    /// idempotent.
    bool again() const
    {
        return status == 0 || (status == 503 && !body.contains(u"result"_s));
    }
    QString describe() const
    {
        if (status == 0)
            return u"no answer (%1)"_s.arg(transportError);
        const QString message = body.value(u"error"_s).toObject().value(u"message"_s).toString();
        return message.isEmpty() ? u"HTTP %1"_s.arg(status) : u"HTTP %1: %2"_s.arg(status).arg(message);
    }
};

/// Sends one request and waits for its answer (a local event loop on the calling thread).
HttpAnswer send(QNetworkAccessManager &nam, const QUrl &url, const QByteArray &token, const QByteArray &verb,
                const QByteArray &body = {})
{
    QNetworkRequest request(url);
    request.setTransferTimeout(kRequestTimeoutMs);
    if (!token.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + token);
    if (verb == "POST")
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    std::unique_ptr<QNetworkReply> reply(verb == "POST" ? nam.post(request, body) : nam.get(request));
    if (!reply->isFinished()) {
        QEventLoop loop;
        QObject::connect(reply.get(), &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
    }
    HttpAnswer a;
    a.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    a.body = QJsonDocument::fromJson(reply->readAll()).object();
    if (a.status == 0)
        a.transportError = reply->errorString();
    return a;
}

QUrl endpoint(const QUrl &base, const QString &path)
{
    QUrl u = base;
    u.setPath(path);
    return u;
}

/// The outcome of a reserve or confirm answer, or the error it stands for.
Result<Outcome> outcomeOf(const HttpAnswer &a, const QString &what)
{
    if (a.status == 200 || (a.status == 503 && a.body.contains(u"result"_s))) {
        if (const auto o = outcomeFromWord(a.body.value(u"result"_s).toString()))
            return *o;
        return fail(ErrorCode::Internal, u"via: %1: HTTP %2 with no result word the drill knows"_s.arg(what).arg(a.status));
    }
    const ErrorCode code = a.status == 0 || a.status == 503          ? ErrorCode::Unavailable
        : a.status == 404                                            ? ErrorCode::NotFound
        : a.status == 400                                            ? ErrorCode::InvalidArgument
        : a.status == 401 || a.status == 403                         ? ErrorCode::NotPermitted
                                                                     : ErrorCode::Internal;
    return fail(code, u"via: %1: %2"_s.arg(what, a.describe()),
                a.body.value(u"error"_s).toObject().value(u"field"_s).toString());
}

/// A worker's channel: its own QNetworkAccessManager (one keep-alive connection, as the
/// requests go one at a time).
class HttpChannel final : public DrillChannel {
public:
    explicit HttpChannel(const DrillViaSettings &s) : m_s(s) {}

    Result<Outcome> reserve(const QString &order, const QString &user, const QString &sku, qint64 qty,
                            qint64 holdSeconds) override
    {
        const QJsonObject body{{u"order"_s, order},
                               {u"user"_s, user},
                               {u"lines"_s, QJsonArray{QJsonObject{{u"sku"_s, sku}, {u"qty"_s, qty}}}},
                               {u"hold_seconds"_s, holdSeconds}};
        return outcomeOf(call(u"/v1/reservations"_s, body), u"reserve %1"_s.arg(order));
    }

    Result<PaymentAnswer> confirm(const QString &order, const QString &payment) override
    {
        bool resent = false;
        auto c = outcomeOf(call(u"/v1/orders/%1/confirm"_s.arg(order), {{u"payment"_s, payment}}, &resent),
                           u"confirm %1"_s.arg(order));
        if (!c)
            return std::unexpected(c.error());
        return PaymentAnswer{*c, resent};
    }

private:
    /// POSTs `body` until an answer that is not "try again" or the restart timeout passes;
    /// `resent`: set when it was sent more than once.
    HttpAnswer call(const QString &path, const QJsonObject &body, bool *resent = nullptr)
    {
        const QByteArray json = QJsonDocument(body).toJson(QJsonDocument::Compact);
        QDeadlineTimer deadline(qint64(m_s.restartTimeoutSeconds) * 1000);
        for (;;) {
            HttpAnswer a = send(m_nam, endpoint(m_s.base, path), m_s.token, "POST", json);
            if (!a.again() || deadline.hasExpired())
                return a;
            if (resent)
                *resent = true;
            QThread::msleep(kRetrySleepMs);
        }
    }

    const DrillViaSettings m_s;
    QNetworkAccessManager m_nam;
};

/// send() again while the answer says to (HttpAnswer::again) and the restart timeout allows:
/// a server whose book session was lost (a failover) answers that one request 503 and opens
/// a new session for the next.
HttpAnswer sendUntilAnswered(QNetworkAccessManager &nam, const DrillViaSettings &s, const QString &path,
                             const QByteArray &verb, const QByteArray &body = {})
{
    for (QDeadlineTimer deadline(qint64(s.restartTimeoutSeconds) * 1000);; QThread::msleep(kRetrySleepMs)) {
        HttpAnswer a = send(nam, endpoint(s.base, path), s.token, verb, body);
        if (!a.again() || deadline.hasExpired())
            return a;
    }
}

Result<void> checkServer(const DrillViaSettings &s, const QString &sku,
                         const std::function<std::optional<qint64>(const QString &)> &gateAvailable)
{
    QNetworkAccessManager nam;
    const QString where = s.base.toString();
    const HttpAnswer ready = send(nam, endpoint(s.base, u"/readyz"_s), {}, "GET");
    if (ready.status != 200)
        return fail(ErrorCode::Unavailable,
                    u"via: the server at %1 is not ready: %2 %3"_s.arg(where, ready.describe(),
                                                                        QString::fromUtf8(QJsonDocument(ready.body).toJson(QJsonDocument::Compact))),
                    u"via"_s);
    const HttpAnswer skuAnswer = sendUntilAnswered(nam, s, u"/v1/skus/%1"_s.arg(sku), "GET");
    if (skuAnswer.status == 401 || skuAnswer.status == 403)
        return fail(ErrorCode::NotPermitted,
                    u"via: the server at %1 refused the token (%2); give the drill a token with the reserve and pay "
                    u"scopes (flashstock-cli token add NAME --scope reserve,pay) in --token-file or FLASHSTOCK_TOKEN"_s
                        .arg(where, skuAnswer.describe()),
                    u"token"_s);
    const bool unknownSku = skuAnswer.status == 404
        || (skuAnswer.status == 400
            && skuAnswer.body.value(u"error"_s).toObject().value(u"field"_s).toString() == u"sku"_s);
    if (unknownSku)
        return fail(ErrorCode::InvalidArgument,
                    u"via: the server at %1 does not know %2, which this drill just created in its book: the server "
                    u"runs on another book; give the drill the server's --data-dir, --db and --redis"_s.arg(where, sku),
                    u"via"_s);
    if (skuAnswer.status != 200)
        return fail(ErrorCode::Unavailable, u"via: the server at %1: GET /v1/skus/%2: %3"_s.arg(where, sku,
                                                                                                 skuAnswer.describe()),
                    u"via"_s);
    if (const auto mine = gateAvailable(sku)) {
        const QJsonValue theirs = skuAnswer.body.value(u"gate"_s).toObject().value(u"available"_s);
        if (!theirs.isDouble() || theirs.toInteger() != *mine)
            return fail(ErrorCode::InvalidArgument,
                        u"via: the server at %1 sees gate available %2 for %3 where the drill's gate holds %4: the "
                        u"server runs on another gate; give the drill the server's --data-dir and --redis"_s
                            .arg(where, theirs.isDouble() ? QString::number(theirs.toInteger()) : u"none"_s, sku)
                            .arg(*mine),
                        u"via"_s);
    }
    // A payment for an order that does not exist: 404 with the pay scope (and nothing is
    // written), 403 without it.
    const HttpAnswer pay = sendUntilAnswered(nam, s, u"/v1/orders/%1-via-probe/confirm"_s.arg(sku), "POST",
                                             QByteArrayLiteral("{\"payment\":\"via-probe\"}"));
    if (pay.status != 404)
        return fail(ErrorCode::NotPermitted,
                    u"via: the server at %1 does not take the drill's payment callbacks (%2); the token needs the pay "
                    u"scope"_s.arg(where, pay.describe()),
                    u"token"_s);
    return {};
}

/// The pid in `file`, if it names a live flashstock-server process.
Result<qint64> serverPid(const QString &file)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Unavailable, u"server-pid-file: cannot read %1: %2"_s.arg(file, f.errorString()),
                    u"server-pid-file"_s);
    bool ok = false;
    const qint64 pid = QString::fromLatin1(f.readAll()).trimmed().toLongLong(&ok);
    if (!ok || pid <= 1)
        return fail(ErrorCode::Unavailable, u"server-pid-file: %1 holds no process id"_s.arg(file), u"server-pid-file"_s);
    const QString exe = QFileInfo(u"/proc/%1/exe"_s.arg(pid)).symLinkTarget();
    if (!QFileInfo(exe).fileName().startsWith(u"flashstock-server"_s))
        return fail(ErrorCode::Unavailable,
                    u"server-pid-file: process %1 of %2 is not a running flashstock-server (%3)"_s.arg(pid).arg(
                        file, exe.isEmpty() ? u"gone"_s : exe),
                    u"server-pid-file"_s);
    return pid;
}

Result<QString> killAndRestart(const DrillViaSettings &s, const std::function<void()> &whileDown)
{
    auto pid = serverPid(s.serverPidFile);
    if (!pid)
        return std::unexpected(pid.error());
    QElapsedTimer took;
    took.start();
    if (::kill(pid_t(*pid), SIGKILL) != 0)
        return fail(ErrorCode::Unavailable, u"server-kill: kill -9 %1: %2"_s.arg(*pid).arg(QString::fromLocal8Bit(strerror(errno))));
    for (QDeadlineTimer gone(kKillWaitMs); !processGone(*pid); QThread::msleep(10))
        if (gone.hasExpired())
            return fail(ErrorCode::Unavailable, u"server-kill: process %1 still runs after SIGKILL"_s.arg(*pid));
    whileDown();
    if (!s.serverCommand.isEmpty()) {
        QProcess starter;
        starter.setProgram(u"/bin/sh"_s);
        starter.setArguments({u"-c"_s, u"exec "_s + s.serverCommand});
        closeDescriptorsOnExec(); // the new server outlives the drill
        if (!starter.startDetached())
            return fail(ErrorCode::Unavailable, u"server-command: cannot start /bin/sh -c %1"_s.arg(s.serverCommand),
                        u"server-command"_s);
    }
    QNetworkAccessManager nam;
    for (QDeadlineTimer back(qint64(s.restartTimeoutSeconds) * 1000);; QThread::msleep(kRetrySleepMs)) {
        auto next = serverPid(s.serverPidFile);
        if (next && *next != *pid && send(nam, endpoint(s.base, u"/readyz"_s), {}, "GET").status == 200)
            return u"server pid %1 killed with SIGKILL; pid %2 ready %3 ms later (%4)"_s.arg(*pid).arg(*next)
                .arg(took.elapsed())
                .arg(s.serverCommand.isEmpty() ? u"restarted by its supervisor"_s : u"started by --server-command"_s);
        if (back.hasExpired())
            return fail(ErrorCode::Unavailable,
                        u"server-kill: the server did not come back within %1 s (%2)"_s.arg(s.restartTimeoutSeconds).arg(
                            s.serverCommand.isEmpty() ? u"no --server-command; is a supervisor restarting it?"_s
                                                      : u"--server-command "_s + s.serverCommand),
                        u"server-command"_s);
    }
}

} // namespace

Result<DrillVia> makeDrillVia(const DrillViaSettings &settings,
                              std::function<std::optional<qint64>(const QString &sku)> gateAvailable)
{
    const QUrl &u = settings.base;
    if (!u.isValid() || u.scheme() != u"http"_s || u.host().isEmpty() || (!u.path().isEmpty() && u.path() != u"/"_s)
        || u.hasQuery() || !u.userInfo().isEmpty())
        return fail(ErrorCode::InvalidArgument,
                    u"via must be the server's http://HOST:PORT, got %1"_s.arg(quoteForMessage(u.toString())), u"via"_s);
    DrillVia via;
    via.url = u.toString();
    via.channels = [settings]() -> Result<std::unique_ptr<DrillChannel>> {
        return std::unique_ptr<DrillChannel>(std::make_unique<HttpChannel>(settings));
    };
    via.checkServer = [settings, gateAvailable](const QString &sku) { return checkServer(settings, sku, gateAvailable); };
    if (!settings.serverPidFile.isEmpty())
        via.killServer = [settings](const std::function<void()> &whileDown) { return killAndRestart(settings, whileDown); };
    return via;
}

} // namespace flashstock
