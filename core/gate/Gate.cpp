#include "gate/Gate.h"

#include "Identifiers.h"
#include "gate/GateKeys.h"
#include "gate/RedisConnection.h"
#include "gate/ScriptError.h"
#include "gate/ScriptRegistry.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QByteArray num(qint64 v) { return QByteArray::number(v); }

/// KEYS of reserve-8.lua, in its order.
QList<QByteArray> reserveKeys(const QString &sku)
{
    return GateKeys::keys(sku, {"stock", "orders", "tokens", "held", "users", "sale", "paused", "counts"});
}

/// The counter field of `fs:{sku}:counts` that reserve-8.lua increments for a refusal.
const char *refusalCounter(Outcome outcome)
{
    switch (outcome) {
    case Outcome::OutOfStock: return "out_of_stock";
    case Outcome::LimitExceeded: return "limit_exceeded";
    case Outcome::SaleClosed: return "sale_closed";
    case Outcome::Paused: return "paused";
    default: return nullptr;
    }
}

TokenState parseState(const QByteArray &s)
{
    if (s == "held") return TokenState::Held;
    if (s == "settled") return TokenState::Settled;
    if (s == "released") return TokenState::Released;
    if (s == "sold") return TokenState::Sold;
    return TokenState::Unknown;
}

Result<void> checkToken(const QString &token)
{
    if (token.isEmpty() || token.size() > 256)
        return fail(ErrorCode::InvalidArgument,
                    u"a gate token has 1..256 characters, got %1"_s.arg(quoteForMessage(token)),
                    u"token"_s);
    return {};
}

Result<void> checkUser(const QString &user)
{
    if (user.isEmpty())
        return {};
    return checkName(user, u"user"_s, 128);
}

/// Server error replies that say "try again later" are Unavailable; the rest are Internal.
std::unexpected<Error> serverError(const RedisValue &reply, const QString &what)
{
    static const char *const transient[] = {"LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN",
                                            "CLUSTERDOWN", "OOM", "NOSCRIPT", "READONLY"};
    const QString msg = u"Redis refused %1: %2"_s.arg(what, QString::fromUtf8(reply.str));
    for (const char *prefix : transient)
        if (reply.isErrorWith(prefix))
            return fail(ErrorCode::Unavailable, msg, u"redis"_s);
    return fail(ErrorCode::Internal, msg);
}

std::unexpected<Error> unexpectedReply(const RedisValue &reply, const QString &what)
{
    if (reply.isError())
        return serverError(reply, what);
    return fail(ErrorCode::Internal, u"unexpected reply to %1"_s.arg(what));
}

Result<GateReservation> parseReservation(const RedisValue &r, const QString &sku)
{
    if (r.isError())
        return serverError(r, u"reserve of %1"_s.arg(sku));
    if (r.type != RedisValue::Type::Array || r.elements.size() != 4)
        return unexpectedReply(r, u"reserve of %1"_s.arg(sku));
    const int code = int(r.elements[0].integer);
    GateReservation out;
    if (code == int(ReserveAnswer::Reserved) || code == int(ReserveAnswer::Existing)) {
        out.code = code == int(ReserveAnswer::Reserved) ? GateCode::Reserved : GateCode::Existing;
        out.token = QString::fromUtf8(r.elements[1].str);
        out.qty = r.elements[2].toInteger();
        out.state = parseState(r.elements[3].str);
        return out;
    }
    if (const auto refusal = gateCodeForScriptError(code)) {
        out.code = *refusal;
        return out;
    }
    return scriptFailure(code, u"reserve-8.lua"_s, sku);
}

} // namespace

QString tokenStateName(TokenState state)
{
    switch (state) {
    case TokenState::Held: return u"held"_s;
    case TokenState::Settled: return u"settled"_s;
    case TokenState::Released: return u"released"_s;
    case TokenState::Sold: return u"sold"_s;
    case TokenState::Unknown: return u"unknown"_s;
    }
    return u"unknown"_s;
}

struct Gate::Private {
    explicit Private(RedisUrl u) : url(u), conn(std::move(u)) {}

    /// Connects if needed and, on a new connection, loads every script by SHA.
    Result<void> prepare()
    {
        if (auto c = conn.ensureConnected(); !c)
            return c;
        if (scriptsLoadedFor != conn.connectCount()) {
            auto loaded = ScriptRegistry::instance().loadAll(conn);
            if (!loaded && loaded.error().code == ErrorCode::Unavailable)
                return loaded;
            // Any other failure (e.g. LOADING) is retried on the call's NOSCRIPT path.
            if (loaded)
                scriptsLoadedFor = conn.connectCount();
        }
        return {};
    }

    Result<RedisValue> run(ScriptId id, const QList<QByteArray> &keys, const QList<QByteArray> &args)
    {
        if (auto p = prepare(); !p)
            return std::unexpected(p.error());
        return ScriptRegistry::instance().run(conn, id, keys, args);
    }

    /// Runs a script that answers one integer; negative codes become errors.
    Result<qint64> runCode(ScriptId id, const QString &sku, const QString &subject,
                           const QList<QByteArray> &keys, const QList<QByteArray> &args)
    {
        auto r = run(id, keys, args);
        if (!r)
            return std::unexpected(r.error());
        const QString name = ScriptRegistry::instance().script(id).fileName;
        if (r->type != RedisValue::Type::Integer)
            return unexpectedReply(*r, u"%1 for %2"_s.arg(name, sku));
        if (r->integer < 0)
            return scriptFailure(int(r->integer), name, subject);
        return r->integer;
    }

    /// One plain command on a key of `sku` (the SKU checked, connected first); `integer`
    /// also requires an integer reply, naming `what` otherwise.
    Result<RedisValue> keyCommand(const QString &sku, const QList<QByteArray> &argv, const char *what = nullptr)
    {
        if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
        if (auto p = prepare(); !p) return std::unexpected(p.error());
        auto r = conn.command(argv);
        if (r && what && r->type != RedisValue::Type::Integer)
            return unexpectedReply(*r, u"%1 of %2"_s.arg(QString::fromLatin1(what), sku));
        return r;
    }

    RedisUrl url;
    RedisConnection conn;
    int scriptsLoadedFor = -1; ///< connectCount() at which loadAll last succeeded
    int retentionSeconds = kDefaultTokenRetentionSeconds;
};

Gate::Gate(RedisUrl url)
    : d(std::make_unique<Private>(std::move(url)))
{
}

Gate::~Gate() = default;

const RedisUrl &Gate::url() const { return d->url; }
int Gate::connectCount() const { return d->conn.connectCount(); }
void Gate::setTokenRetentionSeconds(int seconds) { d->retentionSeconds = qMax(0, seconds); }

Result<void> Gate::connect() { return d->prepare(); }

Result<GateReservation> Gate::reserve(const QString &sku, const QString &order,
                                      const QString &user, qint64 qty)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    if (auto v = checkOrderId(order); !v) return std::unexpected(v.error());
    if (auto v = checkUser(user); !v) return std::unexpected(v.error());
    if (auto v = checkQuantity(qty); !v) return std::unexpected(v.error());
    auto r = d->run(ScriptId::Reserve, reserveKeys(sku), {order.toUtf8(), user.toUtf8(), num(qty), sku.toUtf8()});
    if (!r)
        return std::unexpected(r.error());
    return parseReservation(*r, sku);
}

Result<QList<GateReservation>> Gate::reserveBatch(const QString &sku,
                                                  const QList<GateReserveRequest> &requests)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    QList<QList<QByteArray>> argsList;
    argsList.reserve(requests.size());
    for (const GateReserveRequest &req : requests) {
        if (auto v = checkOrderId(req.order); !v) return std::unexpected(v.error());
        if (auto v = checkUser(req.user); !v) return std::unexpected(v.error());
        if (auto v = checkQuantity(req.qty); !v) return std::unexpected(v.error());
        argsList.append({req.order.toUtf8(), req.user.toUtf8(), num(req.qty), sku.toUtf8()});
    }
    if (auto p = d->prepare(); !p)
        return std::unexpected(p.error());
    auto replies = ScriptRegistry::instance().runBatch(d->conn, ScriptId::Reserve, reserveKeys(sku), argsList);
    if (!replies)
        return std::unexpected(replies.error());
    QList<GateReservation> out;
    out.reserve(replies->size());
    for (const RedisValue &r : *replies) {
        auto one = parseReservation(r, sku);
        if (!one)
            return std::unexpected(one.error());
        out.append(*one);
    }
    return out;
}

Result<void> Gate::settle(const QString &sku, const QString &token)
{
    if (auto v = checkSkuId(sku); !v) return v;
    if (auto v = checkToken(token); !v) return v;
    auto r = d->runCode(ScriptId::Settle, sku, token, GateKeys::keys(sku, {"tokens", "held", "settled"}),
                        {token.toUtf8()});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<void> Gate::markSold(const QString &sku, const QString &token)
{
    if (auto v = checkSkuId(sku); !v) return v;
    if (auto v = checkToken(token); !v) return v;
    auto r = d->runCode(ScriptId::MarkSold, sku, token,
                        GateKeys::keys(sku, {"tokens", "held", "settled", "done", "orders"}),
                        {token.toUtf8(), num(d->retentionSeconds)});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<bool> Gate::release(const QString &sku, const QString &token)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    if (auto v = checkToken(token); !v) return std::unexpected(v.error());
    auto r = d->runCode(ScriptId::Release, sku, token,
                        GateKeys::keys(sku, {"stock", "tokens", "held", "settled", "done", "users",
                                             "orders"}),
                        {token.toUtf8(), num(d->retentionSeconds)});
    if (!r)
        return std::unexpected(r.error());
    // Released while the stock key was absent: the next load from the book counts them (the
    // token is no longer held). Unchanged: released or sold before.
    return *r == int(ReleaseAnswer::Released) || *r == int(ReleaseAnswer::ReleasedNoKey);
}

Result<void> Gate::settleBatch(const QString &sku, const QList<QString> &tokens)
{
    if (auto v = checkSkuId(sku); !v) return v;
    QList<QList<QByteArray>> argsList;
    argsList.reserve(tokens.size());
    for (const QString &t : tokens) {
        if (auto v = checkToken(t); !v) return v;
        argsList.append({t.toUtf8()});
    }
    if (argsList.isEmpty())
        return {};
    if (auto p = d->prepare(); !p)
        return p;
    auto replies = ScriptRegistry::instance().runBatch(
        d->conn, ScriptId::Settle, GateKeys::keys(sku, {"tokens", "held", "settled"}), argsList);
    if (!replies)
        return std::unexpected(replies.error());
    for (qsizetype i = 0; i < replies->size(); ++i) {
        const RedisValue &r = replies->at(i);
        if (r.type != RedisValue::Type::Integer)
            return unexpectedReply(r, u"settle of %1"_s.arg(tokens[i]));
        if (r.integer < 0)
            return scriptFailure(int(r.integer), u"settle-3.lua"_s, tokens[i]);
    }
    return {};
}

Result<qint64> Gate::load(const QString &sku, qint64 bookAvailable, bool force)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    if (bookAvailable < 0)
        return fail(ErrorCode::InvalidArgument,
                    u"book available must be >= 0, got %1"_s.arg(bookAvailable), u"available"_s);
    auto r = d->run(ScriptId::Load, GateKeys::keys(sku, {"stock", "held", "tokens"}),
                    {num(bookAvailable), force ? QByteArrayLiteral("1") : QByteArrayLiteral("0")});
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() != 3)
        return unexpectedReply(*r, u"load of %1"_s.arg(sku));
    const qint64 code = r->elements[0].integer;
    if (code < 0)
        return scriptFailure(int(code), u"load-3.lua"_s, sku);
    return r->elements[1].integer;
}

Result<bool> Gate::adjust(const QString &sku, qint64 units)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    auto r = d->run(ScriptId::Adjust, GateKeys::keys(sku, {"stock"}), {num(units)});
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() != 2)
        return unexpectedReply(*r, u"adjust of %1"_s.arg(sku));
    const qint64 code = r->elements[0].integer;
    if (code < 0)
        return scriptFailure(int(code), u"adjust-1.lua"_s, sku);
    return code == int(AdjustAnswer::Adjusted);
}

Result<qint64> Gate::available(const QString &sku)
{
    auto r = d->keyCommand(sku, {QByteArrayLiteral("GET"), GateKeys::key(sku, "stock")});
    if (!r)
        return std::unexpected(r.error());
    if (r->type == RedisValue::Type::Nil)
        return -1;
    bool ok = false;
    const qint64 v = r->str.toLongLong(&ok);
    if (r->type != RedisValue::Type::String || !ok)
        return unexpectedReply(*r, u"GET stock of %1"_s.arg(sku));
    return v;
}

Result<GateCounts> Gate::counts(const QString &sku)
{
    auto r = d->keyCommand(sku, {QByteArrayLiteral("HGETALL"), GateKeys::key(sku, "counts")});
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() % 2 != 0)
        return unexpectedReply(*r, u"HGETALL counts of %1"_s.arg(sku));
    GateCounts out;
    const std::pair<const char *, qint64 GateCounts::*> fields[] = {
        {"reserved", &GateCounts::reserved},     {"out_of_stock", &GateCounts::outOfStock},
        {"limit_exceeded", &GateCounts::limitExceeded}, {"sale_closed", &GateCounts::saleClosed},
        {"paused", &GateCounts::paused}};
    for (qsizetype i = 0; i < r->elements.size(); i += 2) {
        for (const auto &[name, member] : fields) {
            if (r->elements[i].str != name)
                continue;
            bool ok = false;
            out.*member = r->elements[i + 1].str.toLongLong(&ok);
            if (!ok)
                return fail(ErrorCode::Internal, u"gate counter %1 of %2 is not a number"_s.arg(
                                                     QString::fromLatin1(name), sku));
        }
    }
    return out;
}

Result<qint64> Gate::heldCount(const QString &sku)
{
    auto r = d->keyCommand(sku, {QByteArrayLiteral("ZCARD"), GateKeys::key(sku, "held")}, "ZCARD held");
    if (!r)
        return std::unexpected(r.error());
    return r->integer;
}

Result<void> Gate::clearCounts(const QString &sku)
{
    auto r = d->keyCommand(sku, {QByteArrayLiteral("DEL"), GateKeys::key(sku, "counts")}, "DEL counts");
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<void> Gate::countRefusal(const QString &sku, Outcome outcome)
{
    if (auto v = checkSkuId(sku); !v) return v;
    const char *counter = refusalCounter(outcome);
    if (!counter)
        return fail(ErrorCode::InvalidArgument,
                    u"outcome: %1 is not a reserve refusal"_s.arg(outcomeWord(outcome)), u"outcome"_s);
    auto r = d->keyCommand(sku, {QByteArrayLiteral("HINCRBY"), GateKeys::key(sku, "counts"), counter,
                                 QByteArrayLiteral("1")},
                           "HINCRBY counts");
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<void> Gate::setSale(const QString &sku, const GateSale &sale)
{
    if (auto v = checkSkuId(sku); !v) return v;
    if (sale.startMs < 0 || sale.endMs < 0 || sale.perUserLimit < 0
        || (sale.endMs > 0 && sale.startMs > sale.endMs))
        return fail(ErrorCode::InvalidArgument,
                    u"sale window and limit must be >= 0 and start <= end"_s, u"sale"_s);
    auto r = d->runCode(ScriptId::SetSale, sku, sku, GateKeys::keys(sku, {"sale"}),
                        {sale.open ? QByteArrayLiteral("1") : QByteArrayLiteral("0"),
                         num(sale.startMs), num(sale.endMs), num(sale.perUserLimit)});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<void> Gate::clearSale(const QString &sku)
{
    if (auto v = checkSkuId(sku); !v) return v;
    auto r = d->runCode(ScriptId::ClearSale, sku, sku, GateKeys::keys(sku, {"sale"}), {});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<QStringList> Gate::openSaleSkus()
{
    if (auto p = d->prepare(); !p)
        return std::unexpected(p.error());
    const QByteArray pattern = GateKeys::key(u"*"_s, "sale");
    const QByteArray prefix = QByteArrayLiteral("fs:{"), suffix = QByteArrayLiteral("}:sale");
    QStringList open;
    QByteArray cursor = "0";
    do {
        auto page = d->conn.command({QByteArrayLiteral("SCAN"), cursor, QByteArrayLiteral("MATCH"), pattern,
                                     QByteArrayLiteral("COUNT"), QByteArrayLiteral("1000")});
        if (!page)
            return std::unexpected(page.error());
        if (page->type != RedisValue::Type::Array || page->elements.size() != 2
            || page->elements[1].type != RedisValue::Type::Array)
            return unexpectedReply(*page, u"SCAN of the sales"_s);
        cursor = page->elements[0].str;
        QList<QList<QByteArray>> reads;
        for (const RedisValue &key : std::as_const(page->elements[1].elements))
            reads.append({QByteArrayLiteral("HGET"), key.str, QByteArrayLiteral("open")});
        if (reads.isEmpty())
            continue;
        auto flags = d->conn.pipeline(reads);
        if (!flags)
            return std::unexpected(flags.error());
        for (qsizetype i = 0; i < flags->size(); ++i) {
            const QByteArray &key = reads[i][1];
            if ((*flags)[i].str == "1" && key.startsWith(prefix) && key.endsWith(suffix))
                open << QString::fromUtf8(key.mid(prefix.size(), key.size() - prefix.size() - suffix.size()));
        }
    } while (cursor != "0");
    open.sort();
    open.removeDuplicates(); // SCAN may return a key twice
    return open;
}

Result<qint64> Gate::setUserUnits(const QString &sku, const QHash<QString, qint64> &units)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    QList<QByteArray> args;
    args.reserve(units.size() * 2);
    for (auto it = units.cbegin(); it != units.cend(); ++it) {
        if (auto v = checkName(it.key(), u"user"_s, 128); !v) return std::unexpected(v.error());
        if (auto v = checkQuantity(it.value(), u"units"_s); !v) return std::unexpected(v.error());
        args << it.key().toUtf8() << num(it.value());
    }
    auto r = d->run(ScriptId::SetUsers, GateKeys::keys(sku, {"users"}), args);
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() != 2)
        return unexpectedReply(*r, u"set-users of %1"_s.arg(sku));
    if (r->elements[0].integer < 0)
        return scriptFailure(int(r->elements[0].integer), u"set-users-1.lua"_s, sku);
    return r->elements[1].integer;
}

Result<bool> Gate::claimRestore(const QString &sku, qint64 ttlMs)
{
    auto r = d->keyCommand(sku, {QByteArrayLiteral("SET"), GateKeys::key(sku, "restoring"), QByteArrayLiteral("1"),
                                 QByteArrayLiteral("NX"), QByteArrayLiteral("PX"), num(qMax<qint64>(1, ttlMs))});
    if (!r)
        return std::unexpected(r.error());
    if (r->type == RedisValue::Type::Nil)
        return false;
    if (r->type != RedisValue::Type::Status)
        return unexpectedReply(*r, u"SET restoring of %1"_s.arg(sku));
    return true;
}

Result<void> Gate::endRestore(const QString &sku)
{
    auto r = d->keyCommand(sku, {QByteArrayLiteral("DEL"), GateKeys::key(sku, "restoring")}, "DEL restoring");
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<void> Gate::setPaused(const QString &sku, bool paused)
{
    if (auto v = checkSkuId(sku); !v) return v;
    auto r = d->runCode(ScriptId::SetPaused, sku, sku, GateKeys::keys(sku, {"paused"}),
                        {paused ? QByteArrayLiteral("1") : QByteArrayLiteral("0")});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<QList<GateToken>> Gate::openTokens(const QString &sku)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    auto r = d->run(ScriptId::OpenTokens, GateKeys::keys(sku, {"held", "settled", "tokens"}), {});
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.isEmpty() || r->elements.size() % 2 != 1)
        return unexpectedReply(*r, u"open tokens of %1"_s.arg(sku));
    QList<GateToken> out;
    out.reserve(r->elements.size() / 2);
    for (qsizetype i = 1; i + 1 < r->elements.size(); i += 2) {
        GateToken t;
        t.token = QString::fromUtf8(r->elements[i].str);
        const QJsonObject rec = QJsonDocument::fromJson(r->elements[i + 1].str).object();
        t.order = rec.value(u"o"_s).toString();
        t.user = rec.value(u"u"_s).toString();
        t.qty = qint64(rec.value(u"q"_s).toDouble());
        t.createdMs = qint64(rec.value(u"t"_s).toDouble());
        t.state = parseState(rec.value(u"s"_s).toString().toUtf8());
        out.append(t);
    }
    return out;
}

Result<qint64> Gate::nowMs()
{
    if (auto p = d->prepare(); !p) return std::unexpected(p.error());
    auto r = d->conn.command({QByteArrayLiteral("TIME")});
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() != 2)
        return unexpectedReply(*r, u"TIME"_s);
    return r->elements[0].toInteger() * 1000 + r->elements[1].toInteger() / 1000;
}

GateHealth Gate::health()
{
    GateHealth h;
    // A new connection loads the scripts (as every call does); an existing one is only
    // inspected, so a flushed cache shows as scriptsLoaded == false.
    if (auto p = d->prepare(); !p) {
        h.detail = p.error().message;
        return h;
    }
    QElapsedTimer timer;
    timer.start();
    auto pong = d->conn.command({QByteArrayLiteral("PING")});
    h.roundTripUs = timer.nsecsElapsed() / 1000;
    if (!pong || pong->isError()) {
        h.detail = pong ? QString::fromUtf8(pong->str) : pong.error().message;
        return h;
    }
    h.reachable = true;
    auto loaded = ScriptRegistry::instance().allLoaded(d->conn);
    if (!loaded) {
        h.detail = loaded.error().message;
        return h;
    }
    h.scriptsLoaded = *loaded;
    if (!h.scriptsLoaded)
        h.detail = u"gate scripts are not in the server's script cache (flushed or restarted); "
                   "the next call loads them"_s;
    return h;
}

} // namespace flashstock
