#include "SkuCommands.h"

#include "CliContext.h"
#include "Format.h"
#include "Identifiers.h"

#include <QCommandLineParser>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The single SKU argument of a `sku ...` command, checked.
Result<QString> skuArgument(const QStringList &args, const QString &synopsis)
{
    if (args.size() != 1)
        return fail(ErrorCode::InvalidArgument, u"sku: expected exactly one SKU (usage: %1)"_s.arg(synopsis), u"sku"_s);
    if (auto r = checkSkuId(args.first()); !r)
        return std::unexpected(r.error());
    return args.first();
}

/// The SKU as book and gate hold it, side by side, after `headline`; with the adjustment
/// that just moved it (`adj:<id>`) when `adjustmentId` is set.
CommandOutput showSku(Engine &engine, const QString &sku, const QString &headline, qint64 adjustmentId = 0)
{
    auto read = engine.book().levels(sku);
    if (!read)
        return errorOutput(read.error());
    const SkuLevels &levels = *read;
    CommandOutput out;
    const GateSide gate = engine.gateLevels(levels.sku);
    out.json = skuJson(levels, gate);
    if (adjustmentId > 0)
        out.json.insert(u"adjustment"_s, u"adj:%1"_s.arg(adjustmentId));
    QString gateText = u"(none: book-only)"_s;
    if (gate.configured && !gate.reachable) {
        gateText = u"unreachable: "_s + gate.error;
    } else if (gate.configured && gate.available < 0) {
        gateText = u"not loaded (the next reserve or gate rebuild loads it)"_s;
    } else if (gate.configured) {
        gateText = u"available %1"_s.arg(gate.available);
        if (gate.available != levels.available)
            gateText += u"  (book %1: %2 in flight or drift)"_s.arg(levels.available).arg(gate.available - levels.available);
        if (const auto &c = gate.counts)
            gateText += u"\n        tokens issued %1  refused %2 (out_of_stock %3, limit_exceeded %4, sale_closed %5, "
                        u"paused %6)"_s.arg(c->reserved).arg(c->refused()).arg(c->outOfStock).arg(c->limitExceeded)
                            .arg(c->saleClosed).arg(c->paused);
        else
            gateText += u"\n        counters unreadable (gate rebuild resets them): "_s + gate.error;
    }
    QString text = headline.isEmpty() ? QString() : headline + u'\n';
    text += u"SKU %1\n  book  available %2  locked %3  sold %4  total %5\n  gate  %6\n"_s
                .arg(levels.sku).arg(levels.available).arg(levels.locked).arg(levels.sold).arg(levels.total)
                .arg(gateText);
    if (levels.buckets.size() > 1) {
        for (const BucketLevels &b : levels.buckets)
            text += u"  bucket %1  available %2  locked %3  sold %4\n"_s.arg(b.bucket).arg(b.available).arg(b.locked)
                        .arg(b.sold);
    }
    out.text = text;
    return out;
}

/// `sku add SKU --stock N [--buckets B]`: creates a SKU with its initial stock (ledgered).
struct SkuAdd final : Command {
    SkuAdd()
        : Command({{u"sku"_s, u"add"_s}, u"sku add SKU --stock N [--buckets B]"_s,
                   u"create a SKU with N units of stock (in B buckets, default 1)"_s,
                   {{u"stock"_s, u"Initial stock, units (0 to 2147483647)."_s, u"N"_s},
                    {u"buckets"_s, u"Buckets (rows) to split the SKU's stock over (1 to 1024)."_s, u"B"_s, u"1"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput SkuAdd::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    auto sku = skuArgument(args, spec().synopsis);
    if (!sku)
        return errorOutput(sku.error());
    if (!parser.isSet(u"stock"_s))
        return errorOutput({ErrorCode::InvalidArgument, u"stock: --stock N is required"_s, u"stock"_s});
    qint64 stock = 0;
    if (parser.value(u"stock"_s).trimmed() != u"0"_s) {
        auto q = parseQuantity(parser.value(u"stock"_s), u"stock"_s);
        if (!q)
            return errorOutput(q.error());
        stock = *q;
    }
    auto buckets = parseQuantity(parser.value(u"buckets"_s), u"buckets"_s);
    if (!buckets || *buckets > 1024)
        return errorOutput({ErrorCode::InvalidArgument,
                            u"buckets must be a whole number from 1 to 1024, got %1"_s.arg(
                                quoteForMessage(parser.value(u"buckets"_s))),
                            u"buckets"_s});
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    auto added = (*engine)->addSku(*sku, stock, int(std::min<qint64>(*buckets, 1 << 20)));
    if (!added)
        return errorOutput(added.error());
    return showSku(**engine, *sku, u"added SKU %1 with %2 units"_s.arg(*sku).arg(stock));
}

/// `sku show SKU`: the SKU's levels, book side (and gate side once a gate is configured).
struct SkuShow final : Command {
    SkuShow()
        : Command({{u"sku"_s, u"show"_s}, u"sku show SKU"_s, u"show a SKU's available, locked, sold and total"_s, {}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput SkuShow::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    auto sku = skuArgument(args, spec().synopsis);
    if (!sku)
        return errorOutput(sku.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    return showSku(**engine, *sku, {});
}

/// `sku restock SKU --qty N [--reason TEXT]`: adds stock as an adjustment naming the operator.
struct SkuRestock final : Command {
    SkuRestock()
        : Command({{u"sku"_s, u"restock"_s}, u"sku restock SKU --qty N [--reason TEXT]"_s,
                   u"add N units of available stock (a ledgered adjustment)"_s,
                   {{u"qty"_s, u"Units to add (1 to 2147483647)."_s, u"N"_s},
                    {u"reason"_s, u"Why, for the ledger (default: restock)."_s, u"TEXT"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput SkuRestock::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    auto sku = skuArgument(args, spec().synopsis);
    if (!sku)
        return errorOutput(sku.error());
    if (!parser.isSet(u"qty"_s))
        return errorOutput({ErrorCode::InvalidArgument, u"qty: --qty N is required"_s, u"qty"_s});
    auto qty = parseQuantity(parser.value(u"qty"_s));
    if (!qty)
        return errorOutput(qty.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    auto adjusted = (*engine)->restock(*sku, *qty, parser.value(u"reason"_s));
    if (!adjusted)
        return errorOutput(adjusted.error());
    return showSku(**engine, *sku, u"restocked %1 by %2 units (adjustment adj:%3)"_s.arg(*sku).arg(*qty).arg(adjusted->id),
                   adjusted->id);
}

/// A bucket number option (0..1023).
Result<int> bucketOption(const QCommandLineParser &parser, const QString &name)
{
    if (!parser.isSet(name))
        return fail(ErrorCode::InvalidArgument, u"%1: --%1 B is required"_s.arg(name), name);
    bool ok = false;
    const int b = parser.value(name).trimmed().toInt(&ok);
    if (!ok || b < 0 || b > 1023)
        return fail(ErrorCode::InvalidArgument,
                    u"%1 must be a bucket number from 0 to 1023, got %2"_s.arg(name, quoteForMessage(parser.value(name))),
                    name);
    return b;
}

/// `sku rebalance SKU --from B --to B --qty N`: moves available units between buckets (ledgered).
struct SkuRebalance final : Command {
    SkuRebalance()
        : Command({{u"sku"_s, u"rebalance"_s}, u"sku rebalance SKU --from B --to B --qty N"_s,
                   u"move available units between two buckets (ledgered)"_s,
                   {{u"from"_s, u"Bucket to take available units from."_s, u"B"_s},
                    {u"to"_s, u"Bucket to give them to."_s, u"B"_s},
                    {u"qty"_s, u"Units to move."_s, u"N"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput SkuRebalance::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    auto sku = skuArgument(args, spec().synopsis);
    if (!sku)
        return errorOutput(sku.error());
    auto from = bucketOption(parser, u"from"_s);
    if (!from)
        return errorOutput(from.error());
    auto to = bucketOption(parser, u"to"_s);
    if (!to)
        return errorOutput(to.error());
    if (!parser.isSet(u"qty"_s))
        return errorOutput({ErrorCode::InvalidArgument, u"qty: --qty N is required"_s, u"qty"_s});
    auto qty = parseQuantity(parser.value(u"qty"_s));
    if (!qty)
        return errorOutput(qty.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    auto moved = (*engine)->book().rebalance(*sku, *from, *to, *qty);
    if (!moved)
        return errorOutput(moved.error());
    return showSku(**engine, *sku,
                   u"moved %1 units of %2 from bucket %3 to bucket %4 (adj:%5)"_s.arg(*qty).arg(*sku).arg(*from).arg(*to)
                       .arg(moved->id),
                   moved->id);
}

/// `sku buckets SKU --count N`: changes the number of buckets and spreads available units
/// evenly (ledgered).
struct SkuBuckets final : Command {
    SkuBuckets()
        : Command({{u"sku"_s, u"buckets"_s}, u"sku buckets SKU --count N"_s,
                   u"split a hot SKU into N buckets (rows), available units spread evenly (ledgered)"_s,
                   {{u"count"_s, u"Number of buckets (1 to 1024)."_s, u"N"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput SkuBuckets::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    auto sku = skuArgument(args, spec().synopsis);
    if (!sku)
        return errorOutput(sku.error());
    if (!parser.isSet(u"count"_s))
        return errorOutput({ErrorCode::InvalidArgument, u"count: --count N is required"_s, u"count"_s});
    auto count = parseQuantity(parser.value(u"count"_s), u"count"_s);
    if (!count)
        return errorOutput(count.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    auto changed = (*engine)->book().setBucketCount(*sku, int(std::min<qint64>(*count, 1 << 20)));
    if (!changed)
        return errorOutput(changed.error());
    return showSku(**engine, *sku, u"%1 now has %2 buckets (adj:%3)"_s.arg(*sku).arg(*count).arg(changed->id),
                   changed->id);
}

/// `sku list`: every SKU with its book levels, bucket count and gate available.
struct SkuList final : Command {
    SkuList()
        : Command({{u"sku"_s, u"list"_s}, u"sku list"_s,
                   u"list every SKU: book available, locked, sold, total, buckets, and gate available"_s, {}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput SkuList::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    auto all = (*engine)->book().allLevels();
    if (!all)
        return errorOutput(all.error());
    CommandOutput out;
    QJsonArray rows;
    QString text = u"%1  %2  %3  %4  %5  %6  %7\n"_s.arg(u"SKU"_s, -24).arg(u"buckets"_s, 7).arg(u"available"_s, 10)
                       .arg(u"locked"_s, 8).arg(u"sold"_s, 8).arg(u"total"_s, 10).arg(u"gate"_s);
    QString gateDown; // once the gate does not answer, asking it per SKU would cost a timeout each
    for (const SkuLevels &levels : std::as_const(*all)) {
        QJsonValue gateJson;
        QString gateText = u"n/a (book-only)"_s;
        if ((*engine)->gate()) {
            GateSide gate;
            if (gateDown.isEmpty())
                gate = (*engine)->gateLevels(levels.sku);
            if (!gate.reachable) {
                gateDown = gateDown.isEmpty() ? gate.error : gateDown;
                gateText = u"n/a (unreachable)"_s;
            } else if (gate.available < 0) {
                gateText = u"not loaded"_s;
            } else {
                gateJson = QJsonObject{{u"available"_s, gate.available}};
                gateText = QString::number(gate.available);
            }
        }
        rows.append(QJsonObject{{u"sku"_s, levels.sku},
                                {u"buckets"_s, levels.buckets.size()},
                                {u"book"_s, levelsJson(levels)},
                                {u"gate"_s, gateJson}});
        text += u"%1  %2  %3  %4  %5  %6  %7\n"_s.arg(levels.sku, -24).arg(levels.buckets.size(), 7)
                    .arg(levels.available, 10).arg(levels.locked, 8).arg(levels.sold, 8).arg(levels.total, 10)
                    .arg(gateText);
    }
    out.json.insert(u"skus"_s, rows);
    if (!gateDown.isEmpty()) {
        out.json.insert(u"gate_error"_s, gateDown);
        text += u"gate unreachable: %1\n"_s.arg(gateDown);
    }
    out.text = all->isEmpty() ? u"no SKUs yet (sku add SKU --stock N creates one)\n"_s : text;
    return out;
}

} // namespace

Commands skuCommands()
{
    return makeCommands<SkuAdd, SkuShow, SkuList, SkuRestock, SkuRebalance, SkuBuckets>();
}

} // namespace flashstock
