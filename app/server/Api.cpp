#include "Api.h"

#include "AccessLog.h"
#include "ApiRequests.h"
#include "EngineWorkers.h"
#include "ContractJson.h"
#include "GateDispatcher.h"
#include "Identifiers.h"
#include "ServerLog.h"
#include "ServerMetrics.h"

#include <QElapsedTimer>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

enum Route { RouteReserve, RouteReserveBatch, RouteConfirm, RouteRelease, RouteOrder, RouteSku, RouteHealthz,
             RouteReadyz, RouteMetrics };

/// One route of API v1: its method, its name (metrics, access log), the scopes that open it
/// (any one of them; none = no token needed), those of them that reach every order (the
/// others reach only the orders their token created: Actor::Reach) and its body.
struct RouteSpec {
    Route route;
    const char *method;
    QString name; ///< a literal: copied without an allocation per request
    AccessScopes scopes;
    AccessScopes anyOrder;
    qint64 bodyLimit; ///< 0: no body
};

const RouteSpec kRoutes[] = {
    {RouteReserve, "POST", u"reserve"_s, AccessScope::Reserve, AccessScope::Operate, kBodyLimit},
    {RouteReserveBatch, "POST", u"reserve_batch"_s, AccessScope::Reserve, AccessScope::Operate, kBatchBodyLimit},
    {RouteConfirm, "POST", u"confirm"_s, AccessScope::Pay, AccessScope::Pay, kBodyLimit},
    {RouteRelease, "POST", u"release"_s, AccessScope::Reserve | AccessScope::Operate, AccessScope::Operate, kBodyLimit},
    {RouteOrder, "GET", u"order"_s, AccessScope::Reserve | AccessScope::Read | AccessScope::Operate,
     AccessScope::Read | AccessScope::Operate, 0},
    {RouteSku, "GET", u"sku"_s, AccessScope::Reserve | AccessScope::Read | AccessScope::Operate, {}, 0},
    {RouteHealthz, "GET", u"healthz"_s, {}, {}, 0},
    {RouteReadyz, "GET", u"readyz"_s, {}, {}, 0},
    {RouteMetrics, "GET", u"metrics"_s, AccessScope::Read, {}, 0},
};

/// The route of `path`, with its path argument (an order or SKU id) in `argument`. The
/// path's segments are views of it (no allocation per request).
const RouteSpec *match(QByteArrayView path, QString &argument)
{
    // Split at '/' as QByteArray::split would; no route has more than 5 segments.
    QByteArrayView p[6];
    qsizetype n = 0;
    for (qsizetype from = 0;;) {
        if (n == qsizetype(std::size(p)))
            return nullptr;
        const qsizetype slash = path.indexOf('/', from);
        p[n++] = path.sliced(from, (slash < 0 ? path.size() : slash) - from);
        if (slash < 0)
            break;
        from = slash + 1;
    }
    auto spec = [](Route r) { return &kRoutes[r]; };
    if (n < 2 || !p[0].isEmpty())
        return nullptr;
    if (n == 2) {
        if (p[1] == "healthz") return spec(RouteHealthz);
        if (p[1] == "readyz") return spec(RouteReadyz);
        if (p[1] == "metrics") return spec(RouteMetrics);
        return nullptr;
    }
    if (p[1] != "v1")
        return nullptr;
    if (p[2] == "reservations") {
        if (n == 3) return spec(RouteReserve);
        if (n == 4 && p[3] == "batch") return spec(RouteReserveBatch);
        return nullptr;
    }
    if ((p[2] == "orders" || p[2] == "skus") && n >= 4) {
        argument = QString::fromUtf8(p[3]);
        if (p[2] == "skus")
            return n == 4 ? spec(RouteSku) : nullptr;
        if (n == 4) return spec(RouteOrder);
        if (n == 5 && p[4] == "confirm") return spec(RouteConfirm);
        if (n == 5 && p[4] == "release") return spec(RouteRelease);
    }
    return nullptr;
}

HttpReply jsonReply(int status, const QJsonObject &body, const QString &result)
{
    HttpReply r;
    r.status = status;
    r.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    r.result = result;
    return r;
}

int statusFor(ErrorCode code)
{
    switch (code) {
    case ErrorCode::InvalidArgument: return MHD_HTTP_BAD_REQUEST;
    case ErrorCode::NotFound: return MHD_HTTP_NOT_FOUND;
    case ErrorCode::NotPermitted: return MHD_HTTP_FORBIDDEN;
    case ErrorCode::Unavailable: return MHD_HTTP_SERVICE_UNAVAILABLE;
    case ErrorCode::Conflict: return MHD_HTTP_CONFLICT;
    case ErrorCode::Internal: return MHD_HTTP_INTERNAL_SERVER_ERROR;
    // Nobody knows yet whether it happened: the same request again (same order, same
    // payment) is idempotent and answers what the book holds.
    case ErrorCode::OutcomeUnknown: return MHD_HTTP_SERVICE_UNAVAILABLE;
    }
    return MHD_HTTP_INTERNAL_SERVER_ERROR;
}

void retryLater(HttpReply &r)
{
    r.headers << std::pair{QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1")};
}

/// The connection closes after this answer (a draining server keeps none open).
void closeAfter(HttpReply &r)
{
    r.headers << std::pair{QByteArrayLiteral("Connection"), QByteArrayLiteral("close")};
}

HttpReply errorReply(const Error &error, int status = 0)
{
    HttpReply r = jsonReply(status ? status : statusFor(error.code), errorJson(error), errorCodeName(error.code));
    if (r.status == MHD_HTTP_SERVICE_UNAVAILABLE)
        retryLater(r);
    return r;
}

HttpReply errorReply(int status, ErrorCode code, const QString &message, const QString &field = {})
{
    return errorReply(Error{code, message, field}, status);
}

/// A reserve's answer: 200 with its word; gate_unavailable is 503 with Retry-After. On the
/// request thread that writes it out (its own ReserveJsonWriter).
HttpReply reserveReply(const Result<ReserveResult> &result)
{
    if (!result)
        return errorReply(result.error());
    thread_local ReserveJsonWriter writer;
    HttpReply r;
    r.body = writer.write(*result);
    r.result = outcomeWord(result->outcome);
    if (result->outcome == Outcome::GateUnavailable) {
        r.status = MHD_HTTP_SERVICE_UNAVAILABLE;
        retryLater(r);
    }
    return r;
}

/// `application/json`, optionally with `charset=utf-8` (case-insensitive; views of the
/// header, no allocation).
bool isJson(QByteArrayView contentType)
{
    qsizetype semicolon = contentType.indexOf(';');
    if (contentType.first(semicolon < 0 ? contentType.size() : semicolon).trimmed().compare("application/json",
                                                                                             Qt::CaseInsensitive) != 0)
        return false;
    while (semicolon >= 0) {
        const qsizetype from = semicolon + 1;
        semicolon = contentType.indexOf(';', from);
        const QByteArrayView param
            = contentType.sliced(from, (semicolon < 0 ? contentType.size() : semicolon) - from).trimmed();
        if (param.size() >= 8 && param.first(8).compare("charset=", Qt::CaseInsensitive) == 0
            && param.compare("charset=utf-8", Qt::CaseInsensitive) != 0
            && param.compare("charset=\"utf-8\"", Qt::CaseInsensitive) != 0)
            return false;
    }
    return true;
}

/// The token whose secret is `presented` in `tokens` (AccessTokenSet::find). Each request
/// thread remembers the last one it found, with the snapshot it was found in: a storefront
/// sends the same secret with every request, and its SHA-256 need not be made again for
/// each (docs/benchmarks.md). A new snapshot (every token refresh) forgets it, so a revoked token is
/// refused as soon as before. The secret is compared in constant time, as find() compares.
const AccessToken *findToken(const std::shared_ptr<const AccessTokenSet> &tokens, QByteArrayView presented)
{
    struct Last {
        std::shared_ptr<const AccessTokenSet> tokens;
        QByteArray presented;
        const AccessToken *token = nullptr;
    };
    thread_local Last last;
    if (last.tokens == tokens && constantTimeEquals(last.presented, presented))
        return last.token;
    const AccessToken *token = tokens->find(presented);
    if (token)
        last = Last{tokens, presented.toByteArray(), token};
    return token;
}

/// Counts the answers of one batch and sends them all when the last one is in.
class BatchAnswers {
public:
    BatchAnswers(qsizetype size, std::shared_ptr<PendingReply> reply)
        : m_results(size)
        , m_left(size)
        , m_reply(std::move(reply))
    {
    }
    void set(qsizetype index, const QJsonObject &answer)
    {
        std::lock_guard lock(m_mutex);
        m_results[index] = answer;
        if (--m_left > 0)
            return;
        QJsonArray results;
        for (const QJsonObject &o : std::as_const(m_results))
            results.append(o);
        m_reply->send(jsonReply(MHD_HTTP_OK, QJsonObject{{u"results"_s, results}}, u"batch"_s));
    }

private:
    std::mutex m_mutex;
    QList<QJsonObject> m_results;
    qsizetype m_left;
    std::shared_ptr<PendingReply> m_reply;
};

} // namespace

Api::Api(Parts parts)
    : m_p(parts)
{
}

HttpReply Api::drainingReply()
{
    HttpReply r = errorReply(MHD_HTTP_SERVICE_UNAVAILABLE, ErrorCode::Unavailable,
                             u"draining: the server is shutting down; retry later or on another server"_s);
    r.result = u"draining"_s;
    closeAfter(r);
    return r;
}

HttpReply Api::unfinishedReply()
{
    HttpReply r = errorReply(MHD_HTTP_SERVICE_UNAVAILABLE, ErrorCode::OutcomeUnknown,
                             u"the server stopped before the book and the gate answered this request: it may or may "
                             u"not have happened; send the same request again"_s);
    closeAfter(r);
    return r;
}

HeadDecision Api::onHead(const HttpHead &head)
{
    HeadDecision d;
    const RouteSpec *spec = match(head.path, d.argument);
    if (!spec) {
        d.reply = errorReply(MHD_HTTP_NOT_FOUND, ErrorCode::NotFound,
                             u"path: no route %1 (see the README's \"Serving storefronts\")"_s.arg(
                                 quoteForMessage(QString::fromUtf8(head.path))),
                             u"path"_s);
        return d;
    }
    d.route = spec->route;
    d.routeName = spec->name;
    if (head.method != spec->method) {
        HttpReply r = errorReply(MHD_HTTP_METHOD_NOT_ALLOWED, ErrorCode::InvalidArgument,
                                 u"method: %1 takes %2, not %3"_s.arg(QString::fromUtf8(head.path),
                                                                        QString::fromLatin1(spec->method),
                                                                        quoteForMessage(QString::fromLatin1(head.method))),
                                 u"method"_s);
        r.headers << std::pair{QByteArrayLiteral("Allow"), QByteArray(spec->method)};
        d.reply = r;
        return d;
    }
    if (m_draining && spec->route != RouteHealthz) {
        d.reply = drainingReply();
        return d;
    }
    if (spec->scopes && !m_p.noAuth) {
        const QByteArrayView authorization = head.header(MHD_HTTP_HEADER_AUTHORIZATION);
        const bool bearer = authorization.size() > 7 && authorization.first(7).compare("bearer ", Qt::CaseInsensitive) == 0;
        // Tokens not read from the book for longer than a revoke may take are none at all.
        auto tokens = m_p.tokens.currentWithin(kTokensTrustedFor);
        const AccessToken *token = bearer && tokens ? findToken(tokens, authorization.sliced(7).trimmed()) : nullptr;
        if (!token) {
            const bool stale = bearer && !tokens && m_p.tokens.current();
            if (stale)
                ServerLog::trouble(u"tokens-stale"_s,
                                   u"tokens: last read from the book %1 s ago, more than the %2 s a revoke may take: "
                                   u"refusing every bearer token (401) until the book answers"_s.arg(
                                       QString::number(int(m_p.tokens.ageSeconds())),
                                       QString::number(kTokensTrustedFor.count())));
            HttpReply r = errorReply(MHD_HTTP_UNAUTHORIZED, ErrorCode::NotPermitted,
                                     stale ? u"authorization: the server cannot read its bearer tokens from the book "
                                             u"now, so it takes none (a revoked token must not pass); retry when the "
                                             u"book is back"_s
                                     : bearer ? u"authorization: the bearer token is unknown or revoked"_s
                                              : u"authorization: this route needs a bearer token (Authorization: "
                                                u"Bearer ...; flashstock-cli token add)"_s,
                                     u"authorization"_s);
            r.headers << std::pair{QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer")};
            d.reply = r;
            return d;
        }
        d.principal = token->name;
        d.scopes = int(token->scopes.toInt());
        if (!(token->scopes & spec->scopes)) {
            d.reply = errorReply(MHD_HTTP_FORBIDDEN, ErrorCode::NotPermitted,
                                 u"authorization: token %1 (scopes %2) may not %3: it needs scope %4"_s.arg(
                                     token->name, accessScopesText(token->scopes), spec->name,
                                     accessScopeNames(spec->scopes).join(u" or "_s)),
                                 u"authorization"_s);
            return d;
        }
    }
    if (spec->route == RouteSku || spec->route == RouteOrder || spec->route == RouteConfirm
        || spec->route == RouteRelease) {
        auto valid = spec->route == RouteSku ? checkSkuId(d.argument) : checkOrderId(d.argument);
        if (!valid) {
            d.reply = errorReply(valid.error());
            return d;
        }
    }
    d.bodyLimit = spec->bodyLimit;
    if (spec->bodyLimit > 0) {
        if (!isJson(head.header(MHD_HTTP_HEADER_CONTENT_TYPE))) {
            d.reply = errorReply(MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, ErrorCode::InvalidArgument,
                                 u"content-type: the body must be application/json (UTF-8), got %1"_s.arg(
                                     quoteForMessage(QString::fromLatin1(head.header(MHD_HTTP_HEADER_CONTENT_TYPE)))),
                                 u"content-type"_s);
            return d;
        }
        bool ok = false;
        const qint64 length = head.header(MHD_HTTP_HEADER_CONTENT_LENGTH).toLongLong(&ok);
        if (ok && length > spec->bodyLimit) {
            HttpReply r = errorReply(MHD_HTTP_CONTENT_TOO_LARGE, ErrorCode::InvalidArgument,
                                     u"body: %1 bytes, more than the %2 bytes this route takes"_s.arg(length).arg(
                                         spec->bodyLimit),
                                     u"body"_s);
            r.result = u"too_large"_s;
            d.reply = r;
        }
    }
    return d;
}

Actor Api::actorOf(const HeadDecision &d) const
{
    if (d.principal.isEmpty())
        return m_p.self;
    const bool anyOrder = AccessScopes::fromInt(d.scopes) & kRoutes[d.route].anyOrder;
    return Actor{d.principal, m_p.self.source, anyOrder ? Actor::Reach::AnyOrder : Actor::Reach::OwnOrders};
}

void Api::onRequest(const HttpHead &, const HeadDecision &d, QByteArray body, std::shared_ptr<PendingReply> reply)
{
    switch (Route(d.route)) {
    case RouteReserve: reserve(body, actorOf(d), std::move(reply)); return;
    case RouteReserveBatch: reserveBatch(body, actorOf(d), std::move(reply)); return;
    case RouteConfirm: confirmOrRelease(true, d.argument, body, actorOf(d), std::move(reply)); return;
    case RouteRelease: confirmOrRelease(false, d.argument, body, actorOf(d), std::move(reply)); return;
    case RouteOrder:
    case RouteSku: read(d.route, d.argument, actorOf(d), std::move(reply)); return;
    case RouteHealthz: reply->send(jsonReply(MHD_HTTP_OK, QJsonObject{{u"alive"_s, true}}, u"alive"_s)); return;
    case RouteReadyz: reply->send(readyz()); return;
    case RouteMetrics: {
        HttpReply r;
        r.contentType = "text/plain; version=0.0.4; charset=utf-8";
        r.body = m_p.metrics.text();
        r.result = u"metrics"_s;
        reply->send(r);
        return;
    }
    }
}

void Api::onDone(const HttpHead &head, const HeadDecision &d, const HttpReply &reply, double seconds)
{
    m_p.metrics.requestDone(d.routeName, reply.status, reply.result, seconds);
    if (m_p.accessLog.isOpen())
        m_p.accessLog.write(head.client(), head.method, head.path, reply.status, reply.result, seconds, d.principal);
}

void Api::onConnectionRefused(const QString &reason)
{
    m_p.metrics.connectionRefused(reason);
}

void Api::reserve(const QByteArray &body, const Actor &by, std::shared_ptr<PendingReply> reply)
{
    auto object = parseObject(body);
    auto request = object ? reservationFrom(*object) : Result<ReserveRequest>(std::unexpected(object.error()));
    if (!request) {
        reply->send(errorReply(request.error()));
        return;
    }
    request->actor = by;
    // The dispatcher hands the result over; its JSON is made on the request thread.
    m_p.dispatcher.submit(std::move(*request), [reply](Result<ReserveResult> r) {
        reply->sendMade([r = std::move(r)] { return reserveReply(r); });
    });
}

void Api::reserveBatch(const QByteArray &body, const Actor &by, std::shared_ptr<PendingReply> reply)
{
    auto object = parseObject(body);
    auto items = object ? batchFrom(*object, kMaxBatchReservations) : Result<QJsonArray>(std::unexpected(object.error()));
    if (!items) {
        reply->send(errorReply(items.error()));
        return;
    }
    auto answers = std::make_shared<BatchAnswers>(items->size(), std::move(reply));
    for (qsizetype i = 0; i < items->size(); ++i) {
        auto request = reservationFrom(items->at(i));
        if (!request) {
            answers->set(i, errorJson(request.error()));
            continue;
        }
        request->actor = by;
        m_p.dispatcher.submit(std::move(*request), [answers, i](Result<ReserveResult> r) {
            answers->set(i, r ? reserveJson(*r) : errorJson(r.error()));
        });
    }
}

void Api::confirmOrRelease(bool confirm, const QString &order, const QByteArray &body, const Actor &by,
                           std::shared_ptr<PendingReply> reply)
{
    const QString field = confirm ? u"payment"_s : u"reason"_s;
    auto object = parseObject(body);
    Result<QString> value = object ? requiredString(*object, field) : Result<QString>(std::unexpected(object.error()));
    if (value) {
        if (auto only = onlyFields(*object, {field}); !only)
            value = std::unexpected(only.error());
        else if (auto checked = confirm ? checkPaymentRef(*value) : checkReleaseReason(*value); !checked)
            value = std::unexpected(checked.error());
    }
    if (!value) {
        reply->send(errorReply(value.error()));
        return;
    }
    m_p.workers.submit([confirm, order, v = *value, by, reply, metrics = &m_p.metrics](Engine &engine) {
        QElapsedTimer book;
        book.start();
        const Result<OrderChange> change = confirm ? engine.confirm(order, v, by) : engine.release(order, v, by);
        metrics->bookCall(confirm ? u"confirm"_s : u"release"_s, double(book.nsecsElapsed()) / 1e9);
        reply->send(change ? jsonReply(MHD_HTTP_OK, orderChangeJson(*change), outcomeWord(change->outcome))
                           : errorReply(change.error()));
    });
}

void Api::read(int route, const QString &id, const Actor &by, std::shared_ptr<PendingReply> reply)
{
    m_p.workers.submit([route, id, by, reply, metrics = &m_p.metrics](Engine &engine) {
        QElapsedTimer book;
        book.start();
        HttpReply r;
        if (route == RouteOrder) {
            auto order = engine.book().order(id, by);
            r = order ? jsonReply(MHD_HTTP_OK, orderJson(*order), u"found"_s) : errorReply(order.error());
        } else {
            auto levels = engine.book().levels(id);
            r = levels ? jsonReply(MHD_HTTP_OK, skuJson(*levels, engine.gateLevels(id)), u"found"_s)
                       : errorReply(levels.error());
        }
        metrics->bookCall(u"read"_s, double(book.nsecsElapsed()) / 1e9);
        reply->send(r);
    });
}

HttpReply Api::readyz() const
{
    auto ready = m_p.readiness.current();
    QStringList down = ready ? ready->down : QStringList{u"starting: no readiness probe yet"_s};
    if (m_draining)
        down.prepend(u"draining: the server is shutting down"_s);
    if (m_p.readiness.ageSeconds() > 5)
        down << u"probe: the readiness probe is %1 s old"_s.arg(int(m_p.readiness.ageSeconds()));
    QJsonObject body{{u"ready"_s, down.isEmpty()}, {u"down"_s, QJsonArray::fromStringList(down)}};
    if (ready) {
        body.insert(u"book"_s, ready->book);
        body.insert(u"gate"_s, ready->gateConfigured ? QJsonValue(ready->gate) : QJsonValue(u"none"_s));
        body.insert(u"scripts_loaded"_s, ready->scripts);
        // Which of the book URL's servers is the primary by position, never its address.
        if (const auto &rep = ready->replication)
            body.insert(u"book_replication"_s,
                        QJsonObject{{u"primary_node"_s, rep->primaryNode},
                                    {u"nodes"_s, rep->nodes},
                                    {u"state"_s, rep->stateName()},
                                    {u"synchronous"_s, rep->synchronous()}});
    }
    HttpReply r = jsonReply(down.isEmpty() ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, body,
                            down.isEmpty() ? u"ready"_s : u"not_ready"_s);
    if (!down.isEmpty())
        retryLater(r);
    return r;
}

} // namespace flashstock::server
