// Book: batches (group commit). Many orders in one write transaction, each order's
// statements inside its own savepoint; the single-order reserve, confirm and release are
// batches of one. Expiry releases its due holds in batches.

#include "store/Book.h"

#include "Identifiers.h"
#include "store/BookRows.h"
#include "store/BookSql.h"
#include "store/Database.h"
#include "store/SaleStore.h"
#include "store/SqlValues.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>

#include <algorithm>
#include <map>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// Errors after which the batch's transaction cannot go on: every order shares them.
bool endsBatch(ErrorCode code)
{
    return code == ErrorCode::Conflict || code == ErrorCode::Unavailable || code == ErrorCode::OutcomeUnknown;
}

/// The answer a repeat of the same call gives once `first` committed: what a replay finds
/// when the lost COMMIT did commit.
bool isRepeatOf(Outcome replay, Outcome first)
{
    return replay == first || (first == Outcome::Paid && replay == Outcome::Duplicate)
        || (first == Outcome::Released && replay == Outcome::AlreadyClosed);
}

/// The answer of a replay after a lost COMMIT (`lost`): the replay's own, unless it could not
/// reach the book either; then nobody knows yet, and the answer says so.
template <typename T>
Result<T> afterReplay(Result<T> replay, const Error &lost)
{
    if (replay || (replay.error().code != ErrorCode::Unavailable && replay.error().code != ErrorCode::OutcomeUnknown))
        return replay;
    return fail(ErrorCode::OutcomeUnknown, u"%1; asking the book again failed too (%2)"_s.arg(lost.message,
                                                                                               replay.error().message));
}

/// True if a line of the order holds a gate token (its units are the gate's to give back).
bool heldAtGate(const QList<OrderLine> &lines)
{
    return std::any_of(lines.cbegin(), lines.cend(), [](const OrderLine &l) { return !l.token.isEmpty(); });
}

} // namespace

Result<void> Book::runBatch(const QList<qsizetype> &indexes, const QStringList &orderIds,
                            const QList<BookLocks::Bucket> &locks, const std::function<bool(qsizetype)> &savepointFirst,
                            const OrderBody &body, QList<std::optional<Error>> &orderErrors, bool &rerunAlone,
                            const std::function<Result<void>()> &prelude)
{
    const bool several = indexes.size() > 1;
    rerunAlone = false;
    WriteFaults *faults = m_db.writeFaults();
    m_locks.newTransaction();
    auto done = m_db.write<bool>([&](Transaction &tx) -> Result<bool> {
        rerunAlone = false;
        // The lock order (BookLocks): the buckets the batch knows it will touch first, in
        // (sku, bucket) order; each order's body takes the rest of its buckets before its
        // order rows. SQLite's BEGIN IMMEDIATE already made this transaction the only writer.
        m_locks.newAttempt();
        if (auto r = m_locks.lockFirst(locks); !r)
            return std::unexpected(r.error());
        if (prelude) {
            auto r = prelude();
            m_locks.tookOrderRows();
            if (!r) {
                rerunAlone = !endsBatch(r.error().code);
                return std::unexpected(r.error());
            }
        }
        for (qsizetype i : indexes) {
            orderErrors[i].reset();
            OrderRun run{several, false};
            if (several && (faults || savepointFirst(i))) {
                if (auto r = m_db.savepoint(); !r)
                    return std::unexpected(r.error());
                run.inSavepoint = true;
            }
            Result<OrderStep> step = body(i, run);
            m_locks.tookOrderRows();
            const bool injected = step && run.inSavepoint && faults && faults->failOrder(orderIds.at(i));
            const bool injectedAlone = step && !several && faults && faults->failOrder(orderIds.at(i));
            if (injected || injectedAlone)
                step = fail(ErrorCode::Unavailable,
                            u"injected failure (drill db-error): order %1's statements failed"_s.arg(orderIds.at(i)));
            if (!several) {
                if (!step)
                    return std::unexpected(step.error());
                if (*step == OrderStep::Undo)
                    tx.rollbackOnly();
                return true;
            }
            if (!step && endsBatch(step.error().code) && !injected)
                return std::unexpected(step.error());
            if (!step && !run.inSavepoint) {
                // Nothing to roll back to, and PostgreSQL takes no statement after a failed
                // one: undo the batch and let each order run on its own.
                rerunAlone = true;
                return std::unexpected(step.error());
            }
            if (!run.inSavepoint)
                continue; // answered without a write, or kept its one statement
            if (!step || *step == OrderStep::Undo) {
                if (!step)
                    orderErrors[i] = step.error();
                if (auto r = m_db.rollbackToSavepoint(); !r)
                    return std::unexpected(r.error());
            }
            if (auto r = m_db.releaseSavepoint(); !r)
                return std::unexpected(r.error());
        }
        return true;
    });
    if (!done)
        return std::unexpected(done.error());
    return {};
}

// --- reserve -----------------------------------------------------------------------------

Result<ReserveResult> Book::reserve(const QString &order, const QString &user, QList<OrderLine> lines,
                                    qint64 holdSeconds)
{
    return reserveOrders({ReserveOrder{order, user, std::move(lines), holdSeconds, {}, m_actor}}, Replay::OnUnknown)
        .constFirst();
}

QList<Result<ReserveResult>> Book::reserveBatch(const QList<ReserveOrder> &orders)
{
    return reserveOrders(orders, Replay::OnUnknown);
}

QList<Result<ReserveResult>> Book::reserveOrders(const QList<ReserveOrder> &orders, Replay replay)
{
    QList<Result<ReserveResult>> out(orders.size(), fail(ErrorCode::Internal, u"not run"_s));
    QList<QList<OrderLine>> wanted(orders.size());
    QList<qsizetype> todo;
    QStringList ids;
    QList<std::pair<QString, int>> locks;
    for (qsizetype i = 0; i < orders.size(); ++i) {
        const ReserveOrder &o = orders.at(i);
        ids << o.order;
        auto checked = checkReserve(o.order, o.user, o.lines, o.holdSeconds);
        if (!checked) {
            out[i] = std::unexpected(checked.error());
            continue;
        }
        bool ready = true;
        for (const OrderLine &line : std::as_const(*checked)) {
            const int buckets = m_bucketCounts.value(line.sku, 1);
            if (m_taker)
                if (auto r = m_taker->beforeTransaction(m_db, o.order, line, buckets); !r) {
                    out[i] = std::unexpected(r.error());
                    ready = false;
                    break;
                }
            locks.append({line.sku, preferredBucket(o.order, buckets)});
        }
        if (!ready)
            continue;
        wanted[i] = *checked;
        todo << i;
    }
    if (todo.isEmpty())
        return out;

    QList<ReserveResult> answers(orders.size());
    QList<char> fenced(orders.size(), 0);
    QList<char> grouped(orders.size(), 0);
    QList<std::optional<Error>> errors(orders.size());
    bool rerunAlone = false;
    // The batch's plain orders go in a few statements for all of them: SQLite pays per
    // statement, PostgreSQL per round trip. Not under the drill's write-fault seam, which
    // fails orders one by one.
    std::function<Result<void>()> prelude;
    if (todo.size() > 1 && !m_taker && !m_db.writeFaults())
        prelude = [&] { return reserveGrouped(orders, wanted, todo, answers, grouped); };
    // One order alone takes its buckets in order by itself (its lines are sorted by SKU).
    auto ran = runBatch(
        todo, ids, todo.size() > 1 ? locks : QList<BookLocks::Bucket>{},
        [&](qsizetype i) { return !grouped.at(i) && !oneStatement(orders.at(i), wanted.at(i)); },
        [&](qsizetype i, OrderRun &run) -> Result<OrderStep> {
            if (grouped.at(i))
                return OrderStep::Keep; // reserved by the prelude
            bool f = false;
            auto step = reserveOne(orders.at(i), wanted.at(i), run, answers[i], f);
            fenced[i] = f;
            return step;
        },
        errors, rerunAlone, prelude);

    if (!ran && rerunAlone) {
        for (qsizetype i : std::as_const(todo))
            out[i] = reserveOrders({orders.at(i)}, replay).constFirst();
        return out;
    }
    if (!ran && ran.error().code == ErrorCode::OutcomeUnknown && replay == Replay::OnUnknown) {
        // Nobody knows whether the batch committed: each order on its own says what the book holds.
        for (qsizetype i : std::as_const(todo)) {
            out[i] = afterReplay(reserveOrders({orders.at(i)}, Replay::Never).constFirst(), ran.error());
            if (out[i] && answers.at(i).order == orders.at(i).order && isRepeatOf(out[i]->outcome, answers.at(i).outcome))
                out[i]->outcome = answers.at(i).outcome;
        }
        return out;
    }
    for (qsizetype i : std::as_const(todo)) {
        if (!ran)
            out[i] = std::unexpected(ran.error());
        else if (errors.at(i))
            out[i] = std::unexpected(*errors.at(i));
        else if (fenced.at(i)) // transient: a retry gets a fresh gate token, which no fence holds
            out[i] = fail(ErrorCode::Conflict,
                          u"order %1: this attempt's gate token was given back by the reconciler (the attempt is "
                          u"fenced) and did not commit; send the reserve again"_s.arg(orders.at(i).order),
                          u"order"_s);
        else
            out[i] = answers.at(i);
    }
    return out;
}

bool Book::oneStatement(const ReserveOrder &order, const QList<OrderLine> &wanted) const
{
    return m_db.dialect() == Dialect::Postgres && wanted.size() == 1 && !m_taker
        && order.userLimits.value(wanted.first().sku) <= 0;
}

Result<bool> Book::reserveInOneStatement(const ReserveOrder &order, const OrderLine &line, ReserveResult &out)
{
    const int bucket = preferredBucket(order.order, m_bucketCounts.value(line.sku, 1));
    const QVariant token = nullable(line.token);
    const Actor &by = actorOf(order.actor);
    if (auto r = m_locks.beforeChange(line.sku, bucket); !r)
        return std::unexpected(r.error());
    auto r = m_db.exec(sql::reserveOneLine(m_db.nowMsExpr()),
                       {line.qty, line.qty, line.sku, bucket, line.qty, order.order,
                        order.order, nullable(order.user), order.holdSeconds * 1000, by.operatorName,
                        order.order, line.sku, bucket, line.qty, token,
                        order.order, line.sku, bucket, token, line.qty, line.qty, line.qty, line.qty,
                        by.operatorName, by.source});
    if (!r) {
        // The same order inserted by another transaction since this statement's snapshot:
        // run again, and the order is found.
        if (m_db.lastWasUniqueViolation())
            return fail(ErrorCode::Conflict, u"order %1 was reserved at the same time elsewhere"_s.arg(order.order));
        return std::unexpected(r.error());
    }
    if (r->isEmpty())
        return false;
    m_locks.took(line.sku, bucket);
    out = ReserveResult{Outcome::Reserved, order.order, {line}, {}, i64(r->first().at(0))};
    return true;
}

Result<void> Book::reserveGrouped(const QList<ReserveOrder> &orders, const QList<QList<OrderLine>> &wanted,
                                  const QList<qsizetype> &candidates, QList<ReserveResult> &answers,
                                  QList<char> &grouped)
{
    std::fill(grouped.begin(), grouped.end(), 0); // a retried transaction starts afresh
    const Dialect dialect = m_db.dialect();
    auto json = [](const QJsonArray &rows) { return QString::fromUtf8(QJsonDocument(rows).toJson(QJsonDocument::Compact)); };
    auto orNull = [](const QString &s) { return s.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(s); };
    QStringList ids; // checked by checkReserve(): PostgreSQL's array literal needs no quoting
    for (qsizetype i : candidates)
        ids << orders.at(i).order;
    auto idRows = [&] {
        QJsonArray rows;
        for (const QString &id : std::as_const(ids))
            rows.append(QJsonArray{id});
        return json(rows);
    };
    auto existing = m_db.exec(sql::existingOrdersOf(dialect),
                              {dialect == Dialect::Postgres ? sql::arrayLiteral(ids) : idRows()});
    if (!existing)
        return std::unexpected(existing.error());
    QSet<QString> seen; // an id that exists, or comes twice: the second is reserveOne's
    for (const QVariantList &row : existing->rows)
        seen.insert(row.at(0).toString());

    using Bucket = std::pair<QString, int>;
    struct Group {
        QList<qsizetype> members; ///< in arrival order
        qint64 total = 0;         ///< their units
    };
    std::map<Bucket, Group> groups; // (sku, bucket) order
    for (qsizetype i : candidates) {
        const ReserveOrder &o = orders.at(i);
        if (wanted.at(i).size() != 1 || o.userLimits.value(wanted.at(i).first().sku) > 0 || seen.contains(o.order))
            continue;
        seen.insert(o.order);
        const OrderLine &line = wanted.at(i).first();
        Group &g = groups[{line.sku, preferredBucket(o.order, m_bucketCounts.value(line.sku, 1))}];
        g.members.append(i);
        g.total += line.qty;
    }
    if (groups.empty())
        return {};

    // Every group's total in one guarded UPDATE: the common case, where each bucket covers
    // its whole group. (PostgreSQL: runBatch locked the batch's buckets in order first when
    // there are several; one is taken by this UPDATE.)
    QJsonArray totals;
    QList<Bucket> keys;
    for (const auto &[key, group] : groups) {
        totals.append(QJsonArray{key.first, key.second, group.total});
        keys << key;
    }
    if (auto r = keys.size() == 1 ? m_locks.beforeChange(keys.first().first, keys.first().second) : m_locks.lock(keys);
        !r)
        return std::unexpected(r.error());
    auto moved = m_db.exec(sql::reserveBucketsOf(dialect), {json(totals)});
    if (!moved)
        return std::unexpected(moved.error());
    std::map<Bucket, BucketLevels> movedTo;
    for (const QVariantList &row : moved->rows) {
        const int bucket = row.at(1).toInt();
        movedTo[{row.at(0).toString(), bucket}] = levelsFrom(row, bucket, 2);
        m_locks.took(row.at(0).toString(), bucket);
    }

    QJsonArray orderRows, lineRows, ledgerRows;
    QList<qsizetype> taken;
    for (const auto &[key, group] : groups) {
        const auto &[sku, bucket] = key;
        QList<qsizetype> fit = group.members;
        qint64 total = group.total;
        BucketLevels levels;
        if (auto it = movedTo.find(key); it != movedTo.end()) {
            levels = it->second;
        } else {
            // The bucket cannot cover the whole group: read it (locked) and take those that
            // fit, in arrival order; the others try reserveOne() (borrow, or out of stock).
            auto current = lockBucket(sku, bucket);
            if (!current)
                return std::unexpected(current.error());
            if (!*current)
                continue; // reserveOne() says what is wrong
            qint64 left = (*current)->available;
            fit.clear();
            total = 0;
            for (qsizetype i : group.members) {
                const qint64 qty = wanted.at(i).first().qty;
                if (qty <= left) {
                    fit << i;
                    left -= qty;
                    total += qty;
                }
            }
            if (fit.isEmpty())
                continue;
            auto after = m_db.exec(sql::reserveBucket(), {total, total, sku, bucket, total});
            if (!after)
                return std::unexpected(after.error());
            if (after->isEmpty())
                continue; // cannot be short under the lock just taken; reserveOne() answers
            levels = levelsFrom(after->first(), bucket);
        }
        Levels3 at{levels.available + total, levels.locked - total, levels.sold}; // before the first
        for (qsizetype i : std::as_const(fit)) {
            const ReserveOrder &o = orders.at(i);
            const OrderLine &line = wanted.at(i).first();
            const Actor &by = actorOf(o.actor);
            const Levels3 before = at;
            at.available -= line.qty;
            at.locked += line.qty;
            orderRows.append(QJsonArray{o.order, orNull(o.user), o.holdSeconds * 1000, by.operatorName});
            lineRows.append(QJsonArray{o.order, sku, bucket, line.qty, orNull(line.token)});
            ledgerRows.append(QJsonArray{o.order, sku, bucket, orNull(line.token), -line.qty, line.qty, 0,
                                         before.available, before.locked, before.sold, at.available, at.locked,
                                         at.sold, by.operatorName, by.source});
            taken << i;
        }
    }
    if (taken.isEmpty())
        return {};
    auto inserted = m_db.exec(sql::insertOrdersOf(dialect, m_db.nowMsExpr()), {json(orderRows)});
    if (!inserted)
        return std::unexpected(inserted.error());
    QHash<QString, qint64> expiresAt;
    for (const QVariantList &row : inserted->rows)
        expiresAt.insert(row.at(0).toString(), i64(row.at(1)));
    if (expiresAt.size() != taken.size())
        // PostgreSQL: another transaction inserted one of them since the check above (SQLite's
        // write lock rules that out). Run again, and the order is found.
        return fail(ErrorCode::Conflict, u"%1 of %2 new orders were inserted: the others were reserved at the same "
                                         u"time elsewhere"_s.arg(expiresAt.size()).arg(taken.size()));
    if (auto r = m_db.exec(sql::insertOrderLinesOf(dialect), {json(lineRows)}); !r)
        return std::unexpected(r.error());
    if (auto r = m_db.exec(sql::insertReserveLedgerOf(dialect, m_db.nowMsExpr()), {json(ledgerRows)}); !r)
        return std::unexpected(r.error());
    for (qsizetype i : std::as_const(taken)) {
        answers[i] = ReserveResult{Outcome::Reserved, orders.at(i).order, wanted.at(i), {}, expiresAt.value(orders.at(i).order)};
        grouped[i] = 1;
    }
    return {};
}

Result<Book::OrderStep> Book::reserveOne(const ReserveOrder &order, const QList<OrderLine> &wanted, OrderRun &run,
                                         ReserveResult &out, bool &fenced)
{
    fenced = false;
    if (oneStatement(order, wanted)) {
        // The common case in one round trip; nothing written unless the whole reserve was.
        auto done = reserveInOneStatement(order, wanted.first(), out);
        if (!done)
            return std::unexpected(done.error());
        if (*done)
            return OrderStep::Keep;
        // The order exists or its preferred bucket is short: the statements below answer.
    }
    if (run.several && !run.inSavepoint) {
        if (auto r = m_db.savepoint(); !r)
            return std::unexpected(r.error());
        run.inSavepoint = true;
    }
    // The stock first, then the order row (the lock order, BookLocks): a reserve holds its
    // lines' preferred buckets before the row of its order, so two reserves of one order
    // meet at a bucket, never at the row while each holds a bucket.
    const Actor &by = actorOf(order.actor);
    QList<QList<BucketTake>> taken;
    for (const OrderLine &line : wanted) {
        std::optional<Outcome> refusal;
        if (const qint64 limit = order.userLimits.value(line.sku); limit > 0) {
            // The batch's earlier orders are visible here: the limit holds within a batch too.
            auto held = SaleStore(m_db).userUnits(line.sku, order.user);
            if (!held)
                return std::unexpected(held.error());
            if (*held + line.qty > limit)
                refusal = Outcome::LimitExceeded;
        }
        if (!refusal) {
            const int buckets = m_bucketCounts.value(line.sku, 1);
            auto parts = m_taker ? m_taker->take(m_db, order.order, line, buckets) : takeLine(order.order, line, buckets);
            if (!parts)
                return std::unexpected(parts.error());
            if (parts->isEmpty())
                refusal = Outcome::OutOfStock;
            else
                taken << *parts;
        }
        if (refusal) {
            // A repeat of an order the book holds is answered as that order, not refused.
            auto existing = existingAnswer(order, wanted, out, fenced);
            if (!existing)
                return std::unexpected(existing.error());
            if (!*existing)
                out = ReserveResult{*refusal, order.order, wanted, line.sku, 0};
            return OrderStep::Undo;
        }
    }
    // The order row: it is the idempotency key.
    auto ins = m_db.exec(sql::insertOrder(m_db.nowMsExpr()),
                         {order.order, nullable(order.user), order.holdSeconds * 1000, by.operatorName});
    if (!ins)
        return std::unexpected(ins.error());
    qint64 expiresAt = 0;
    if (ins->isEmpty()) {
        // An order the reconciler fenced: a new attempt takes it over, a fenced one fails.
        auto takenOver = takeOverFenced(order.order, order.user, wanted, order.holdSeconds, by, fenced);
        if (!takenOver)
            return std::unexpected(takenOver.error());
        if (!*takenOver) {
            if (!fenced) {
                auto existing = answerExisting(order.order, wanted, by, fenced);
                if (!existing)
                    return std::unexpected(existing.error());
                out = *existing;
            }
            return OrderStep::Undo; // the stock taken above goes back with the rest
        }
        expiresAt = **takenOver;
    } else {
        expiresAt = i64(ins->first().at(0));
    }
    out = ReserveResult{Outcome::Reserved, order.order, wanted, {}, expiresAt};
    for (qsizetype i = 0; i < wanted.size(); ++i)
        if (auto r = recordTake(order.order, wanted.at(i), taken.at(i), by); !r)
            return std::unexpected(r.error());
    return OrderStep::Keep;
}

Result<bool> Book::existingAnswer(const ReserveOrder &order, const QList<OrderLine> &wanted, ReserveResult &out,
                                  bool &fenced)
{
    auto status = orderStatus(order.order);
    if (!status)
        return std::unexpected(status.error());
    if (!*status)
        return false;
    if (**status == OrderStatus::Abandoned) {
        // Fenced: this attempt fails if the reconciler gave its tokens back; a fresh attempt
        // is refused as a new order would be.
        auto hit = fencedToken(order.order, wanted);
        if (!hit)
            return std::unexpected(hit.error());
        fenced = *hit;
        return *hit;
    }
    auto existing = answerExisting(order.order, wanted, actorOf(order.actor), fenced);
    if (!existing)
        return std::unexpected(existing.error());
    out = *existing;
    return true;
}

Result<bool> Book::fencedToken(const QString &order, const QList<OrderLine> &wanted)
{
    for (const OrderLine &line : wanted) {
        if (line.token.isEmpty())
            continue;
        auto hit = m_db.exec(u"SELECT 1 FROM order_fences WHERE order_id = ? AND token = ?"_s, {order, line.token});
        if (!hit)
            return std::unexpected(hit.error());
        if (!hit->isEmpty())
            return true;
    }
    return false;
}

Result<std::optional<qint64>> Book::takeOverFenced(const QString &order, const QString &user,
                                                   const QList<OrderLine> &wanted, qint64 holdSeconds, const Actor &by,
                                                   bool &fenced)
{
    fenced = false;
    // The order's row lock first: a concurrent fence (Book::fenceOrder) waits for it, or
    // this waits for the fence and then sees it.
    const QString now = m_db.nowMsExpr();
    auto upd = m_db.exec(u"UPDATE orders SET status = 'PENDING', user_id = ?, version = version + 1, created_at = %1, "
                         u"expires_at = %1 + ?, close_reason = NULL, created_by = ? WHERE order_id = ? "
                         u"AND status = 'ABANDONED' RETURNING expires_at"_s.arg(now),
                         {nullable(user), holdSeconds * 1000, by.operatorName, order});
    if (!upd)
        return std::unexpected(upd.error());
    if (upd->isEmpty())
        return std::optional<qint64>{};
    auto hit = fencedToken(order, wanted);
    if (!hit)
        return std::unexpected(hit.error());
    if (*hit) {
        fenced = true;
        return std::optional<qint64>{};
    }
    return std::optional<qint64>{i64(upd->first().at(0))};
}


// --- confirm and release -----------------------------------------------------------------

QList<Result<OrderChange>> Book::confirmBatch(const QList<FinishOrder> &orders)
{
    return finishOrders(orders, Finish::Pay, Replay::OnUnknown);
}

QList<Result<OrderChange>> Book::releaseBatch(const QList<FinishOrder> &orders)
{
    return finishOrders(orders, Finish::Release, Replay::OnUnknown);
}

Result<QList<std::pair<QString, int>>> Book::bucketsOfOrders(const QStringList &orders)
{
    QList<std::pair<QString, int>> out;
    if (m_db.dialect() != Dialect::Postgres || orders.size() < 2)
        return out;
    auto rows = m_db.exec(sql::bucketsOfOrders(), {sql::arrayLiteral(orders)});
    if (!rows)
        return std::unexpected(rows.error());
    for (const QVariantList &row : rows->rows)
        out.append({row.at(0).toString(), row.at(1).toInt()});
    return out;
}

QList<Result<OrderChange>> Book::finishOrders(const QList<FinishOrder> &orders, Finish finish, Replay replay)
{
    QList<Result<OrderChange>> out(orders.size(), fail(ErrorCode::Internal, u"not run"_s));
    QList<qsizetype> todo;
    QStringList ids, valid;
    for (qsizetype i = 0; i < orders.size(); ++i) {
        ids << orders.at(i).order;
        if (auto r = checkFinish(orders.at(i).order, finish, orders.at(i).detail); !r) {
            out[i] = std::unexpected(r.error());
            continue;
        }
        valid << orders.at(i).order;
        todo << i;
    }
    if (todo.isEmpty())
        return out;
    // In order of their ids (the lock order, BookLocks: rows of orders without lines, such
    // as the refunds of fenced orders, are taken in that order by every batch).
    std::stable_sort(todo.begin(), todo.end(),
                     [&](qsizetype a, qsizetype b) { return orders.at(a).order < orders.at(b).order; });
    // An order's lines never change once reserved, so they can be read before the lock.
    auto locks = bucketsOfOrders(valid);
    if (!locks) {
        for (qsizetype i : std::as_const(todo))
            out[i] = std::unexpected(locks.error());
        return out;
    }

    QList<OrderChange> answers(orders.size());
    QList<char> unknown(orders.size(), 0);
    QList<std::optional<Error>> errors(orders.size());
    bool rerunAlone = false; // never set: every order of these batches runs in a savepoint
    auto ran = runBatch(
        todo, ids, *locks, [](qsizetype) { return true; },
        [&](qsizetype i, OrderRun &) -> Result<OrderStep> {
            bool u = false;
            auto step = finishOne(orders.at(i).order, finish, orders.at(i).detail, actorOf(orders.at(i).actor),
                                  answers[i], u);
            unknown[i] = u;
            return step;
        },
        errors, rerunAlone);

    if (!ran && ran.error().code == ErrorCode::OutcomeUnknown && replay == Replay::OnUnknown) {
        for (qsizetype i : std::as_const(todo)) {
            out[i] = afterReplay(finishOrders({orders.at(i)}, finish, Replay::Never).constFirst(), ran.error());
            if (out[i] && answers.at(i).order == orders.at(i).order && isRepeatOf(out[i]->outcome, answers.at(i).outcome))
                out[i]->outcome = answers.at(i).outcome;
        }
        return out;
    }
    for (qsizetype i : std::as_const(todo)) {
        if (!ran)
            out[i] = std::unexpected(ran.error());
        else if (errors.at(i))
            out[i] = std::unexpected(*errors.at(i));
        else if (unknown.at(i))
            out[i] = std::unexpected(unknownOrder(orders.at(i).order));
        else
            out[i] = answers.at(i);
    }
    return out;
}

Result<Book::OrderStep> Book::finishOne(const QString &order, Finish finish, const QString &detail, const Actor &by,
                                        OrderChange &out, bool &unknown)
{
    const bool pay = finish == Finish::Pay;
    const QString now = m_db.nowMsExpr();
    unknown = false;
    out = OrderChange{};
    out.order = order;
    auto row = m_db.exec(u"SELECT status, version, payment_ref, created_by FROM orders WHERE order_id = ?"_s, {order});
    if (!row)
        return std::unexpected(row.error());
    if (row->isEmpty() || !by.reaches(row->first().at(3).toString())) {
        unknown = true;
        return OrderStep::Undo;
    }
    const QString status = row->first().at(0).toString();
    const qint64 version = i64(row->first().at(1));
    const QString paidWith = row->first().at(2).toString();
    // After the status: a PENDING order's lines were committed with it.
    auto rows = m_db.exec(u"SELECT sku, bucket, qty, token FROM order_lines WHERE order_id = ? "
                          u"ORDER BY sku, bucket"_s, {order});
    if (!rows)
        return std::unexpected(rows.error());
    // The order's buckets before anything of the order is written (the lock order,
    // BookLocks): the batch locked them first, unless its lines were not known then.
    QList<BookLocks::Bucket> buckets;
    for (const QVariantList &r : rows->rows) {
        out.lines << OrderLine{r.at(0).toString(), i64(r.at(2)), r.at(3).toString()};
        buckets << BookLocks::Bucket{r.at(0).toString(), r.at(1).toInt()};
    }
    if (auto locked = m_locks.lock(buckets); !locked)
        return std::unexpected(locked.error());

    if (status != u"PENDING"_s) {
        if (!pay) {
            out.outcome = status == u"PAID"_s ? Outcome::AlreadyPaid : Outcome::AlreadyClosed;
            return OrderStep::Undo;
        }
        if (status == u"PAID"_s && paidWith == detail) {
            out.outcome = Outcome::Duplicate;
            return OrderStep::Undo;
        }
        // The order cannot take this payment: record one refund per (order, payment).
        const QString why = status == u"PAID"_s ? u"order already paid"_s : u"order closed"_s;
        if (auto refund = recordRefund(order, detail, why, by); !refund)
            return std::unexpected(refund.error());
        out.outcome = Outcome::RefundRequired;
        return OrderStep::Keep;
    }

    // Compare-and-set on (status, version): a racing confirm or release that changed the
    // order first makes this UPDATE match no row, and the transaction starts again.
    auto cas = pay
        ? m_db.exec(u"UPDATE orders SET status = 'PAID', version = version + 1, payment_ref = ?, paid_at = %1 "
                    u"WHERE order_id = ? AND status = 'PENDING' AND version = ? RETURNING version"_s.arg(now),
                    {detail, order, version})
        : m_db.exec(u"UPDATE orders SET status = 'CLOSED', version = version + 1, close_reason = ?, closed_at = %1, "
                    u"gate_release_due = ? WHERE order_id = ? AND status = 'PENDING' AND version = ? "
                    u"RETURNING version"_s.arg(now),
                    {detail, heldAtGate(out.lines) ? 1 : 0, order, version});
    if (!cas)
        return std::unexpected(cas.error());
    if (cas->isEmpty())
        return fail(ErrorCode::Conflict,
                    u"order %1 changed while it was being %2"_s.arg(order, pay ? u"confirmed"_s : u"released"_s));
    const QString moveSql = pay ? sql::confirmBucket() : sql::releaseBucket();
    for (const QVariantList &r : rows->rows) {
        const QString sku = r.at(0).toString();
        const int bucket = r.at(1).toInt();
        const qint64 qty = i64(r.at(2));
        const QString token = r.at(3).toString();
        auto upd = m_db.exec(moveSql, {qty, qty, sku, bucket, qty});
        if (!upd)
            return std::unexpected(upd.error());
        if (upd->isEmpty())
            return fail(ErrorCode::Internal,
                        u"book inconsistent: %1 bucket %2 holds fewer than %3 locked units for order %4"_s.arg(sku)
                            .arg(bucket)
                            .arg(qty)
                            .arg(order));
        const BucketLevels after = levelsFrom(upd->first(), bucket);
        auto ledger = pay ? appendLedger(order, u"CONFIRM"_s, sku, bucket, token, Levels3{0, -qty, qty}, after, by)
                          : appendLedger(order, u"RELEASE"_s, sku, bucket, token, Levels3{qty, -qty, 0}, after, by);
        if (!ledger)
            return std::unexpected(ledger.error());
    }
    out.outcome = pay ? Outcome::Paid : Outcome::Released;
    return OrderStep::Keep;
}

// --- expiry ------------------------------------------------------------------------------

Result<QList<OrderChange>> Book::expire(std::optional<qint64> nowMs, int batch,
                                        const std::function<void(const OrderChange &)> &onReleased)
{
    QList<OrderChange> released;
    batch = std::clamp(batch, 1, 10000);
    const QString dueSql = u"SELECT order_id FROM orders WHERE %1 ORDER BY expires_at, order_id LIMIT ?"_s.arg(
        sql::holdIsDue(nowMs ? u"?"_s : m_db.nowMsExpr()));
    QSet<QString> failed;
    for (;;) {
        auto due = nowMs ? m_db.exec(dueSql, {*nowMs, batch + int(failed.size())})
                         : m_db.exec(dueSql, {batch + int(failed.size())});
        if (!due)
            return std::unexpected(due.error());
        QList<FinishOrder> page; // oldest first
        for (const QVariantList &row : due->rows)
            if (const QString order = row.at(0).toString(); !failed.contains(order))
                page << FinishOrder{order, u"timeout"_s, m_actor};
        if (page.isEmpty())
            break;
        const QList<Result<OrderChange>> answers = releaseBatch(page);
        int progressed = 0;
        for (qsizetype i = 0; i < page.size(); ++i) {
            const Result<OrderChange> &r = answers.at(i);
            if (!r) {
                if (r.error().code == ErrorCode::Unavailable)
                    return std::unexpected(r.error());
                failed.insert(page.at(i).order); // left for the reconciler; keep expiring the others
                continue;
            }
            ++progressed;
            if (r->outcome == Outcome::Released) {
                released << *r;
                if (onReleased)
                    onReleased(*r);
            }
        }
        if (progressed == 0 || due->rows.size() < batch + failed.size())
            break;
    }
    return released;
}

} // namespace flashstock
