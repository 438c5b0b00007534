#include "gate/Gate.h"

#include "Identifiers.h"
#include "gate/GateKeys.h"
#include "gate/GateRouter.h"
#include "gate/HashSlot.h"
#include "gate/RedisConnection.h"
#include "gate/ScriptError.h"
#include "gate/ScriptRegistry.h"

#include <QJsonDocument>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QByteArray num(qint64 v) { return QByteArray::number(v); }

/// KEYS of reserve-2.lua and settle-2.lua, in their order.
QList<QByteArray> reserveKeys(const QString &sku) { return GateKeys::keys(sku, {"gate", "open"}); }
/// ARGV of reserve-2.lua for `line`.
QList<QByteArray> reserveArgs(const GateReserveLine &line)
{
    return {line.order.toUtf8(), line.user.toUtf8(), num(line.qty), line.sku.toUtf8()};
}
/// KEYS of release-3.lua and mark-sold-3.lua.
QList<QByteArray> finishKeys(const QString &sku) { return GateKeys::keys(sku, {"gate", "open", "done"}); }

/// The counter fields of `fs:{sku}:gate` (see reserve-2.lua) and where GateCounts keeps them.
constexpr std::pair<const char *, qint64 GateCounts::*> kCounterFields[] = {
    {"n:reserved", &GateCounts::reserved},         {"n:out_of_stock", &GateCounts::outOfStock},
    {"n:limit_exceeded", &GateCounts::limitExceeded}, {"n:sale_closed", &GateCounts::saleClosed},
    {"n:paused", &GateCounts::paused}};

/// The counter field that reserve-2.lua increments for a refusal.
const char *refusalCounter(Outcome outcome)
{
    switch (outcome) {
    case Outcome::OutOfStock: return "n:out_of_stock";
    case Outcome::LimitExceeded: return "n:limit_exceeded";
    case Outcome::SaleClosed: return "n:sale_closed";
    case Outcome::Paused: return "n:paused";
    default: return nullptr;
    }
}

/// The file name of script `id`, for messages.
QString scriptName(ScriptId id) { return ScriptRegistry::instance().script(id).fileName; }

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

/// The input checks of one reserve.
Result<void> checkLine(const GateReserveLine &l)
{
    if (auto v = checkSkuId(l.sku); !v) return v;
    if (auto v = checkOrderId(l.order); !v) return v;
    if (auto v = checkUser(l.user); !v) return v;
    return checkQuantity(l.qty);
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
    return scriptFailure(code, scriptName(ScriptId::Reserve), sku);
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
    explicit Private(RedisUrl u) : router(std::move(u)) {}

    /// The command that runs script `id` on the node that owns its keys' slot.
    static GateCommand scriptCommand(ScriptId id, const QList<QByteArray> &keys, const QList<QByteArray> &args)
    {
        return GateCommand{HashSlot::ofKey(keys.first()), ScriptRegistry::instance().evalshaArgv(id, keys, args),
                           id != ScriptId::OpenTokens, id};
    }

    /// Gate::reservePipeline; `checked`: every line passed checkLine already (reserveBatch).
    QList<Result<GateReservation>> reserves(const QList<GateReserveLine> &lines, bool checked);

    Result<RedisValue> run(ScriptId id, const QList<QByteArray> &keys, const QList<QByteArray> &args)
    {
        return router.execute(scriptCommand(id, keys, args));
    }

    /// Runs a script that answers one integer; negative codes become errors.
    Result<qint64> runCode(ScriptId id, const QString &sku, const QString &subject,
                           const QList<QByteArray> &keys, const QList<QByteArray> &args)
    {
        return codeOf(run(id, keys, args), id, sku, subject);
    }

    /// The reply of a script that answers one integer: negative codes become errors.
    static Result<qint64> codeOf(const Result<RedisValue> &r, ScriptId id, const QString &sku, const QString &subject)
    {
        if (!r)
            return std::unexpected(r.error());
        const QString name = scriptName(id);
        if (r->type != RedisValue::Type::Integer)
            return unexpectedReply(*r, u"%1 for %2"_s.arg(name, sku));
        if (r->integer < 0)
            return scriptFailure(int(r->integer), name, subject);
        return r->integer;
    }

    /// One plain command on a key of `sku` (argv[1]; the SKU checked first); `what` also
    /// requires an integer reply, naming `what` otherwise. `writes`: see GateCommand.
    Result<RedisValue> keyCommand(const QString &sku, const QList<QByteArray> &argv, bool writes,
                                  const char *what = nullptr)
    {
        if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
        auto r = router.execute(GateCommand{HashSlot::ofKey(argv.at(1)), argv, writes, std::nullopt});
        if (r && what && r->type != RedisValue::Type::Integer)
            return unexpectedReply(*r, u"%1 of %2"_s.arg(QString::fromLatin1(what), sku));
        return r;
    }

    GateRouter router;
    int retentionSeconds = kDefaultTokenRetentionSeconds;
};

Gate::Gate(RedisUrl url)
    : d(std::make_unique<Private>(std::move(url)))
{
}

Gate::~Gate() = default;

const RedisUrl &Gate::url() const { return d->router.url(); }
int Gate::connectCount() const { return d->router.connectCount(); }
void Gate::setSlotMapListener(std::function<void(const SlotMap &)> listener)
{
    d->router.setMapListener(std::move(listener));
}
void Gate::setTokenRetentionSeconds(int seconds) { d->retentionSeconds = qMax(0, seconds); }

Result<void> Gate::connect() { return d->router.connect(); }

Result<GateReservation> Gate::reserve(const QString &sku, const QString &order,
                                      const QString &user, qint64 qty)
{
    return reservePipeline({GateReserveLine{sku, order, user, qty}}).first();
}

GateScriptCall Gate::reserveCall(const GateReserveLine &line)
{
    return {ScriptRegistry::instance().script(ScriptId::Reserve).sha1, reserveKeys(line.sku), reserveArgs(line)};
}

QList<Result<GateReservation>> Gate::reservePipeline(const QList<GateReserveLine> &lines)
{
    return d->reserves(lines, false);
}

QList<Result<GateReservation>> Gate::Private::reserves(const QList<GateReserveLine> &lines, bool checked)
{
    QList<Result<GateReservation>> out(lines.size(), fail(ErrorCode::Internal, u"not sent"_s));
    QList<GateCommand> commands;
    commands.reserve(lines.size());
    QList<qsizetype> sent; // index into `lines` of each command
    sent.reserve(lines.size());
    // The lines of one SKU share its keys (a crowd's pipeline is one SKU): made once per run
    // of lines of the same SKU, not once per line.
    const QString *keysSku = nullptr;
    QList<QByteArray> keys;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const GateReserveLine &l = lines[i];
        if (!checked) {
            if (auto valid = checkLine(l); !valid) {
                out[i] = std::unexpected(valid.error());
                continue;
            }
        }
        if (!keysSku || *keysSku != l.sku) {
            keysSku = &l.sku;
            keys = reserveKeys(l.sku);
        }
        commands.append(scriptCommand(ScriptId::Reserve, keys, reserveArgs(l)));
        sent.append(i);
    }
    const QList<Result<RedisValue>> replies = router.execute(commands);
    for (qsizetype k = 0; k < replies.size(); ++k) {
        const qsizetype i = sent[k];
        out[i] = replies[k] ? parseReservation(*replies[k], lines[i].sku) : std::unexpected(replies[k].error());
    }
    return out;
}

Result<QList<GateReservation>> Gate::reserveBatch(const QString &sku,
                                                  const QList<GateReserveRequest> &requests)
{
    QList<GateReserveLine> lines;
    lines.reserve(requests.size());
    for (const GateReserveRequest &req : requests) {
        const GateReserveLine line{sku, req.order, req.user, req.qty};
        // A malformed request fails the whole batch before anything is sent.
        if (auto valid = checkLine(line); !valid)
            return std::unexpected(valid.error());
        lines.append(line);
    }
    QList<GateReservation> out;
    out.reserve(lines.size());
    for (const Result<GateReservation> &one : d->reserves(lines, true)) {
        if (!one)
            return std::unexpected(one.error());
        out.append(*one);
    }
    return out;
}

Result<void> Gate::settle(const QString &sku, const QString &token)
{
    return settlePipeline({GateTokenRef{sku, token}}).first();
}

QList<Result<void>> Gate::settlePipeline(const QList<GateTokenRef> &tokens)
{
    QList<Result<void>> out(tokens.size());
    QList<GateCommand> commands;
    QList<qsizetype> sent; // index into `tokens` of each command
    for (qsizetype i = 0; i < tokens.size(); ++i) {
        const GateTokenRef &t = tokens[i];
        if (auto v = checkSkuId(t.sku); !v) {
            out[i] = v;
            continue;
        }
        if (auto v = checkToken(t.token); !v) {
            out[i] = v;
            continue;
        }
        commands.append(Private::scriptCommand(ScriptId::Settle, reserveKeys(t.sku), {t.token.toUtf8()}));
        sent.append(i);
    }
    const QList<Result<RedisValue>> replies = commands.isEmpty() ? QList<Result<RedisValue>>{}
                                                                 : d->router.execute(commands);
    for (qsizetype k = 0; k < replies.size(); ++k) {
        const GateTokenRef &t = tokens[sent[k]];
        if (auto code = Private::codeOf(replies[k], ScriptId::Settle, t.sku, t.token); !code)
            out[sent[k]] = std::unexpected(code.error());
    }
    return out;
}

Result<void> Gate::markSold(const QString &sku, const QString &token)
{
    if (auto v = checkSkuId(sku); !v) return v;
    if (auto v = checkToken(token); !v) return v;
    auto r = d->runCode(ScriptId::MarkSold, sku, token, finishKeys(sku),
                        {token.toUtf8(), num(d->retentionSeconds)});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<bool> Gate::release(const QString &sku, const QString &token)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    if (auto v = checkToken(token); !v) return std::unexpected(v.error());
    auto r = d->runCode(ScriptId::Release, sku, token, finishKeys(sku),
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
    QList<GateTokenRef> refs;
    refs.reserve(tokens.size());
    for (const QString &t : tokens) {
        // A malformed token fails the whole batch before anything is sent.
        if (auto v = checkToken(t); !v) return v;
        refs.append(GateTokenRef{sku, t});
    }
    for (const Result<void> &one : settlePipeline(refs))
        if (!one)
            return one;
    return {};
}

Result<qint64> Gate::load(const QString &sku, qint64 bookAvailable, bool force, qint64 sinceMs,
                          const QStringList &booked)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    if (bookAvailable < 0)
        return fail(ErrorCode::InvalidArgument,
                    u"book available must be >= 0, got %1"_s.arg(bookAvailable), u"available"_s);
    if (sinceMs < -1)
        return fail(ErrorCode::InvalidArgument, u"snapshot ms must be >= -1, got %1"_s.arg(sinceMs), u"since"_s);
    QList<QByteArray> argv{num(bookAvailable), force ? QByteArrayLiteral("1") : QByteArrayLiteral("0"), num(sinceMs)};
    for (const QString &token : booked)
        argv.append(token.toUtf8());
    auto r = d->run(ScriptId::Load, finishKeys(sku), argv);
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() != 3)
        return unexpectedReply(*r, u"load of %1"_s.arg(sku));
    const qint64 code = r->elements[0].integer;
    if (code < 0)
        return scriptFailure(int(code), scriptName(ScriptId::Load), sku);
    return r->elements[1].integer;
}

Result<bool> Gate::adjust(const QString &sku, qint64 units)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    auto r = d->run(ScriptId::Adjust, GateKeys::keys(sku, {"gate"}), {num(units)});
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() != 2)
        return unexpectedReply(*r, u"adjust of %1"_s.arg(sku));
    const qint64 code = r->elements[0].integer;
    if (code < 0)
        return scriptFailure(int(code), scriptName(ScriptId::Adjust), sku);
    return code == int(AdjustAnswer::Adjusted);
}

Result<qint64> Gate::available(const QString &sku)
{
    auto r = d->keyCommand(sku, {QByteArrayLiteral("HGET"), GateKeys::key(sku, "gate"), QByteArrayLiteral("available")},
                           false);
    if (!r)
        return std::unexpected(r.error());
    if (r->type == RedisValue::Type::Nil)
        return -1;
    bool ok = false;
    const qint64 v = r->str.toLongLong(&ok);
    if (r->type != RedisValue::Type::String || !ok)
        return unexpectedReply(*r, u"HGET available of %1"_s.arg(sku));
    return v;
}

Result<GateCounts> Gate::counts(const QString &sku)
{
    QList<QByteArray> argv{QByteArrayLiteral("HMGET"), GateKeys::key(sku, "gate")};
    for (const auto &[name, member] : kCounterFields)
        argv.append(name);
    auto r = d->keyCommand(sku, argv, false);
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() != qsizetype(std::size(kCounterFields)))
        return unexpectedReply(*r, u"HMGET counters of %1"_s.arg(sku));
    GateCounts out;
    for (qsizetype i = 0; i < r->elements.size(); ++i) {
        const RedisValue &v = r->elements[i];
        if (v.type == RedisValue::Type::Nil)
            continue;
        bool ok = false;
        out.*kCounterFields[i].second = v.str.toLongLong(&ok);
        if (!ok)
            return fail(ErrorCode::Internal, u"gate counter %1 of %2 is not a number"_s.arg(
                                                 QString::fromLatin1(kCounterFields[i].first), sku));
    }
    return out;
}

Result<qint64> Gate::heldCount(const QString &sku)
{
    auto r = d->keyCommand(sku, {QByteArrayLiteral("HGET"), GateKeys::key(sku, "open"), QByteArrayLiteral("#held")},
                           false);
    if (!r)
        return std::unexpected(r.error());
    if (r->type == RedisValue::Type::Nil)
        return 0;
    bool ok = false;
    const qint64 held = r->str.toLongLong(&ok);
    if (r->type != RedisValue::Type::String || !ok)
        return unexpectedReply(*r, u"HGET #held of %1"_s.arg(sku));
    return held;
}

Result<void> Gate::clearCounts(const QString &sku)
{
    QList<QByteArray> argv{QByteArrayLiteral("HDEL"), GateKeys::key(sku, "gate")};
    for (const auto &[name, member] : kCounterFields)
        argv.append(name);
    auto r = d->keyCommand(sku, argv, true, "HDEL counters");
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
    auto r = d->keyCommand(sku, {QByteArrayLiteral("HINCRBY"), GateKeys::key(sku, "gate"), counter,
                                 QByteArrayLiteral("1")},
                           true, "HINCRBY counter");
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
    auto r = d->runCode(ScriptId::SetSale, sku, sku, GateKeys::keys(sku, {"gate"}),
                        {sale.open ? QByteArrayLiteral("1") : QByteArrayLiteral("0"),
                         num(sale.startMs), num(sale.endMs), num(sale.perUserLimit)});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<void> Gate::clearSale(const QString &sku)
{
    if (auto v = checkSkuId(sku); !v) return v;
    auto r = d->runCode(ScriptId::ClearSale, sku, sku, GateKeys::keys(sku, {"gate"}), {});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<QStringList> Gate::openSaleSkus()
{
    const QByteArray pattern = GateKeys::key(u"*"_s, "gate");
    const QByteArray prefix = QByteArrayLiteral("fs:{"), suffix = QByteArrayLiteral("}:gate");
    QStringList open;
    // Each master holds the gates of its own slots: every one is walked.
    auto walked = d->router.forEachServingNode([&](RedisConnection &conn) -> Result<void> {
        QByteArray cursor = "0";
        do {
            auto page = conn.command({QByteArrayLiteral("SCAN"), cursor, QByteArrayLiteral("MATCH"), pattern,
                                      QByteArrayLiteral("COUNT"), QByteArrayLiteral("1000")});
            if (!page)
                return std::unexpected(page.error());
            if (page->type != RedisValue::Type::Array || page->elements.size() != 2
                || page->elements[1].type != RedisValue::Type::Array)
                return unexpectedReply(*page, u"SCAN of the sales"_s);
            cursor = page->elements[0].str;
            QList<QList<QByteArray>> reads;
            for (const RedisValue &key : std::as_const(page->elements[1].elements))
                reads.append({QByteArrayLiteral("HGET"), key.str, QByteArrayLiteral("sale_open")});
            if (reads.isEmpty())
                continue;
            auto flags = conn.pipeline(reads);
            if (!flags)
                return std::unexpected(flags.error());
            for (qsizetype i = 0; i < flags->size(); ++i) {
                const QByteArray &key = reads[i][1];
                if ((*flags)[i].str == "1" && key.startsWith(prefix) && key.endsWith(suffix))
                    open << QString::fromUtf8(key.mid(prefix.size(), key.size() - prefix.size() - suffix.size()));
            }
        } while (cursor != "0");
        return {};
    });
    if (!walked)
        return std::unexpected(walked.error());
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
    auto r = d->run(ScriptId::SetUsers, GateKeys::keys(sku, {"gate"}), args);
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() != 2)
        return unexpectedReply(*r, u"set-users of %1"_s.arg(sku));
    if (r->elements[0].integer < 0)
        return scriptFailure(int(r->elements[0].integer), scriptName(ScriptId::SetUsers), sku);
    return r->elements[1].integer;
}

Result<bool> Gate::claimRestore(const QString &sku, qint64 ttlMs)
{
    auto r = d->keyCommand(sku, {QByteArrayLiteral("SET"), GateKeys::key(sku, "restoring"), QByteArrayLiteral("1"),
                                 QByteArrayLiteral("NX"), QByteArrayLiteral("PX"), num(qMax<qint64>(1, ttlMs))},
                           true);
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
    auto r = d->keyCommand(sku, {QByteArrayLiteral("DEL"), GateKeys::key(sku, "restoring")}, true, "DEL restoring");
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<void> Gate::setPaused(const QString &sku, bool paused)
{
    if (auto v = checkSkuId(sku); !v) return v;
    auto r = d->runCode(ScriptId::SetPaused, sku, sku, GateKeys::keys(sku, {"gate"}),
                        {paused ? QByteArrayLiteral("1") : QByteArrayLiteral("0")});
    if (!r)
        return std::unexpected(r.error());
    return {};
}

Result<QList<GateToken>> Gate::openTokens(const QString &sku, qint64 *nowMs)
{
    if (auto v = checkSkuId(sku); !v) return std::unexpected(v.error());
    auto r = d->run(ScriptId::OpenTokens, reserveKeys(sku), {});
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.isEmpty() || r->elements.size() % 2 != 1)
        return unexpectedReply(*r, u"open tokens of %1"_s.arg(sku));
    if (nowMs)
        *nowMs = r->elements[0].toInteger();
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
    auto r = d->router.execute(GateCommand{-1, {QByteArrayLiteral("TIME")}, false, std::nullopt});
    if (!r)
        return std::unexpected(r.error());
    if (r->type != RedisValue::Type::Array || r->elements.size() != 2)
        return unexpectedReply(*r, u"TIME"_s);
    return r->elements[0].toInteger() * 1000 + r->elements[1].toInteger() / 1000;
}

GateHealth Gate::health()
{
    GateHealth h;
    h.nodes = d->router.health();
    h.reachable = !h.nodes.isEmpty();
    h.scriptsLoaded = h.reachable;
    for (const GateNodeHealth &n : std::as_const(h.nodes)) {
        if (n.role == GateNodeHealth::Role::Replica)
            continue; // serves no SKU until it is promoted
        h.reachable = h.reachable && n.reachable;
        h.scriptsLoaded = h.scriptsLoaded && n.scriptsLoaded;
        h.roundTripUs = std::max(h.roundTripUs, n.roundTripUs);
        if (h.detail.isEmpty() && !n.detail.isEmpty())
            h.detail = h.nodes.size() == 1 ? n.detail : u"%1: %2"_s.arg(n.address, n.detail);
    }
    return h;
}

} // namespace flashstock
