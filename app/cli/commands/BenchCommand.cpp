#include "BenchCommand.h"

#include "CliContext.h"
#include "Identifiers.h"
#include "bench/BookBench.h"
#include "gate/EmbeddedRedis.h"
#include "open/EngineOpener.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QTemporaryDir>

#include <cstdio>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr double kFullSeconds = 3.0;
constexpr double kQuickSeconds = 0.3;
/// The crowd case: 100 000 buyers for 1 000 units (by hand), a small one in CI.
constexpr int kFullCrowdBuyers = 100'000;
constexpr qint64 kFullCrowdUnits = 1000;
constexpr int kQuickCrowdBuyers = 2000;
constexpr qint64 kQuickCrowdUnits = 100;
constexpr int kFullRounds = 3;

const QStringList &suites()
{
    static const QStringList names{u"book"_s};
    return names;
}

/// `1,8,32` -> {1, 8, 32}.
Result<QList<int>> parseClients(const QString &text)
{
    QList<int> out;
    for (const QString &part : text.split(u','))
    {
        bool ok = false;
        const int n = part.trimmed().toInt(&ok);
        if (!ok || n < 1 || n > 256)
            return fail(ErrorCode::InvalidArgument,
                        u"clients must be a comma-separated list of counts from 1 to 256, got %1"_s.arg(
                            quoteForMessage(text)),
                        u"clients"_s);
        out << n;
    }
    return out;
}

/// The PostgreSQL server to run on: `--bench-pg`, else a `--db` that names one.
Result<std::optional<DbUrl>> postgresServer(const ResolvedProfile &profile, const QCommandLineParser &parser)
{
    if (!parser.isSet(u"bench-pg"_s)) {
        if (!profile.bookInDataDir && profile.book.dialect == Dialect::Postgres)
            return std::optional<DbUrl>(profile.book);
        return std::optional<DbUrl>();
    }
    const QString text = parser.value(u"bench-pg"_s);
    auto url = DbUrl::parse(text);
    if (!url) {
        Error e = url.error(); // DbUrl names the field `db`; here it came from --bench-pg
        e.field = u"bench-pg"_s;
        if (e.message.startsWith(u"db "_s))
            e.message.replace(0, 2, u"bench-pg"_s);
        return std::unexpected(e);
    }
    if (url->dialect != Dialect::Postgres)
        return fail(ErrorCode::InvalidArgument,
                    u"bench-pg must be a postgresql://user:pass@host:port/db URL, got %1"_s.arg(quoteForMessage(text)),
                    u"bench-pg"_s);
    return std::optional<DbUrl>(*url);
}

QString ratioText(const std::optional<double> &r) { return r ? QString::number(*r, 'f', 2) : u"n/a"_s; }

QString table(const BenchReport &report)
{
    QStringList counts;
    for (int n : report.clients)
        counts << QString::number(n);
    QString text = u"FlashStock book benchmark: %1 s per case (%2 rounds, cases taking turns), clients %3; "
                   u"each case has its own SKU, stock never runs out\n"_s.arg(
                       QString::number(report.secondsPerCase), QString::number(report.rounds), counts.join(u", "_s));
    text += u"  machine: %1 CPUs, load average %2 at start\n"_s.arg(report.cpus).arg(report.loadAtStart);
    for (const BenchBackendStatus &b : report.backends) {
        if (b.ran)
            text += u"  %1: %2 (%3)\n"_s.arg(b.backend, b.where, b.durability);
    }
    text += u"\n%1 %2 %3 %4 %5 %6 %7\n"_s.arg(u"backend"_s, -11).arg(u"case"_s, -12).arg(u"clients"_s, 7)
                .arg(u"reserves/s"_s, 11).arg(u"p50 ms"_s, 9).arg(u"p99 ms"_s, 9).arg(u"oversold"_s, 9);
    for (const BenchCaseResult &c : report.cases) {
        text += u"%1 %2 %3 %4 %5 %6 %7"_s.arg(c.backend, -11).arg(c.name, -12).arg(c.clients, 7)
                    .arg(c.opsPerSecond, 11, 'f', 1).arg(c.p50Ms, 9, 'f', 3).arg(c.p99Ms, 9, 'f', 3)
                    .arg(c.oversold, 9);
        if (c.outOfStock > 0)
            text += u"  %1 out_of_stock"_s.arg(c.outOfStock);
        if (c.errors > 0)
            text += u"  %1 errors (first: %2)"_s.arg(c.errors).arg(c.firstError);
        text += u'\n';
    }
    text += u"\nguarded_vs_bare (guarded_row reserves/s / bare_sql reserves/s):\n"_s;
    for (const BenchBackendStatus &b : report.backends) {
        if (!b.ran)
            continue;
        text += u"  %1"_s.arg(b.backend, -11);
        const auto ratios = report.ratios(u"guarded_row"_s, u"bare_sql"_s, b.backend);
        for (int i = 0; i < ratios.size(); ++i)
            text += u"  %1 clients: %2"_s.arg(report.clients.at(i)).arg(ratioText(ratios.at(i)));
        text += u'\n';
    }
    const auto ratioLines = [&](const QString &numerator, const QString &denominator, bool postgresOnly) {
        for (const BenchBackendStatus &b : report.backends) {
            if (!b.ran || (postgresOnly && b.backend != u"postgresql"_s))
                continue;
            text += u"  %1"_s.arg(b.backend, -11);
            const auto ratios = report.ratios(numerator, denominator, b.backend);
            for (int i = 0; i < ratios.size(); ++i)
                text += u"  %1 clients: %2"_s.arg(report.clients.at(i)).arg(ratioText(ratios.at(i)));
            text += u'\n';
        }
    };
    text += u"\nbatched_vs_guarded (batched_row reserves/s / guarded_row reserves/s; targets: postgresql 5x, "
            u"sqlite 3x at 32):\n"_s;
    ratioLines(u"batched_row"_s, u"guarded_row"_s, false);
    text += u"\nbatched_vs_pgbench (batched_row reserves/s / pgbench single-order transactions/s, one hot row; "
            u"target 3x at 32):\n"_s;
    ratioLines(u"batched_row"_s, u"pgbench"_s, true);
    text += u"\nbuckets16_vs_row (16 buckets reserves/s / one row reserves/s, same clients):\n"_s;
    for (const BenchBackendStatus &b : report.backends) {
        if (!b.ran)
            continue;
        text += u"  %1"_s.arg(b.backend, -11);
        const auto ratios = report.ratios(u"buckets16"_s, u"guarded_row"_s, b.backend);
        for (int i = 0; i < ratios.size(); ++i)
            text += u"  %1 clients: %2"_s.arg(report.clients.at(i)).arg(ratioText(ratios.at(i)));
        text += u'\n';
    }
    if (!report.crowd.isEmpty()) {
        text += u"\ncrowd (every buyer wants 1 unit; time until all have an answer):\n"_s;
        for (const CrowdResult &c : report.crowd)
            text += u"  %1 %2 %3 buyers for %4 units: %5 s, sold %6, oversold %7, book transactions %8\n"_s
                        .arg(c.backend, -11).arg(c.path, -12).arg(c.buyers).arg(c.units).arg(c.seconds, 0, 'f', 2)
                        .arg(c.sold).arg(c.oversold)
                        .arg(c.bookTransactions < 0 ? u"n/a (no server counters)"_s : QString::number(c.bookTransactions));
    }
    for (const QString &note : report.notes())
        text += note + u'\n';
    return text;
}

/// Problems that make the run a failure: a correct path that oversold, lost units or erred.
QStringList failures(const BenchReport &report)
{
    QStringList out;
    for (const CrowdResult &c : report.crowd) {
        if (c.oversold > 0 || c.errors > 0)
            out << u"%1 crowd %2: oversold %3, %4 errors"_s.arg(c.backend, c.path).arg(c.oversold).arg(c.errors);
    }
    for (const BenchCaseResult &c : report.cases) {
        if (c.name == u"naive"_s)
            continue;
        if (c.oversold > 0 || c.unaccounted > 0)
            out << u"%1 %2 %3 clients: oversold %4, unaccounted %5"_s.arg(c.backend, c.name).arg(c.clients)
                       .arg(c.oversold).arg(c.unaccounted);
        if (c.errors > 0)
            out << u"%1 %2 %3 clients: %4 failed attempts (first: %5)"_s.arg(c.backend, c.name).arg(c.clients)
                       .arg(c.errors).arg(c.firstError);
    }
    return out;
}

/// `bench [book] [--quick] [--seconds S] [--clients LIST] [--cases LIST] [--bench-pg URL]`:
/// the book benchmark (core/bench/BookBench) on a SQLite scratch file and, given a server
/// (`--bench-pg URL`, or `--db postgresql://...`), a scratch PostgreSQL database. Never
/// touches the operator's book. Prints a table (or `--json`); progress goes to stderr.
/// Exit 0 with figures; 1 if a correct path (guarded_row, bare_sql) oversold, lost units or
/// failed an attempt (the figures are still printed), or a server could not be used;
/// 2 for bad options.
struct Bench final : Command {
    Bench()
        : Command({{u"bench"_s},
                   u"bench [book] [--quick] [--seconds S] [--clients 1,8,32] [--cases LIST] [--crowd BUYERS] "
                   u"[--crowd-paths LIST] [--backends LIST] [--bench-pg URL]"_s,
                   u"benchmark reserve paths (guarded row, bare SQL, naive, buckets, gate + book, crowd) on scratch "
                   u"SQLite and PostgreSQL databases"_s,
                   {{u"quick"_s, u"Short run (0.3 s per case, for CI) instead of 3 s."_s},
                    {u"seconds"_s, u"Seconds per case (0.05 to 600)."_s, u"S"_s},
                    {u"clients"_s, u"Client counts, comma-separated (default 1,8,32)."_s, u"LIST"_s},
                    {u"cases"_s, u"Cases to run, comma-separated (default: all)."_s, u"LIST"_s},
                    {u"crowd"_s, u"Buyers of the crowd case, racing for 1% as many units (default 100000; "
                                 u"--quick 2000)."_s, u"BUYERS"_s},
                    {u"crowd-paths"_s, u"The crowd's paths, comma-separated: guarded_row (the book alone), "
                                       u"gate_book (the gate in front); default both."_s, u"LIST"_s},
                    {u"backends"_s, u"Backends, comma-separated: sqlite, postgresql (default both; postgresql "
                                    u"needs a server)."_s, u"LIST"_s},
                    {u"bench-pg"_s, u"PostgreSQL server for a scratch database (role needs CREATEDB); "
                                    u"default: --db if it is postgresql://."_s, u"URL"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput Bench::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (args.size() > 1 || (args.size() == 1 && !suites().contains(args.first())))
        return errorOutput({ErrorCode::InvalidArgument,
                            u"suite: unknown benchmark suite %1 (suites: %2)"_s.arg(
                                quoteForMessage(args.join(u' ')), suites().join(u", "_s)),
                            u"suite"_s});
    BenchOptions options;
    options.secondsPerCase = parser.isSet(u"quick"_s) ? kQuickSeconds : kFullSeconds;
    options.rounds = parser.isSet(u"quick"_s) ? 1 : kFullRounds;
    if (parser.isSet(u"seconds"_s)) {
        bool ok = false;
        options.secondsPerCase = parser.value(u"seconds"_s).toDouble(&ok);
        if (!ok)
            return errorOutput({ErrorCode::InvalidArgument,
                                u"seconds must be a number, got %1"_s.arg(quoteForMessage(parser.value(u"seconds"_s))),
                                u"seconds"_s});
    }
    if (parser.isSet(u"clients"_s)) {
        auto clients = parseClients(parser.value(u"clients"_s));
        if (!clients)
            return errorOutput(clients.error());
        options.clients = *clients;
    }
    if (parser.isSet(u"cases"_s))
        options.cases = parser.value(u"cases"_s).split(u',', Qt::SkipEmptyParts);
    if (parser.isSet(u"crowd-paths"_s))
        options.crowdPaths = parser.value(u"crowd-paths"_s).split(u',', Qt::SkipEmptyParts);
    if (parser.isSet(u"backends"_s))
        options.backends = parser.value(u"backends"_s).split(u',', Qt::SkipEmptyParts);
    auto profile = EngineOpener::resolve(ctx.profile);
    if (!profile)
        return errorOutput(profile.error());
    auto pg = postgresServer(*profile, parser);
    if (!pg)
        return errorOutput(pg.error());
    options.postgres = *pg;
    options.progress = [](const QString &line) {
        std::fputs(qPrintable(u"bench: "_s + line + u'\n'), stderr);
        std::fflush(stderr);
    };
    if (!profile->bookInDataDir && !options.postgres)
        options.progress(u"the --db book is not touched: SQLite runs on a scratch file"_s);

    // The gate: --redis URL, none (skip the gate cases), or by default a private
    // redis-server in a scratch dir for this run only (never the operator's gate).
    QTemporaryDir gateDir;
    std::optional<EmbeddedRedis> privateGate;
    if (profile->gateMode == GateMode::BookOnly) {
        options.progress(u"gate: --redis none, gate_book and the crowd's gate path are skipped"_s);
    } else if (profile->gateMode == GateMode::Url) {
        options.redis = profile->gate;
    } else if (EmbeddedRedis::findServer()) {
        privateGate.emplace(gateDir.path());
        auto url = privateGate->start();
        if (!url)
            return errorOutput(url.error());
        options.redis = *url;
        options.progress(u"gate: a private redis-server for this run at "_s + privateGate->socketPath());
    } else {
        options.progress(u"gate: redis-server is not installed, gate_book and the crowd's gate path are skipped"_s);
    }
    const bool quick = parser.isSet(u"quick"_s);
    options.crowdBuyers = quick ? kQuickCrowdBuyers : kFullCrowdBuyers;
    options.crowdUnits = quick ? kQuickCrowdUnits : kFullCrowdUnits;
    options.crowdClients = quick ? 8 : 32;
    if (parser.isSet(u"crowd"_s)) {
        auto buyers = parseQuantity(parser.value(u"crowd"_s), u"crowd"_s);
        if (!buyers)
            return errorOutput(buyers.error());
        options.crowdBuyers = int(std::min<qint64>(*buyers, 10'000'000));
        options.crowdUnits = std::max<qint64>(1, options.crowdBuyers / 100);
    }

    auto report = BookBench(options).run();
    if (privateGate)
        if (auto stopped = privateGate->stop(); !stopped)
            options.progress(u"gate: the private redis-server of this run did not stop: "_s + stopped.error().message);
    if (!report)
        return errorOutput(report.error());

    CommandOutput out;
    out.json = report->toJson();
    out.text = table(*report);
    const QStringList problems = failures(*report);
    if (!problems.isEmpty()) {
        out.exitCode = ExitRuntime;
        out.json.insert(u"failures"_s, QJsonArray::fromStringList(problems));
        out.text += u"\nFAILED: a correct path lost or oversold units, or failed:\n  "_s + problems.join(u"\n  "_s)
                    + u'\n';
    }
    return out;
}

} // namespace

Commands benchCommands()
{
    return makeCommands<Bench>();
}

} // namespace flashstock
