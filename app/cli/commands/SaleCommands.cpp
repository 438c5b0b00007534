#include "SaleCommands.h"

#include "CliContext.h"
#include "Domain.h"
#include "Format.h"
#include "Identifiers.h"
#include "store/SaleStore.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QJsonObject saleJson(const Sale &s)
{
    return {{u"sale"_s, s.id},
            {u"sku"_s, s.sku},
            {u"status"_s, saleStatusName(s.status)},
            {u"start"_s, s.startMs ? QJsonValue(isoTime(s.startMs)) : QJsonValue()},
            {u"end"_s, s.endMs ? QJsonValue(isoTime(s.endMs)) : QJsonValue()},
            {u"hold_seconds"_s, s.holdSeconds},
            {u"per_user_limit"_s, s.perUserLimit},
            {u"book_only"_s, s.bookOnly},
            {u"units"_s, s.units}};
}

QString saleText(const Sale &s)
{
    return u"sale %1  %2  %3  window %4 .. %5  hold %6 s  per-user limit %7  units %8%9\n"_s.arg(s.id)
        .arg(s.sku, saleStatusName(s.status), s.startMs ? isoTime(s.startMs) : u"start"_s,
             s.endMs ? isoTime(s.endMs) : u"stop"_s)
        .arg(s.holdSeconds)
        .arg(s.perUserLimit ? QString::number(s.perUserLimit) : u"none"_s)
        .arg(s.units)
        .arg(s.bookOnly ? u"  BOOK-ONLY"_s : QString());
}

Result<qint64> parseTime(const QCommandLineParser &parser, const QString &name)
{
    if (!parser.isSet(name))
        return 0;
    const QString text = parser.value(name);
    QDateTime t = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (!t.isValid())
        t = QDateTime::fromString(text, Qt::ISODate);
    if (!t.isValid())
        return fail(ErrorCode::InvalidArgument,
                    u"%1 %2 is not an ISO 8601 time such as 2026-12-01T20:00:00Z"_s.arg(name, quoteForMessage(text)),
                    name);
    if (t.timeSpec() == Qt::LocalTime)
        t.setTimeSpec(Qt::UTC); // a time without an offset is UTC, as the help says
    return t.toMSecsSinceEpoch();
}

Result<qint64> parseCount(const QCommandLineParser &parser, const QString &name, qint64 fallback, bool zeroOk)
{
    if (!parser.isSet(name))
        return fallback;
    const QString text = parser.value(name).trimmed();
    if (zeroOk && text == u"0"_s)
        return 0;
    return parseQuantity(text, name);
}

Result<qint64> saleId(const QStringList &args, int expected, const QString &synopsis)
{
    if (args.size() != expected)
        return fail(ErrorCode::InvalidArgument, u"sale: expected a sale id (usage: %1)"_s.arg(synopsis), u"sale"_s);
    bool ok = false;
    const qint64 id = args.first().toLongLong(&ok);
    if (!ok || id < 1)
        return fail(ErrorCode::InvalidArgument, u"sale %1 is not a sale id"_s.arg(quoteForMessage(args.first())),
                    u"sale"_s);
    return id;
}

CommandOutput saleOutput(const Result<Sale> &sale, const QString &headline)
{
    if (!sale)
        return errorOutput(sale.error());
    CommandOutput out;
    out.json = saleJson(*sale);
    out.text = headline + saleText(*sale);
    return out;
}

/// `sale create --sku S [--start ISO] [--end ISO] [--hold-seconds H] [--per-user-limit L]`:
/// defines a flash sale of the SKU's available stock; it stays closed until `sale start`.
struct SaleCreate final : Command {
    SaleCreate()
        : Command({{u"sale"_s, u"create"_s},
                   u"sale create --sku S [--start ISO] [--end ISO] [--hold-seconds H] [--per-user-limit L]"_s,
                   u"define a flash sale of a SKU's stock (closed until started)"_s,
                   {{u"sku"_s, u"The SKU on sale (give a flash-sale item its own SKU)."_s, u"S"_s},
                    {u"start"_s, u"Opens no earlier than this ISO 8601 time (UTC unless an offset is given)."_s,
                     u"ISO"_s},
                    {u"end"_s, u"Closes at this ISO 8601 time."_s, u"ISO"_s},
                    {u"hold-seconds"_s, u"How long a reservation holds its units (default 900)."_s, u"H"_s},
                    {u"per-user-limit"_s, u"Units one user may hold or buy (default 0: no limit)."_s, u"L"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput SaleCreate::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    if (!parser.isSet(u"sku"_s))
        return errorOutput({ErrorCode::InvalidArgument, u"sku: --sku S is required"_s, u"sku"_s});
    auto start = parseTime(parser, u"start"_s);
    if (!start)
        return errorOutput(start.error());
    auto end = parseTime(parser, u"end"_s);
    if (!end)
        return errorOutput(end.error());
    auto hold = parseCount(parser, u"hold-seconds"_s, kDefaultHoldSeconds, false);
    if (!hold)
        return errorOutput(hold.error());
    auto limit = parseCount(parser, u"per-user-limit"_s, 0, true);
    if (!limit)
        return errorOutput(limit.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    return saleOutput((*engine)->createSale(parser.value(u"sku"_s), *start, *end, *hold, *limit),
                      u"created (not open yet; open it with: flashstock-cli sale start ID)\n"_s);
}

/// `sale start ID` / `sale pause ID` / `sale stop ID`: opens (or resumes), pauses or ends
/// the sale in book and gate (idempotent). Opening follows the launch rules
/// (Engine::launchBlockers), as the console's launch does.
class SaleStatusChange : public Command {
public:
    SaleStatusChange(SaleStatus target, const QString &verb, const QString &summary)
        : Command({{u"sale"_s, verb}, u"sale %1 ID"_s.arg(verb), summary, {}})
        , m_target(target)
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;

private:
    SaleStatus m_target;
};

CommandOutput SaleStatusChange::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    auto id = saleId(args, 1, spec().synopsis);
    if (!id)
        return errorOutput(id.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    return saleOutput((*engine)->setSaleStatus(*id, m_target), {});
}

/// `sale start ID`: opens the sale, or resumes a paused one.
struct SaleStart final : SaleStatusChange {
    SaleStart()
        : SaleStatusChange(SaleStatus::Open, u"start"_s,
                           u"open a sale (or resume a paused one); refused while the SKU has another live sale "
                           u"or a discrepancy waiting for approval"_s)
    {
    }
};

/// `sale pause ID`: closes an open sale for now.
struct SalePause final : SaleStatusChange {
    SalePause()
        : SaleStatusChange(SaleStatus::Paused, u"pause"_s,
                           u"pause an open sale: reserves answer sale_closed until it is started again"_s)
    {
    }
};

/// `sale stop ID`: ends a sale; final.
struct SaleStop final : SaleStatusChange {
    SaleStop() : SaleStatusChange(SaleStatus::Stopped, u"stop"_s, u"end a sale for good: reserves answer sale_closed"_s)
    {
    }
};

/// `sale book-only ID on|off`: reserves skip the gate (while Redis is down), or use it again
/// (the gate is rebuilt from the book).
struct SaleBookOnly final : Command {
    SaleBookOnly()
        : Command({{u"sale"_s, u"book-only"_s}, u"sale book-only ID on|off"_s,
                   u"reserves skip the gate (on, while Redis is down) or use it again (off: gate rebuilt)"_s, {}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput SaleBookOnly::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    auto id = saleId(args, 2, spec().synopsis);
    if (!id)
        return errorOutput(id.error());
    const QString mode = args.at(1);
    if (mode != u"on"_s && mode != u"off"_s)
        return errorOutput({ErrorCode::InvalidArgument, u"mode must be on or off, got %1"_s.arg(quoteForMessage(mode)),
                            u"mode"_s});
    // Book-only exists for when the gate is down: do not start or wait for one to switch.
    auto engine = ctx.engine(mode == u"off"_s ? GateNeed::Needed : GateNeed::BookIsEnough);
    if (!engine)
        return errorOutput(engine.error());
    return saleOutput((*engine)->setSaleBookOnly(*id, mode == u"on"_s), {});
}

/// `sale list`: every sale, newest first.
struct SaleList final : Command {
    SaleList() : Command({{u"sale"_s, u"list"_s}, u"sale list"_s, u"every sale, newest first"_s, {}}) {}
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput SaleList::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    auto engine = ctx.engine(GateNeed::BookIsEnough);
    if (!engine)
        return errorOutput(engine.error());
    auto sales = (*engine)->sales().list();
    if (!sales)
        return errorOutput(sales.error());
    CommandOutput out;
    QJsonArray array;
    for (const Sale &s : *sales) {
        array.append(saleJson(s));
        out.text += saleText(s);
    }
    if (sales->isEmpty())
        out.text = u"(no sales)\n"_s;
    out.json = {{u"sales"_s, array}};
    return out;
}

} // namespace

Commands saleCommands()
{
    return makeCommands<SaleCreate, SaleStart, SalePause, SaleStop, SaleBookOnly, SaleList>();
}

} // namespace flashstock
