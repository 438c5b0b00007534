#include "OrderCommands.h"

#include "CliContext.h"
#include "Format.h"
#include "Identifiers.h"

#include "StopSignal.h"

#include <QCommandLineParser>
#include <QJsonDocument>
#include <QTextStream>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

std::unexpected<Error> usage(const QString &field, const QString &message)
{
    return fail(ErrorCode::InvalidArgument, u"%1: %2"_s.arg(field, message), field);
}

/// A required option's value, checked as an order id.
Result<QString> orderOption(const QCommandLineParser &parser)
{
    if (!parser.isSet(u"order"_s))
        return usage(u"order"_s, u"--order O is required"_s);
    const QString order = parser.value(u"order"_s);
    if (auto r = checkOrderId(order); !r)
        return std::unexpected(r.error());
    return order;
}

/// The reserve's lines: `--sku S --qty N`, or `--line S:N` repeated (not both).
Result<QList<OrderLine>> linesFrom(const QCommandLineParser &parser)
{
    QList<OrderLine> lines;
    const QStringList specs = parser.values(u"line"_s);
    if (!specs.isEmpty() && (parser.isSet(u"sku"_s) || parser.isSet(u"qty"_s)))
        return usage(u"line"_s, u"give either --sku and --qty, or --line S:N, not both"_s);
    for (const QString &spec : specs) {
        const qsizetype colon = spec.lastIndexOf(u':');
        if (colon <= 0)
            return usage(u"line"_s, u"%1 is not SKU:QTY"_s.arg(quoteForMessage(spec)));
        OrderLine line;
        line.sku = spec.left(colon);
        if (auto r = checkSkuId(line.sku, u"line"_s); !r)
            return std::unexpected(r.error());
        auto qty = parseQuantity(spec.mid(colon + 1), u"line"_s);
        if (!qty)
            return std::unexpected(qty.error());
        line.qty = *qty;
        lines << line;
    }
    if (specs.isEmpty()) {
        if (!parser.isSet(u"sku"_s))
            return usage(u"sku"_s, u"--sku S (with --qty N) or --line S:N is required"_s);
        OrderLine line;
        line.sku = parser.value(u"sku"_s);
        if (auto r = checkSkuId(line.sku); !r)
            return std::unexpected(r.error());
        if (!parser.isSet(u"qty"_s))
            return usage(u"qty"_s, u"--qty N is required with --sku"_s);
        auto qty = parseQuantity(parser.value(u"qty"_s));
        if (!qty)
            return std::unexpected(qty.error());
        line.qty = *qty;
        lines << line;
    }
    return lines;
}

CommandOutput changeOutput(const OrderChange &change)
{
    CommandOutput out;
    const QString word = outcomeWord(change.outcome);
    out.json = orderChangeJson(change);
    out.text = u"%1  order %2  (%3)\n"_s.arg(word, change.order, linesText(change.lines));
    return out;
}

/// `reserve --order O --sku S --qty N [--user U]` or `--line S:N` repeated: one reservation,
/// all lines or none.
struct Reserve final : Command {
    Reserve()
        : Command({{u"reserve"_s}, u"reserve --order O (--sku S --qty N | --line S:N ...) [--user U]"_s,
                   u"hold units for an order (all lines or none)"_s,
                   {{u"order"_s, u"Order id ([A-Za-z0-9._-], at most 128)."_s, u"O"_s},
                    {u"sku"_s, u"SKU of a one-line order."_s, u"S"_s},
                    {u"qty"_s, u"Units of a one-line order (1 to 2147483647)."_s, u"N"_s},
                    {u"line"_s, u"A line SKU:QTY; repeat for more lines."_s, u"S:N"_s},
                    {u"user"_s, u"Buyer id (for per-user limits)."_s, u"U"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput Reserve::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    auto order = orderOption(parser);
    if (!order)
        return errorOutput(order.error());
    auto lines = linesFrom(parser);
    if (!lines)
        return errorOutput(lines.error());
    const QString user = parser.value(u"user"_s);
    if (parser.isSet(u"user"_s)) {
        if (auto r = checkName(user, u"user"_s); !r)
            return errorOutput(r.error());
    }
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    auto result = (*engine)->reserve(*order, user, *lines);
    if (!result)
        return errorOutput(result.error());
    CommandOutput out;
    const QString word = outcomeWord(result->outcome);
    out.exitCode = result->outcome == Outcome::GateUnavailable ? ExitRuntime : ExitOk;
    out.json = reserveJson(*result);
    out.text = u"%1  order %2  (%3)"_s.arg(word, *order, linesText(result->lines));
    if (result->outcome == Outcome::Reserved)
        out.text += u"  hold until %1"_s.arg(isoTime(result->expiresAtMs));
    if (!result->shortSku.isEmpty())
        out.text += u"  short: %1"_s.arg(result->shortSku);
    out.text += u'\n';
    return out;
}

/// `confirm --order O --payment P`: payment captured.
struct Confirm final : Command {
    Confirm()
        : Command({{u"confirm"_s}, u"confirm --order O --payment P"_s, u"payment captured: the held units become sold"_s,
                   {{u"order"_s, u"Order id."_s, u"O"_s}, {u"payment"_s, u"Payment reference."_s, u"P"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput Confirm::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    auto order = orderOption(parser);
    if (!order)
        return errorOutput(order.error());
    if (!parser.isSet(u"payment"_s))
        return errorOutput(usage(u"payment"_s, u"--payment P is required"_s).error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    auto result = (*engine)->confirm(*order, parser.value(u"payment"_s));
    if (!result)
        return errorOutput(result.error());
    return changeOutput(*result);
}

/// `release --order O --reason timeout|cancel|risk`: gives the units back.
struct Release final : Command {
    Release()
        : Command({{u"release"_s}, u"release --order O --reason timeout|cancel|risk"_s,
                   u"give an order's held units back"_s,
                   {{u"order"_s, u"Order id."_s, u"O"_s}, {u"reason"_s, u"timeout, cancel or risk."_s, u"R"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput Release::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    auto order = orderOption(parser);
    if (!order)
        return errorOutput(order.error());
    if (!parser.isSet(u"reason"_s))
        return errorOutput(usage(u"reason"_s, u"--reason timeout|cancel|risk is required"_s).error());
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    auto result = (*engine)->release(*order, parser.value(u"reason"_s));
    if (!result)
        return errorOutput(result.error());
    return changeOutput(*result);
}

/// `expire [--every SECONDS]`: releases every hold that is due, by the database clock; with
/// `--every`, again every SECONDS until SIGINT/SIGTERM (one line per run, on the context's
/// streams).
struct Expire final : Command {
    Expire()
        : Command({{u"expire"_s}, u"expire [--every SECONDS]"_s, u"release every hold past its expiry (database clock)"_s,
                   {{u"every"_s, u"Run again every SECONDS until SIGINT/SIGTERM."_s, u"SECONDS"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput Expire::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    qint64 every = 0;
    if (parser.isSet(u"every"_s)) {
        bool ok = false;
        every = parser.value(u"every"_s).toLongLong(&ok);
        if (!ok || every < 1 || every > 86400 * 365)
            return errorOutput(usage(u"every"_s, u"must be a whole number of seconds from 1 to 31536000, got %1"_s.arg(
                                                     quoteForMessage(parser.value(u"every"_s))))
                                   .error());
    }
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    // A loop is an expirer: each pass also writes its heartbeat, so the console can tell
    // that something releases holds past their expiry.
    auto once = [&]() -> CommandOutput {
        ExpirerPass pass;
        if (every > 0) {
            auto run = (*engine)->expireAsExpirer(ExpirerId{u"expire-every"_s, every * 1000});
            if (!run)
                return errorOutput(run.error());
            pass = *run;
        } else {
            auto released = (*engine)->expire();
            if (!released)
                return errorOutput(released.error());
            pass.released = *released;
        }
        CommandOutput out;
        QJsonArray orders;
        qint64 units = 0;
        for (const OrderChange &c : std::as_const(pass.released)) {
            orders.append(c.order);
            for (const OrderLine &l : c.lines)
                units += l.qty;
        }
        out.json = {{u"released"_s, orders.size()}, {u"units"_s, units}, {u"orders"_s, orders}};
        out.text = u"expired %1 holds (%2 units back to available)\n"_s.arg(orders.size()).arg(units);
        if (!pass.heartbeatProblem.isEmpty()) {
            out.json.insert(u"heartbeat_error"_s, pass.heartbeatProblem);
            out.text += u"heartbeat not written (the console cannot see this expirer): %1\n"_s.arg(
                pass.heartbeatProblem);
        }
        return out;
    };
    if (every == 0)
        return once();
    StopSignal::install();
    QTextStream &out = ctx.out;
    QTextStream &err = ctx.err;
    int runs = 0;
    while (!StopSignal::requested()) {
        const CommandOutput run = once();
        ++runs;
        if (ctx.json)
            out << QString::fromUtf8(QJsonDocument(run.json).toJson(QJsonDocument::Compact)) << '\n';
        else
            (run.exitCode == ExitOk ? out : err) << run.text;
        out.flush();
        for (const QString &note : ctx.takeNotes())
            err << note << '\n';
        err.flush();
        StopSignal::wait(every * 1000);
    }
    CommandOutput done;
    done.json = {{u"stopped"_s, true}, {u"runs"_s, runs}};
    done.text = u"expire stopped after %1 runs\n"_s.arg(runs);
    return done;
}

} // namespace

Commands orderCommands()
{
    return makeCommands<Reserve, Confirm, Release, Expire>();
}

} // namespace flashstock
