#include "LedgerCommand.h"

#include "CliContext.h"
#include "Format.h"
#include "Identifiers.h"

#include <QCommandLineParser>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// `ledger --sku S | --order O [--limit N]`: the trace of a SKU or an order, oldest first.
struct Ledger final : Command {
    Ledger()
        : Command({{u"ledger"_s}, u"ledger (--sku S | --order O) [--limit N]"_s, u"the ledger trace of a SKU or an order"_s,
                   {{u"sku"_s, u"SKU to trace."_s, u"S"_s},
                    {u"order"_s, u"Order (or adjustment adj:ID) to trace."_s, u"O"_s},
                    {u"limit"_s, u"Only the newest N rows of a SKU."_s, u"N"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput Ledger::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    const bool bySku = parser.isSet(u"sku"_s), byOrder = parser.isSet(u"order"_s);
    if (bySku == byOrder)
        return errorOutput({ErrorCode::InvalidArgument, u"sku: give exactly one of --sku S or --order O"_s, u"sku"_s});
    int limit = 0;
    if (parser.isSet(u"limit"_s)) {
        auto n = parseQuantity(parser.value(u"limit"_s), u"limit"_s);
        if (!n)
            return errorOutput(n.error());
        limit = int(std::min<qint64>(*n, 1 << 30));
    }
    auto engine = ctx.engine(GateNeed::BookIsEnough);
    if (!engine)
        return errorOutput(engine.error());
    auto rows = bySku ? (*engine)->book().ledgerOfSku(parser.value(u"sku"_s), limit)
                      : (*engine)->book().ledgerOfOrder(parser.value(u"order"_s));
    if (!rows)
        return errorOutput(rows.error());
    CommandOutput out;
    QJsonArray array;
    for (const LedgerRow &row : *rows)
        array.append(ledgerRowJson(row));
    out.json = {{u"rows"_s, array}};
    out.text = ledgerTable(*rows);
    return out;
}

} // namespace

Commands ledgerCommands()
{
    return makeCommands<Ledger>();
}

} // namespace flashstock
