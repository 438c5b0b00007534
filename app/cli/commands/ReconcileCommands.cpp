#include "ReconcileCommands.h"

#include "Identifiers.h"
#include "open/SecretFile.h"
#include "reconcile/Approvers.h"

#include "AlertSender.h"
#include "CliContext.h"
#include "Format.h"
#include "StopSignal.h"

#include <QCommandLineParser>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QSet>
#include <QSettings>
#include <QTextStream>
#include <QUrl>

#include <cstdio>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

std::unexpected<Error> usage(const QString &field, const QString &message)
{
    return fail(ErrorCode::InvalidArgument, u"%1: %2"_s.arg(field, message), field);
}

Result<qint64> seconds(const QCommandLineParser &parser, const QString &name, qint64 fallback, qint64 min)
{
    if (!parser.isSet(name))
        return fallback;
    bool ok = false;
    const qint64 v = parser.value(name).toLongLong(&ok);
    if (!ok || v < min || v > 86400 * 365)
        return usage(name, u"must be a whole number of seconds from %1 to 31536000, got %2"_s.arg(min).arg(
                               quoteForMessage(parser.value(name))));
    return v;
}

Result<qint64> idArgument(const QStringList &args)
{
    if (args.size() != 1)
        return usage(u"id"_s, u"give exactly one discrepancy id"_s);
    bool ok = false;
    const qint64 id = args.first().toLongLong(&ok);
    if (!ok || id <= 0)
        return usage(u"id"_s, u"%1 is not a discrepancy id"_s.arg(args.first()));
    return id;
}

QString discrepancyLine(const Discrepancy &d)
{
    return u"#%1  %2  %3%4  %5  delta %6%7\n"_s.arg(d.id)
        .arg(discrepancyKindName(d.kind), d.sku, d.bucket >= 0 ? u"/%1"_s.arg(d.bucket) : QString(),
             discrepancyStatusName(d.status))
        .arg(d.delta)
        .arg(printable(d.status == DiscrepancyStatus::PendingApproval ? u"proposal: "_s + d.proposal : d.detail)
                 .prepend(u"\n    "_s));
}

CommandOutput reportOutput(const ReconcileReport &report)
{
    CommandOutput out;
    QJsonArray list;
    for (const Discrepancy &d : report.discrepancies) {
        list.append(discrepancyJson(d));
        out.text += discrepancyLine(d);
    }
    out.json = {{u"discrepancies"_s, list},
                {u"auto_fixed"_s, report.autoFixed},
                {u"pending_approval"_s, report.pendingApproval},
                {u"still_pending"_s, report.stillPending}};
    if (!report.warnings.isEmpty())
        out.json.insert(u"warnings"_s, QJsonArray::fromStringList(report.warnings));
    out.text += u"reconcile: %1 healed, %2 new for approval, %3 waiting for approval\n"_s.arg(report.autoFixed)
                    .arg(report.pendingApproval)
                    .arg(report.stillPending);
    for (const QString &w : report.warnings)
        out.text += u"warning: "_s + w + u'\n';
    out.exitCode = report.stillPending > 0 ? ExitPending : ExitOk;
    return out;
}

/// Sends an alert for every discrepancy waiting for approval whose alert was not delivered
/// yet (this pass's and earlier ones'), except those still being sent (`inFlight`, ids).
/// Each alert given up is appended to `failures` ({"discrepancy", "error"}) when it ends.
/// A delivery is recorded in the book, so each alert goes out until one is delivered.
void alertPending(AlertSender *alerts, Reconciler &reconciler, QSet<qint64> &inFlight, QJsonArray &failures)
{
    if (!alerts)
        return;
    auto pending = reconciler.unalerted();
    if (!pending) {
        qWarning("alerts: cannot list the discrepancies to alert: %s", qPrintable(pending.error().message));
        return;
    }
    // Longer than one alert's attempts (AlertSender: 3 x 5 s plus backoff): while it runs,
    // another reconcile process leaves the alert to this one.
    constexpr qint64 kClaimMs = 60000;
    for (const Discrepancy &d : *pending) {
        if (inFlight.contains(d.id))
            continue;
        auto claimed = reconciler.claimAlert(d.id, kClaimMs);
        if (!claimed) {
            qWarning("alerts: discrepancy %lld not claimed: %s", d.id, qPrintable(claimed.error().message));
            continue;
        }
        if (!*claimed)
            continue; // another reconcile process is sending it
        inFlight.insert(d.id);
        const qint64 id = d.id;
        alerts->post({{u"alert"_s, u"discrepancy_pending_approval"_s}, {u"discrepancy"_s, discrepancyJson(d)}},
                     [&reconciler, &inFlight, &failures, id](bool delivered, const QString &error) {
                         inFlight.remove(id);
                         if (!delivered)
                             failures.append(QJsonObject{{u"discrepancy"_s, id}, {u"error"_s, error}});
                         // Not delivered: the claim goes back and the next pass sends it again.
                         if (auto r = reconciler.finishAlert(id, delivered); !r)
                             qWarning("alerts: discrepancy %lld: the outcome of its alert was not recorded (it may "
                                      "be sent again): %s",
                                      id, qPrintable(r.error().message));
                     });
    }
}

} // namespace

namespace {

/// Every decision with who asserted it and where it came from (OS user, host, database role).
QJsonArray decisionsJson(const QList<DecisionRecord> &decisions)
{
    QJsonArray out;
    for (const DecisionRecord &r : decisions)
        out.append(QJsonObject{{u"decision"_s, r.decision == Decision::Approve ? u"approve"_s : u"reject"_s},
                               {u"operator"_s, r.operatorName},
                               {u"os_user"_s, r.osUser},
                               {u"host"_s, r.host},
                               {u"db_role"_s, r.dbRole.isEmpty() ? QJsonValue() : QJsonValue(r.dbRole)},
                               {u"reason"_s, r.reason},
                               {u"applied"_s, r.applied},
                               {u"at"_s, isoTime(r.atMs)}});
    return out;
}

/// One line per decision, for `discrepancy show`.
QString decisionsText(const QList<DecisionRecord> &decisions)
{
    QString out;
    for (const DecisionRecord &r : decisions)
        out += printable(u"decision:     %1 %2 by %3 (OS user %4 on %5%6): %7%8"_s.arg(
                   isoTime(r.atMs), r.decision == Decision::Approve ? u"approve"_s : u"reject"_s, r.operatorName,
                   r.osUser, r.host, r.dbRole.isEmpty() ? QString() : u", database role "_s + r.dbRole, r.reason,
                   r.applied || r.decision == Decision::Reject
                       ? QString()
                       : u" (the first of two approvals: it applied nothing)"_s))
            + u'\n';
    return out;
}

} // namespace

QJsonObject discrepancyJson(const Discrepancy &d)
{
    auto opt = [](qint64 v) { return v < 0 ? QJsonValue() : QJsonValue(v); };
    auto str = [](const QString &s) { return s.isEmpty() ? QJsonValue() : QJsonValue(s); };
    return {{u"id"_s, d.id},
            {u"kind"_s, discrepancyKindName(d.kind)},
            {u"sku"_s, d.sku},
            {u"status"_s, discrepancyStatusName(d.status)},
            {u"delta"_s, d.delta},
            {u"bucket"_s, opt(d.bucket)},
            {u"order"_s, str(d.order)},
            {u"token"_s, str(d.token)},
            {u"gate"_s, opt(d.gateValue)},
            {u"book"_s, opt(d.bookValue)},
            {u"ledger"_s, opt(d.ledgerValue)},
            {u"level"_s, str(discrepancyLevelName(d.level))},
            {u"correction"_s, str(correctionText(d.correction))},
            {u"proposal"_s, str(d.proposal)},
            {u"detail"_s, d.detail},
            {u"detected_at"_s, isoTime(d.detectedAtMs)},
            {u"resolved_by"_s, str(d.resolvedBy)},
            {u"reason"_s, str(d.reason)},
            {u"fingerprint"_s, str(std::holds_alternative<std::monostate>(d.correction) ? QString() : d.fingerprint())},
            {u"awaits_second_approver"_s, d.awaitsSecondApprover()},
            {u"resolvers"_s, QJsonArray::fromStringList(d.resolvers())},
            {u"decisions"_s, decisionsJson(d.decisions)}};
}

namespace {

// --- reconcile -------------------------------------------------------------------------------

/// `reconcile [--every SECONDS] [--grace SECONDS] [--alert-url URL]`: one pass (exit 3 iff
/// something waits for approval), or a loop until SIGINT/SIGTERM (one line per pass, on the
/// context's streams).
struct Reconcile final : Command {
    Reconcile()
        : Command({{u"reconcile"_s}, u"reconcile [--every SECONDS] [--grace SECONDS] [--alert-url URL]"_s,
                   u"compare gate, book and ledger; heal the gate, hold book corrections for approval (exit 3 if any "
                   u"wait)"_s,
                   {{u"every"_s,
                     u"Run a pass every SECONDS until SIGINT/SIGTERM; the exit code then tells the last pass."_s,
                     u"SECONDS"_s},
                    {u"grace"_s,
                     u"How old a held token must be (Redis time) to count as orphaned; default 30, at least the "
                     u"time a reserve may wait for the book (10) unless --unsafe-grace."_s,
                     u"SECONDS"_s},
                    {u"unsafe-grace"_s, u"Allow a --grace below that minimum (tests: it may fence live buyers)."_s},
                    {u"alert-url"_s, u"POST a JSON alert for each new discrepancy that needs approval."_s, u"URL"_s},
                    {u"alert-secret-file"_s,
                     u"Sign alerts with the key on FILE's first line (mode 0600; else FLASHSTOCK_ALERT_SECRET): "
                     u"X-FlashStock-Signature: sha256=HMAC-SHA256(key, X-FlashStock-Timestamp + \".\" + body)."_s,
                     u"FILE"_s},
                    {u"alert-password-file"_s,
                     u"The alert URL's password, for its user (mode 0600; else FLASHSTOCK_ALERT_PASSWORD)."_s,
                     u"FILE"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput Reconcile::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    auto grace = seconds(parser, u"grace"_s, 30, 0);
    if (!grace)
        return errorOutput(grace.error());
    const qint64 minGrace = Reconciler::minSafeGraceMs() / 1000;
    if (*grace < minGrace && !parser.isSet(u"unsafe-grace"_s))
        return errorOutput(usage(u"grace"_s, u"%1 s is shorter than a reserve may legitimately spend between the gate "
                                             u"and the book; the minimum is %2 s (--unsafe-grace allows less, for tests)"_s
                                                 .arg(*grace)
                                                 .arg(minGrace))
                               .error());
    auto every = seconds(parser, u"every"_s, 0, 1);
    if (!every)
        return errorOutput(every.error());
    std::unique_ptr<AlertSender> alerts;
    if (parser.isSet(u"alert-url"_s)) {
        QUrl url(parser.value(u"alert-url"_s), QUrl::StrictMode);
        if (!url.isValid() || (url.scheme() != u"http"_s && url.scheme() != u"https"_s))
            return errorOutput(usage(u"alert-url"_s, u"give an http:// or https:// URL"_s).error());
        // Secrets from a private file or the environment (the one rule: SecretFile), never argv.
        auto secret = secretFromFileOrEnvironment(parser.value(u"alert-secret-file"_s), u"alert-secret-file"_s,
                                                  "FLASHSTOCK_ALERT_SECRET");
        if (!secret)
            return errorOutput(secret.error());
        auto password = secretFromFileOrEnvironment(parser.value(u"alert-password-file"_s), u"alert-password-file"_s,
                                                    "FLASHSTOCK_ALERT_PASSWORD");
        if (!password)
            return errorOutput(password.error());
        if (!password->isEmpty() && url.password().isEmpty())
            url.setPassword(*password);
        alerts = std::make_unique<AlertSender>(url, secret->toUtf8());
    } else if (parser.isSet(u"alert-secret-file"_s) || parser.isSet(u"alert-password-file"_s)) {
        return errorOutput(usage(u"alert-url"_s, u"an alert secret needs --alert-url"_s).error());
    }
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    Reconciler reconciler(**engine);
    QSet<qint64> alertsInFlight;
    QJsonArray alertFailures; // given up since the last output
    // What the alerts did, for the output: those given up, with why (not only on stderr).
    const auto alertOutcome = [&](CommandOutput &out) {
        if (!alerts)
            return;
        out.json.insert(u"alerts"_s, QJsonObject{{u"delivered"_s, alerts->delivered()},
                                                 {u"failed"_s, alerts->failed()},
                                                 {u"in_flight"_s, alerts->inFlight()},
                                                 {u"failures"_s, alertFailures}});
        for (const QJsonValue &f : std::as_const(alertFailures))
            out.text += u"alert for discrepancy %1 %2\n"_s.arg(f[u"discrepancy"_s].toInteger())
                            .arg(printable(f[u"error"_s].toString()));
        alertFailures = {};
    };
    // Alerts call back into the reconciler: they end (delivered, given up or dropped) first.
    const auto finishAlerts = qScopeGuard([&] {
        if (alerts)
            alerts->flush(20000);
        alerts.reset();
    });

    if (!parser.isSet(u"every"_s)) {
        auto report = reconciler.runPass(*grace * 1000);
        if (!report)
            return errorOutput(report.error());
        alertPending(alerts.get(), reconciler, alertsInFlight, alertFailures); // sent before the run exits
        if (alerts)
            alerts->flush(20000);
        CommandOutput out = reportOutput(*report);
        alertOutcome(out);
        return out;
    }

    StopSignal::install();
    QTextStream &out = ctx.out;
    QTextStream &err = ctx.err;
    int passes = 0, failures = 0;
    bool lastFailed = false;
    qint64 lastPending = 0;
    while (!StopSignal::requested()) {
        auto report = reconciler.runPass(*grace * 1000);
        ++passes;
        lastFailed = !report.has_value();
        if (!report) {
            ++failures;
            err << u"reconcile pass %1 failed: %2\n"_s.arg(passes).arg(report.error().message);
        } else {
            lastPending = report->stillPending;
            alertPending(alerts.get(), reconciler, alertsInFlight, alertFailures);
            CommandOutput pass = reportOutput(*report);
            const bool alertsFailed = !alertFailures.isEmpty();
            alertOutcome(pass); // those that ended while the loop waited
            if (ctx.json)
                out << QString::fromUtf8(QJsonDocument(pass.json).toJson(QJsonDocument::Compact)) << '\n';
            else if (!report->discrepancies.isEmpty() || !report->warnings.isEmpty() || alertsFailed)
                out << pass.text;
        }
        out.flush();
        err.flush();
        for (const QString &note : ctx.takeNotes())
            err << note << '\n';
        // Alerts go out while the loop waits; it never waits on them beyond that.
        StopSignal::wait(*every * 1000);
    }
    // The exit code tells the last pass, as a single run would: pending beats a failure.
    CommandOutput done;
    done.json = {{u"stopped"_s, true}, {u"passes"_s, passes}, {u"failed_passes"_s, failures},
                 {u"still_pending"_s, lastPending}};
    done.text = u"reconcile stopped after %1 passes; %2 discrepancies wait for approval\n"_s.arg(passes).arg(lastPending);
    if (alerts)
        alerts->flush(20000);
    alertOutcome(done);
    done.exitCode = lastPending > 0 ? ExitPending : lastFailed ? ExitRuntime : ExitOk;
    // Printing the summary as one more JSON line keeps stdout one object per line.
    return done;
}

// --- discrepancy -----------------------------------------------------------------------------

/// `discrepancy list [--status S]`.
struct DiscrepancyList final : Command {
    DiscrepancyList()
        : Command({{u"discrepancy"_s, u"list"_s}, u"discrepancy list [--status STATUS]"_s,
                   u"discrepancies found so far, newest first"_s,
                   {{u"status"_s, u"Only auto_fixed, pending_approval, approved or rejected."_s, u"STATUS"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput DiscrepancyList::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    if (auto r = noPositional(args); !r)
        return errorOutput(r.error());
    std::optional<DiscrepancyStatus> status;
    if (parser.isSet(u"status"_s)) {
        status = discrepancyStatusFromName(parser.value(u"status"_s));
        if (!status)
            return errorOutput(usage(u"status"_s, u"unknown status %1"_s.arg(parser.value(u"status"_s))).error());
    }
    auto engine = ctx.engine(GateNeed::BookIsEnough);
    if (!engine)
        return errorOutput(engine.error());
    Reconciler reconciler(**engine);
    auto list = reconciler.list(status);
    if (!list)
        return errorOutput(list.error());
    CommandOutput out;
    QJsonArray arr;
    for (const Discrepancy &d : *list) {
        arr.append(discrepancyJson(d));
        out.text += discrepancyLine(d);
    }
    out.json = {{u"discrepancies"_s, arr}};
    if (list->isEmpty())
        out.text = u"no discrepancies\n"_s;
    return out;
}

/// `discrepancy show ID`.
struct DiscrepancyShow final : Command {
    DiscrepancyShow()
        : Command({{u"discrepancy"_s, u"show"_s}, u"discrepancy show ID"_s, u"one discrepancy in full"_s, {}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;
};

CommandOutput DiscrepancyShow::execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args)
{
    auto id = idArgument(args);
    if (!id)
        return errorOutput(id.error());
    auto engine = ctx.engine(GateNeed::BookIsEnough);
    if (!engine)
        return errorOutput(engine.error());
    Reconciler reconciler(**engine);
    auto d = reconciler.get(*id);
    if (!d)
        return errorOutput(d.error());
    CommandOutput out;
    out.json = discrepancyJson(*d);
    for (auto it = out.json.constBegin(); it != out.json.constEnd(); ++it)
        if (!it.value().isNull() && !it.value().isArray())
            out.text += u"%1: %2\n"_s.arg(it.key(), -12).arg(printable(it.value().toVariant().toString()));
    out.text += decisionsText(d->decisions);
    if (d->status == DiscrepancyStatus::PendingApproval && !std::holds_alternative<std::monostate>(d->correction))
        out.text += u"to approve exactly this: discrepancy approve %1 --seen %2 --reason TEXT\n"_s.arg(d->id).arg(
            d->fingerprint());
    return out;
}

/// `discrepancy approve ID --seen FINGERPRINT --reason TEXT` / `discrepancy reject ID
/// --reason TEXT`; the approver is `--operator`, from this process's OS user and host; exit 4
/// when not permitted.
class DiscrepancyDecide : public Command {
public:
    DiscrepancyDecide(Decision decision, const QString &verb, const QString &summary, const QString &synopsis,
                      QList<QCommandLineOption> options)
        : Command({{u"discrepancy"_s, verb}, synopsis, summary,
                   QList<QCommandLineOption>{{u"reason"_s, u"Why (required)."_s, u"TEXT"_s}} + options})
        , m_decision(decision)
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;

private:
    Decision m_decision;
};

CommandOutput DiscrepancyDecide::execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args)
{
    auto id = idArgument(args);
    if (!id)
        return errorOutput(id.error());
    const QString reason = parser.value(u"reason"_s);
    if (reason.trimmed().isEmpty())
        return errorOutput(usage(u"reason"_s, u"--reason TEXT is required"_s).error());
    const QStringList seed = seedApprovers(ctx.profile.dataDir);
    auto engine = ctx.engine();
    if (!engine)
        return errorOutput(engine.error());
    Reconciler reconciler(**engine);
    const DecisionBy by = decisionByThisProcess(ctx.profile.operatorName);
    Result<Discrepancy> d;
    if (m_decision == Decision::Approve) {
        // What the approver saw: the proposal whose fingerprint --seen names.
        auto shown = reconciler.get(*id);
        if (!shown)
            return errorOutput(shown.error());
        const QString seen = parser.value(u"seen"_s).trimmed();
        const QString proposal = printable(shown->proposal);
        if (seen.isEmpty())
            return errorOutput(usage(u"seen"_s, u"say which proposal you approve: discrepancy %1 proposes: %2 (%3 "
                                                u"units); to approve exactly this, add --seen %4"_s.arg(*id)
                                                    .arg(proposal)
                                                    .arg(correctionUnits(*shown))
                                                    .arg(shown->fingerprint()))
                                   .error());
        if (shown->status == DiscrepancyStatus::PendingApproval && seen != shown->fingerprint())
            return errorOutput(usage(u"seen"_s, u"discrepancy %1 proposes another correction now (%2, fingerprint "
                                                u"%3), not %4; show it and decide again; nothing changed"_s.arg(*id)
                                                    .arg(proposal, shown->fingerprint(), printable(seen)))
                                   .error());
        d = reconciler.approve(*id, shown->correction, by, reason, seed);
    } else {
        d = reconciler.reject(*id, by, reason, seed);
    }
    if (!d)
        return errorOutput(d.error());
    CommandOutput out;
    out.json = discrepancyJson(*d);
    out.text = discrepancyLine(*d);
    if (d->awaitsSecondApprover())
        out.text += u"    approved by %1; a correction of %2 units needs a second, different approver "
                    u"(approver policy --four-eyes-units)\n"_s.arg(printable(by.operatorName),
                                                                     QString::number(correctionUnits(*d)));
    return out;
}

/// `discrepancy approve ID --seen FINGERPRINT --reason TEXT`: applies the proposal it names, once.
struct DiscrepancyApprove final : DiscrepancyDecide {
    DiscrepancyApprove()
        : DiscrepancyDecide(
              Decision::Approve, u"approve"_s,
              u"apply the proposed correction you saw once, as a ledgered adjustment (approvers only)"_s,
              u"discrepancy approve ID --seen FINGERPRINT --reason TEXT [--operator NAME]"_s,
              {{u"seen"_s,
                u"The proposal you approve: its fingerprint, as `discrepancy show ID` prints it (required; without it "
                u"the command shows the proposal and its fingerprint and changes nothing). If the discrepancy "
                u"proposes another correction now, or its SKU moved since the proposal, nothing is applied (exit 2, "
                u"\"the SKU moved; reconcile and decide again\"): run `reconcile`, which brings the proposal up to "
                u"date, show it and decide again."_s,
                u"FINGERPRINT"_s}})
    {
    }
};

/// `discrepancy reject ID --reason TEXT`: no stock moves.
struct DiscrepancyReject final : DiscrepancyDecide {
    DiscrepancyReject()
        : DiscrepancyDecide(Decision::Reject, u"reject"_s,
                            u"refuse a proposed correction without changing stock; a discrepancy that pauses its SKU "
                            u"stays open with the next correction proposed while the book still shows it (approvers "
                            u"only)"_s,
                            u"discrepancy reject ID --reason TEXT [--operator NAME]"_s, {})
    {
    }
};

} // namespace

Commands reconcileCommands()
{
    return makeCommands<Reconcile, DiscrepancyList, DiscrepancyShow, DiscrepancyApprove, DiscrepancyReject>();
}

} // namespace flashstock
