#include "Engine.h"

#include "GateRestore.h"
#include "Identifiers.h"
#include "UnknownOutcomes.h"
#include "gate/Gate.h"
#include "store/Database.h"
#include "store/DiscrepancyStore.h"
#include "store/BookWriters.h"
#include "store/ExpiryStore.h"
#include "store/SaleStore.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QMap>
#include <QScopeGuard>
#include <QSet>
#include <QSysInfo>
#include <QThread>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// How long a SKU's sale is cached by one engine before it is read again (ms).
constexpr qint64 kSaleCacheMs = 1000;

} // namespace

Result<std::unique_ptr<Engine>> Engine::open(const EngineOptions &options)
{
    auto db = Database::open(options.db);
    if (!db)
        return std::unexpected(db.error());
    std::unique_ptr<Engine> engine(new Engine);
    engine->m_db = std::move(*db);
    engine->m_book = std::make_unique<Book>(*engine->m_db, options.actor);
    engine->m_sales = std::make_unique<SaleStore>(*engine->m_db);
    if (options.redis)
        engine->attachGate(*options.redis);
    return engine;
}

void Engine::attachGate(const RedisUrl &url)
{
    m_restore.reset();
    m_gate = url.isNone() ? nullptr : std::make_unique<Gate>(url);
    if (m_gate)
        m_restore = std::make_unique<GateRestore>(*m_gate, *m_book, *m_sales);
}

Engine::~Engine() = default;

void Engine::warn(WarningKind kind, const QString &sku, const QString &message)
{
    m_warnings.add(EngineWarning{kind, sku, message, QDateTime::currentMSecsSinceEpoch()});
}

WarningRing Engine::takeWarnings()
{
    return m_warnings.take();
}

// --- stock ---------------------------------------------------------------------------------

Result<Adjustment> Engine::addSku(const QString &sku, qint64 stock, int buckets)
{
    auto added = m_book->addSku(sku, stock, buckets);
    if (!added || !m_gate)
        return added;
    if (auto loaded = m_restore->restoreIfAbsent(sku); !loaded)
        warn(WarningKind::GateNotLoaded, sku,
             u"gate not loaded for %1 (the next reserve or gate rebuild loads it): %2"_s.arg(sku, loaded.error().message));
    return added;
}

Result<Adjustment> Engine::restock(const QString &sku, qint64 qty, const QString &reason)
{
    auto adjusted = m_book->restock(sku, qty, reason);
    if (!adjusted || !m_gate)
        return adjusted;
    auto raised = m_gate->adjust(sku, adjusted->units);
    if (raised && !*raised) {
        // No stock key: load it from the book, which already holds the restock.
        if (auto loaded = refillMissingStock(sku); !loaded)
            raised = std::unexpected(loaded.error());
    }
    if (!raised)
        warn(WarningKind::GateNotRaised, sku,
             u"gate not raised by %1 units for %2 (the reconciler raises it): %3"_s.arg(qty).arg(
                 sku, raised.error().message));
    return adjusted;
}

// --- sales ---------------------------------------------------------------------------------

Result<std::optional<Sale>> Engine::saleOf(const QString &sku)
{
    auto it = m_saleCache.find(sku);
    if (it != m_saleCache.end() && it->age.elapsed() < kSaleCacheMs)
        return it->sale;
    auto sale = m_sales->latestFor(sku);
    if (!sale)
        return std::unexpected(sale.error());
    CachedSale cached{*sale, {}};
    cached.age.start();
    m_saleCache.insert(sku, cached);
    return *sale;
}

Result<bool> Engine::pausedInBook(const QString &sku)
{
    auto it = m_pauseCache.find(sku);
    if (it != m_pauseCache.end() && it->age.elapsed() < kSaleCacheMs)
        return it->paused;
    auto paused = DiscrepancyStore(*m_db).isPaused(sku);
    if (!paused)
        return std::unexpected(paused.error());
    CachedPause cached{*paused, {}};
    cached.age.start();
    m_pauseCache.insert(sku, cached);
    return *paused;
}

Result<void> Engine::pushSaleToGate(const Sale &sale)
{
    if (!m_restore)
        return {};
    auto refilled = m_restore->pushSale(sale);
    if (!refilled)
        return std::unexpected(refilled.error());
    if (*refilled)
        warnRefilled(sale.sku, **refilled);
    return {};
}

Result<qint64> Engine::refillMissingStock(const QString &sku)
{
    auto restored = m_restore->restoreIfAbsent(sku);
    if (restored)
        warnRefilled(sku, *restored);
    return restored;
}

void Engine::warnRefilled(const QString &sku, qint64 available)
{
    warn(WarningKind::GateRestored, sku,
         u"gate of %1 had no stock key (Redis lost its data, or the key was evicted): refilled from the book, "
         u"available %2"_s.arg(sku).arg(available));
}

Result<void> Engine::syncGateSale(const QString &sku)
{
    if (!m_gate)
        return {};
    auto latest = m_sales->latestFor(sku);
    if (!latest)
        return std::unexpected(latest.error());
    if (!*latest)
        return {};
    return pushSaleToGate(**latest);
}

Result<Sale> Engine::createSale(const QString &sku, qint64 startMs, qint64 endMs, qint64 holdSeconds,
                                qint64 perUserLimit)
{
    auto sale = m_sales->create(sku, startMs, endMs, holdSeconds, perUserLimit, m_book->actor().operatorName);
    if (!sale)
        return sale;
    m_saleCache.remove(sku);
    if (auto pushed = pushSaleToGate(*sale); !pushed)
        warn(WarningKind::SaleNotPushed, sku,
             u"gate did not get sale %1 of %2: %3"_s.arg(sale->id).arg(sku, pushed.error().message));
    return sale;
}

Result<Sale> Engine::setSaleStatus(qint64 saleId, SaleStatus status)
{
    const bool opening = status == SaleStatus::Open && m_gate;
    if (status == SaleStatus::Open) {
        auto current = m_sales->get(saleId);
        if (!current)
            return current;
        if (current->status != SaleStatus::Open && current->status != SaleStatus::Stopped) {
            auto blockers = launchBlockers(current->sku, saleId);
            if (!blockers)
                return std::unexpected(blockers.error());
            if (!blockers->isEmpty())
                return fail(ErrorCode::InvalidArgument,
                            u"sale %1 not started: %2"_s.arg(saleId).arg(blockers->first().message), u"sale"_s);
            // The gate opens first: a sale the gate cannot enforce (window, per-user limit) is
            // not opened in the book either.
            if (opening) {
                Sale target = *current;
                target.status = SaleStatus::Open;
                if (auto pushed = pushSaleToGate(target); !pushed)
                    return fail(pushed.error().code, u"sale %1 not started: the gate did not open it: %2"_s.arg(
                                                         saleId).arg(pushed.error().message));
            }
        }
    }
    auto sale = m_sales->setStatus(saleId, status);
    if (!sale) {
        if (opening) {
            // The gate follows the book again (best effort: the book refuses a closed sale anyway).
            if (auto current = m_sales->get(saleId); current)
                if (auto pushed = syncGateSale(current->sku); !pushed)
                    warn(WarningKind::SaleNotPushed, current->sku,
                         u"gate still has sale %1 open: %2"_s.arg(saleId).arg(pushed.error().message));
        }
        return sale;
    }
    m_saleCache.remove(sale->sku);
    // What the book holds now, not the row read above: a change by another operator in
    // between must not be overwritten in the gate by this one.
    if (auto pushed = syncGateSale(sale->sku); !pushed)
        warn(WarningKind::SaleNotPushed, sale->sku,
             u"gate did not get sale %1 as %2 (the book refuses its reserves; gate rebuild fixes the gate): %3"_s
                 .arg(saleId)
                 .arg(saleStatusName(sale->status), pushed.error().message));
    return sale;
}

Result<QList<LaunchBlocker>> Engine::launchBlockers(const QString &sku, qint64 exceptSale)
{
    QList<LaunchBlocker> blockers;
    // One live sale per SKU (SaleStore): the latest one is the only one that can be live.
    auto latest = m_sales->latestFor(sku);
    if (!latest)
        return std::unexpected(latest.error());
    if (const auto &sale = *latest; sale && sale->id != exceptSale && sale->status != SaleStatus::Stopped)
        blockers << LaunchBlocker{LaunchBlocker::Kind::LiveSale, sale->id,
                                  u"sale %1 of %2 is %3: stop it first"_s.arg(sale->id).arg(
                                      sku, saleStatusName(sale->status))};
    auto pending = DiscrepancyStore(*m_db).list(DiscrepancyStatus::PendingApproval);
    if (!pending)
        return std::unexpected(pending.error());
    for (const Discrepancy &d : std::as_const(*pending))
        if (d.sku == sku)
            blockers << LaunchBlocker{LaunchBlocker::Kind::PendingDiscrepancy, d.id,
                                      u"discrepancy %1 of %2 waits for approval: approve or reject it first"_s.arg(d.id)
                                          .arg(sku)};
    return blockers;
}

Result<Sale> Engine::setSaleBookOnly(qint64 saleId, bool on)
{
    auto sale = m_sales->setBookOnly(saleId, on);
    if (!sale)
        return sale;
    m_saleCache.remove(sale->sku);
    if (!on && m_gate) {
        if (auto rebuilt = rebuildGate(sale->sku); !rebuilt)
            warn(WarningKind::GateNotRebuilt, sale->sku,
                 u"gate of %1 not rebuilt after book-only mode: %2; run gate rebuild"_s.arg(sale->sku,
                                                                                           rebuilt.error().message));
        else if (auto pushed = pushSaleToGate(*sale); !pushed)
            warn(WarningKind::SaleNotPushed, sale->sku,
                 u"gate did not get sale %1: %2"_s.arg(saleId).arg(pushed.error().message));
    }
    return sale;
}

Result<qint64> Engine::rebuildGate(const QString &sku)
{
    if (!m_restore)
        return fail(ErrorCode::InvalidArgument, u"redis: no gate is configured (--redis none)"_s, u"redis"_s);
    return m_restore->rebuild(sku);
}

void Engine::gateFollowsDecision(const QString &sku)
{
    m_pauseCache.remove(sku);
    if (!m_restore)
        return;
    if (auto r = m_restore->afterDecision(sku); !r)
        warn(WarningKind::GateNotRebuilt, sku,
             u"gate of %1 not rebuilt after the decision (the next reconcile pass heals it; gate rebuild does it "
             u"now): %2"_s.arg(sku, r.error().message));
}

GateSide Engine::gateLevels(const QString &sku)
{
    GateSide side;
    if (!m_gate)
        return side;
    side.configured = true;
    auto available = m_gate->available(sku);
    if (!available) {
        side.error = available.error().message;
        return side;
    }
    side.reachable = true;
    side.available = *available;
    // The counters are best effort (the console's rates): unreadable ones never hide the stock.
    if (auto counts = m_gate->counts(sku))
        side.counts = *counts;
    else
        side.error = counts.error().message;
    return side;
}

// --- orders --------------------------------------------------------------------------------

bool Engine::releaseTokens(const QList<OrderLine> &lines, const QString &why)
{
    if (!m_gate)
        return false;
    bool all = true;
    for (const OrderLine &line : lines) {
        if (line.token.isEmpty())
            continue;
        // An unknown token (purged, or another gate's) holds nothing either.
        if (auto r = m_gate->release(line.sku, line.token); !r && r.error().code != ErrorCode::InvalidArgument) {
            all = false;
            warn(WarningKind::TokenNotReleased, line.sku,
                 u"gate did not take back token %1 of %2 (%3; the next expire or the reconciler gives it back): %4"_s
                     .arg(line.token, line.sku, why, r.error().message));
        }
    }
    return all;
}

void Engine::giveBackReleased(const OrderChange &change, const QString &why)
{
    if (!releaseTokens(change.lines, why))
        return;
    if (auto r = m_book->gateReleased(change.order); !r)
        warn(WarningKind::TokenNotReleased, change.lines.value(0).sku,
             u"gate took back the units of order %1, not recorded in the book (the next expire does it again): %2"_s
                 .arg(change.order, r.error().message));
}

Result<ReserveRequest> Engine::checkReserve(const QString &order, const QString &user, const QList<OrderLine> &lines,
                                            std::optional<qint64> holdSeconds)
{
    if (auto r = checkOrderId(order); !r)
        return std::unexpected(r.error());
    if (!user.isEmpty()) {
        if (auto r = checkName(user, u"user"_s); !r)
            return std::unexpected(r.error());
    }
    if (holdSeconds) {
        if (auto r = checkHoldSeconds(*holdSeconds); !r)
            return std::unexpected(r.error());
    }
    auto normalized = Book::normalizeLines(lines);
    if (!normalized)
        return std::unexpected(normalized.error());
    return ReserveRequest{order, user, std::move(*normalized), holdSeconds};
}

Result<ReserveResult> Engine::reserve(const QString &order, const QString &user, const QList<OrderLine> &lines,
                                      std::optional<qint64> holdSeconds)
{
    auto request = checkReserve(order, user, lines, holdSeconds);
    if (!request)
        return std::unexpected(request.error());
    ReserveAttempt attempt = planReserve(std::move(*request));
    passGate({&attempt});
    return finishReserve(attempt);
}

ReserveAttempt Engine::planReserve(ReserveRequest request)
{
    ReserveAttempt a;
    a.request = std::move(request);
    a.lines = a.request.lines;
    a.holdSeconds = a.request.holdSeconds.value_or(kDefaultHoldSeconds);
    a.bookOnly = !m_gate;
    for (const OrderLine &line : std::as_const(a.lines)) {
        auto sale = saleOf(line.sku);
        if (!sale) {
            a.answer = std::unexpected(sale.error());
            return a;
        }
        if (!*sale)
            continue;
        if (a.request.user.isEmpty()) {
            a.answer = fail(ErrorCode::InvalidArgument,
                            u"user: %1 is on sale (sale %2), so a reserve must name its user (--user)"_s.arg(line.sku)
                                .arg((*sale)->id),
                            u"user"_s);
            return a;
        }
        a.sales.insert(line.sku, **sale);
        a.bookOnly = a.bookOnly || (*sale)->bookOnly;
    }
    if (!a.sales.isEmpty()) {
        a.holdSeconds = std::numeric_limits<qint64>::max();
        for (const Sale &s : std::as_const(a.sales))
            a.holdSeconds = std::min(a.holdSeconds, s.holdSeconds);
    }
    return a;
}

void Engine::passGate(const QList<ReserveAttempt *> &attempts)
{
    // Every line of every open attempt, grouped by SKU: one pipeline per SKU.
    struct Call {
        ReserveAttempt *attempt;
        int line;
    };
    QMap<QString, QList<Call>> calls;
    for (ReserveAttempt *a : attempts) {
        if (a->answer || a->bookOnly)
            continue;
        for (int i = 0; i < a->lines.size(); ++i)
            calls[a->lines[i].sku] << Call{a, i};
    }
    if (calls.isEmpty())
        return;
    QHash<ReserveAttempt *, QList<Result<GateReservation>>> replies;
    for (auto it = calls.cbegin(); it != calls.cend(); ++it) {
        QList<GateReserveRequest> requests;
        requests.reserve(it->size());
        for (const Call &c : *it)
            requests << GateReserveRequest{c.attempt->request.order, c.attempt->request.user,
                                           c.attempt->lines[c.line].qty};
        const Result<QList<GateReservation>> answered = m_gate->reserveBatch(it.key(), requests);
        for (qsizetype k = 0; k < it->size(); ++k) {
            const Call &c = it->at(k);
            QList<Result<GateReservation>> &mine = replies[c.attempt];
            mine.resize(c.attempt->lines.size(), fail(ErrorCode::Internal, u"no gate reply"_s));
            mine[c.line] = answered ? Result<GateReservation>(answered->at(k))
                                    : Result<GateReservation>(std::unexpected(answered.error()));
        }
    }
    for (auto it = replies.cbegin(); it != replies.cend(); ++it) {
        ReserveAttempt &a = *it.key();
        // Every token this attempt issued is its own before any line decides: a refusal of
        // one line gives back the tokens of the others, whichever came first.
        for (int i = 0; i < it->size(); ++i)
            recordIssued(a, i, it->at(i));
        for (int i = 0; i < it->size(); ++i)
            if (judgeGateReply(a, i, it->at(i)) == LineStep::Decided)
                break;
    }
}

void Engine::recordIssued(ReserveAttempt &attempt, int index, const Result<GateReservation> &reply)
{
    if (!reply || reply->code != GateCode::Reserved)
        return;
    attempt.lines[index].token = reply->token;
    attempt.created << attempt.lines[index];
}

void Engine::refuseAttempt(ReserveAttempt &attempt, Outcome outcome, const QString &sku)
{
    releaseTokens(attempt.created, u"reserve refused"_s);
    attempt.answer = ReserveResult{outcome, attempt.request.order, attempt.lines, sku, 0};
}

void Engine::failAttempt(ReserveAttempt &attempt, const Error &error)
{
    releaseTokens(attempt.created, u"reserve failed"_s);
    attempt.answer = std::unexpected(error);
}

Engine::LineStep Engine::judgeGateReply(ReserveAttempt &a, int index, const Result<GateReservation> &g)
{
    const QString &sku = a.lines[index].sku;
    if (!g) {
        if (g.error().code == ErrorCode::Unavailable) {
            warn(WarningKind::GateUnavailable, sku, u"gate unavailable: %1"_s.arg(g.error().message));
            refuseAttempt(a, Outcome::GateUnavailable, sku);
        } else {
            failAttempt(a, g.error());
        }
        return LineStep::Decided;
    }
    switch (g->code) {
    case GateCode::Reserved: return LineStep::Taken;
    case GateCode::Existing:
        a.lines[index].token = g->token;
        // A token past held needs the book's word (checkExistingToken, in finishReserve).
        if (g->state == TokenState::Held)
            return LineStep::Taken;
        a.toResolve << std::pair{index, *g};
        return LineStep::Resolve;
    case GateCode::NoStockKey:
        a.toResolve << std::pair{index, *g};
        return LineStep::Resolve;
    case GateCode::OutOfStock: refuseAttempt(a, Outcome::OutOfStock, sku); break;
    case GateCode::LimitExceeded: refuseAttempt(a, Outcome::LimitExceeded, sku); break;
    case GateCode::SaleClosed: refuseAttempt(a, Outcome::SaleClosed, sku); break;
    case GateCode::Paused: refuseAttempt(a, Outcome::Paused, sku); break;
    }
    return LineStep::Decided;
}

bool Engine::resolveGate(ReserveAttempt &a)
{
    const auto open = std::exchange(a.toResolve, {});
    for (const auto &[i, first] : open) {
        GateReservation reply = first;
        if (reply.code == GateCode::NoStockKey) {
            auto again = restoreAndReserve(a.request.order, a.request.user, a.lines[i]);
            recordIssued(a, i, again);
            if (again && again->code == GateCode::NoStockKey) {
                failAttempt(a, {ErrorCode::Internal,
                                u"gate stock key of %1 is missing even after a reload"_s.arg(a.lines[i].sku), {}});
                return false;
            }
            const LineStep step = judgeGateReply(a, i, again);
            if (step == LineStep::Decided)
                return false;
            if (step == LineStep::Taken)
                continue;
            reply = *again; // an existing token past held: checked right here
        }
        if (auto usable = checkExistingToken(a.request.order, reply); !usable) {
            failAttempt(a, usable.error());
            return false;
        }
    }
    a.toResolve.clear();
    return true;
}

Result<GateReservation> Engine::restoreAndReserve(const QString &order, const QString &user, const OrderLine &line)
{
    // The stock key is gone (never loaded, flushed, evicted, Redis restarted without its
    // data): restore the SKU's gate from the book (stock only if still absent) and try once
    // more. Never answer out_of_stock for that.
    auto restored = m_restore->restoreOnce(line.sku);
    if (!restored)
        return std::unexpected(restored.error());
    if (*restored)
        warnRefilled(line.sku, **restored);
    return m_gate->reserve(line.sku, order, user, line.qty);
}

Result<void> Engine::checkExistingToken(const QString &order, const GateReservation &g)
{
    // A held token is a first attempt that never reached the book: this call completes it.
    // (A released one never comes back: the gate issues a fresh token for it.) A settled or
    // sold token whose order the book does not know belongs to another book: its units are
    // not the gate's to use again, and no retry changes that (bad input, not transient).
    if (g.state == TokenState::Held)
        return {};
    auto status = m_book->orderStatus(order);
    if (!status)
        return std::unexpected(status.error());
    if (!status->has_value())
        return fail(ErrorCode::InvalidArgument,
                    u"order %1 already has gate token %2 (%3) but no order in this book; use a new order id"_s.arg(
                        order, g.token, tokenStateName(g.state)),
                    u"order"_s);
    return {};
}

Result<ReserveResult> Engine::finishReserve(ReserveAttempt &attempt)
{
    if (auto order = prepareBook(attempt))
        applyBook(attempt, bookReserve(std::move(*order)));
    return *attempt.answer;
}

std::optional<ReserveOrder> Engine::prepareBook(ReserveAttempt &a)
{
    if (a.answer)
        return std::nullopt;
    if (a.bookOnly) {
        if (auto refused = refusedWithoutGate(a)) {
            a.answer = std::move(*refused);
            return std::nullopt;
        }
    } else {
        if (!resolveGate(a))
            return std::nullopt;
        if (auto closed = closedInBook(a.request.order, a.lines, a.sales)) {
            releaseTokens(a.created, u"sale not open in the book"_s);
            a.answer = *closed;
            return std::nullopt;
        }
    }
    ReserveOrder order{a.request.order, a.request.user, a.lines, a.holdSeconds, {},
                       a.request.actor.operatorName.isEmpty() ? m_book->actor() : a.request.actor};
    // Without the gate the book checks the per-user limits itself, inside its transaction.
    if (a.bookOnly)
        for (const Sale &s : std::as_const(a.sales))
            if (s.perUserLimit > 0)
                order.userLimits.insert(s.sku, s.perUserLimit);
    return order;
}

Result<ReserveResult> Engine::bookReserve(ReserveOrder order)
{
    if (m_writers)
        return m_writers->reserveAndWait(std::move(order));
    return m_book->reserveBatch({std::move(order)}).constFirst();
}

std::optional<Result<ReserveResult>> Engine::refusedWithoutGate(const ReserveAttempt &a)
{
    const QString &order = a.request.order;
    // Without the gate's pause key, a pending discrepancy pauses the SKU here (an indexed
    // lookup, cached like the sale for at most a second).
    for (const OrderLine &line : a.lines) {
        auto paused = pausedInBook(line.sku);
        if (!paused)
            return std::unexpected(paused.error());
        if (*paused)
            return ReserveResult{Outcome::Paused, order, a.lines, line.sku, 0};
    }
    if (a.sales.isEmpty())
        return std::nullopt;
    // Without the gate the engine enforces the sale's window itself, by the database clock.
    auto now = m_db->nowMs();
    if (!now)
        return std::unexpected(now.error());
    for (const OrderLine &line : a.lines) {
        auto it = a.sales.constFind(line.sku);
        if (it != a.sales.cend() && !it->isSelling(*now))
            return ReserveResult{Outcome::SaleClosed, order, a.lines, line.sku, 0};
    }
    return std::nullopt;
}

void Engine::applyBook(ReserveAttempt &a, Result<ReserveResult> booked)
{
    QList<BookedAttempt> one{BookedAttempt{&a, std::move(booked)}};
    applyBooks(one);
}

void Engine::applyBooks(const QList<BookedAttempt> &booked)
{
    QList<OrderLine> toSettle;
    for (const auto &[a, answer] : booked) {
        a->answer = answer;
        if (a->bookOnly)
            continue;
        if (!answer) {
            // A lost COMMIT the book could not settle by replaying: the tokens stay held, and
            // this process (recordUnknownOutcomes) or the reconciler finds out (the order is
            // in the book or it is fenced) instead of a guess.
            if (answer.error().code != ErrorCode::OutcomeUnknown)
                releaseTokens(a->created, u"book failed"_s);
            else if (m_unknown)
                m_unknown->add(a->created);
            continue;
        }
        if (answer->outcome != Outcome::Reserved) {
            // The tokens the book's order of this id holds are that order's (ReserveResult::heldTokens).
            QList<OrderLine> mine;
            for (const OrderLine &l : std::as_const(a->created))
                if (!answer->heldTokens.contains(l.token))
                    mine << l;
            releaseTokens(mine, u"book refused"_s);
            // The gate let it through, so its counters missed this refusal (the reject rate).
            const QString sku = answer->shortSku.isEmpty() ? a->lines.first().sku : answer->shortSku;
            if (answer->outcome != Outcome::Duplicate)
                if (auto counted = m_gate->countRefusal(sku, answer->outcome); !counted)
                    warn(WarningKind::RefusalNotCounted, sku,
                         u"gate did not count the book's %1 refusal of %2: %3"_s.arg(outcomeWord(answer->outcome), sku,
                                                                                   counted.error().message));
            continue;
        }
        toSettle << releaseExtra(*answer, a->created);
    }
    settleBooked(toSettle);
}

std::optional<ReserveResult> Engine::closedInBook(const QString &order, const QList<OrderLine> &lines,
                                                  const QHash<QString, Sale> &sales)
{
    // The gate enforces the sale's window and limit; the book's status has the last word,
    // so a gate that missed a pause or stop (down at the time) never sells for it.
    for (const OrderLine &line : lines) {
        auto it = sales.constFind(line.sku);
        if (it == sales.cend() || it->status == SaleStatus::Open)
            continue;
        if (auto counted = m_gate->countRefusal(line.sku, Outcome::SaleClosed); !counted)
            warn(WarningKind::RefusalNotCounted, line.sku,
                 u"gate did not count the book's sale_closed refusal of %1: %2"_s.arg(line.sku, counted.error().message));
        return ReserveResult{Outcome::SaleClosed, order, lines, line.sku, 0};
    }
    return std::nullopt;
}

QList<OrderLine> Engine::releaseExtra(const ReserveResult &booked, const QList<OrderLine> &created)
{
    // The book may have answered from an order it already held (a repeat whose gate
    // mapping was lost): a token this call created that the book did not store is extra.
    QSet<QString> stored;
    for (const OrderLine &l : booked.lines)
        stored.insert(l.token);
    QList<OrderLine> extra;
    for (const OrderLine &l : created)
        if (!stored.contains(l.token))
            extra << l;
    releaseTokens(extra, u"repeat of a booked order"_s);
    QList<OrderLine> toSettle;
    for (const OrderLine &l : booked.lines)
        if (!l.token.isEmpty())
            toSettle << l;
    return toSettle;
}

void Engine::settleBooked(const QList<OrderLine> &lines)
{
    if (lines.isEmpty())
        return;
    QList<GateTokenRef> tokens;
    tokens.reserve(lines.size());
    for (const OrderLine &l : lines)
        tokens << GateTokenRef{l.sku, l.token};
    const QList<Result<void>> settled = m_gate->settlePipeline(tokens);
    for (qsizetype i = 0; i < settled.size(); ++i)
        if (!settled[i])
            warn(WarningKind::TokenNotSettled, lines[i].sku,
                 u"gate did not settle token %1 of %2 (the reconciler settles it): %3"_s.arg(
                     lines[i].token, lines[i].sku, settled[i].error().message));
}

Result<OrderChange> Engine::confirm(const QString &order, const QString &paymentRef, const Actor &by)
{
    FinishOrder request{order, paymentRef, by};
    auto change = m_writers ? m_writers->confirmAndWait(std::move(request))
                            : m_book->confirmBatch({std::move(request)}).constFirst();
    if (!change || !m_gate)
        return change;
    if (change->outcome == Outcome::Paid || change->outcome == Outcome::Duplicate) {
        for (const OrderLine &line : change->lines) {
            if (line.token.isEmpty())
                continue;
            if (auto r = m_gate->markSold(line.sku, line.token); !r)
                warn(WarningKind::TokenNotSold, line.sku,
                     u"gate did not mark token %1 of %2 sold: %3"_s.arg(line.token, line.sku, r.error().message));
        }
    }
    return change;
}

Result<OrderChange> Engine::confirm(const QString &order, const QString &paymentRef)
{
    return confirm(order, paymentRef, m_book->actor());
}

Result<OrderChange> Engine::release(const QString &order, const QString &reason, const Actor &by)
{
    FinishOrder request{order, reason, by};
    auto change = m_writers ? m_writers->releaseAndWait(std::move(request))
                            : m_book->releaseBatch({std::move(request)}).constFirst();
    // Released now, or earlier while the gate was down: giving the tokens back is idempotent.
    if (change && (change->outcome == Outcome::Released || change->outcome == Outcome::AlreadyClosed))
        giveBackReleased(*change, u"release"_s);
    return change;
}

Result<OrderChange> Engine::release(const QString &order, const QString &reason)
{
    return release(order, reason, m_book->actor());
}

Result<QList<OrderChange>> Engine::expire(std::optional<qint64> nowMs)
{
    // Each order's units go back as it is released: a run killed half-way leaves at most
    // the order it was on, which the next run finds below.
    auto released = m_book->expire(nowMs, 200, [this](const OrderChange &change) {
        giveBackReleased(change, u"expiry"_s);
    });
    if (!released || !m_gate)
        return released;
    QSet<QString> tried;
    for (;;) {
        auto due = m_book->gateReleasesDue();
        if (!due)
            return std::unexpected(due.error());
        int fresh = 0;
        for (const OrderChange &change : *due) {
            if (tried.contains(change.order))
                continue;
            tried.insert(change.order);
            ++fresh;
            giveBackReleased(change, u"left by an earlier release"_s);
        }
        if (fresh == 0)
            break;
    }
    return released;
}

Result<ExpirerPass> Engine::expireAsExpirer(const ExpirerId &who)
{
    auto released = expire();
    if (!released)
        return std::unexpected(released.error());
    ExpirerPass pass{*released, {}};
    const QString expirer = u"%1@%2:%3"_s.arg(who.kind, QSysInfo::machineHostName())
                                .arg(QCoreApplication::applicationPid());
    if (auto beat = ExpiryStore(*m_db).beat(expirer, who.kind, m_book->actor().operatorName, who.everyMs,
                                            pass.released.size(), who.address);
        !beat)
        pass.heartbeatProblem = beat.error().message;
    return pass;
}

Result<ExpiryStatus> Engine::expiryStatus()
{
    return ExpiryStore(*m_db).status();
}

} // namespace flashstock
