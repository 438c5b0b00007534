#include "ContractJson.h"

#include "Engine.h"
#include "Identifiers.h"

#include <QDateTime>
#include <QJsonDocument>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QJsonValue textOrNull(const QString &s) { return s.isEmpty() ? QJsonValue() : QJsonValue(s); }

QJsonValue timeOrNull(qint64 ms) { return ms > 0 ? QJsonValue(isoTime(ms)) : QJsonValue(); }

} // namespace

QString isoTime(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs);
}

QJsonObject levelsJson(const SkuLevels &levels)
{
    return {{u"available"_s, levels.available}, {u"locked"_s, levels.locked},
            {u"sold"_s, levels.sold}, {u"total"_s, levels.total}};
}

QJsonArray bucketsJson(const SkuLevels &levels)
{
    QJsonArray out;
    for (const BucketLevels &b : levels.buckets)
        out.append(QJsonObject{{u"bucket"_s, b.bucket}, {u"available"_s, b.available}, {u"locked"_s, b.locked},
                               {u"sold"_s, b.sold}, {u"total"_s, b.total}});
    return out;
}

QJsonObject ledgerRowJson(const LedgerRow &row)
{
    QJsonObject out{{u"id"_s, row.id},
            {u"order"_s, row.order},
            {u"operation"_s, row.operation},
            {u"sku"_s, row.sku},
            {u"bucket"_s, row.bucket},
            {u"delta_available"_s, row.deltaAvailable},
            {u"delta_locked"_s, row.deltaLocked},
            {u"delta_sold"_s, row.deltaSold},
            {u"after"_s, QJsonObject{{u"available"_s, row.after.available}, {u"locked"_s, row.after.locked},
                                     {u"sold"_s, row.after.sold}}},
            {u"token"_s, textOrNull(row.token)},
            {u"operator"_s, row.operatorName},
            {u"source"_s, row.source},
            {u"at"_s, isoTime(row.atMs)}};
    if (!row.adjustmentKind.isEmpty())
        out.insert(u"adjustment"_s, QJsonObject{{u"kind"_s, row.adjustmentKind},
                                                {u"units"_s, row.adjustmentUnits},
                                                {u"reason"_s, row.reason},
                                                {u"discrepancy"_s, row.discrepancy > 0 ? QJsonValue(row.discrepancy)
                                                                                       : QJsonValue()}});
    return out;
}

QJsonArray tokensJson(const QList<OrderLine> &lines)
{
    QJsonArray out;
    for (const OrderLine &l : lines)
        if (!l.token.isEmpty())
            out.append(l.token);
    return out;
}

QJsonObject errorJson(const Error &error)
{
    return {{u"error"_s, QJsonObject{{u"code"_s, errorCodeName(error.code)},
                                     {u"message"_s, error.message},
                                     {u"field"_s, textOrNull(error.field)}}}};
}

QJsonObject reserveJson(const ReserveResult &result)
{
    QJsonObject out{{u"result"_s, outcomeWord(result.outcome)},
                    {u"order"_s, result.order},
                    {u"tokens"_s, tokensJson(result.lines)}};
    if (result.outcome == Outcome::Reserved)
        out.insert(u"expires_at"_s, isoTime(result.expiresAtMs));
    if (!result.shortSku.isEmpty())
        out.insert(u"sku"_s, result.shortSku);
    return out;
}

QByteArray ReserveJsonWriter::write(const ReserveResult &result)
{
    const bool refusal = result.outcome != Outcome::Reserved
        && std::none_of(result.lines.cbegin(), result.lines.cend(), [](const OrderLine &l) { return !l.token.isEmpty(); })
        && checkOrderId(result.order, u"order"_s).has_value();
    if (refusal && m_have && m_outcome == result.outcome && m_sku == result.shortSku) {
        QByteArray text;
        text.reserve(m_head.size() + result.order.size() + m_tail.size());
        text.append(m_head).append(result.order.toLatin1()).append(m_tail);
        return text;
    }
    QByteArray text = QJsonDocument(reserveJson(result)).toJson(QJsonDocument::Compact);
    if (refusal) {
        // `"order":"` once, at the top level: no other value can hold a quote.
        const QByteArray key = QByteArrayLiteral("\"order\":\"");
        const qsizetype at = text.indexOf(key + result.order.toLatin1() + '"');
        m_have = at >= 0;
        if (m_have) {
            m_outcome = result.outcome;
            m_sku = result.shortSku;
            m_head = text.first(at + key.size());
            m_tail = text.sliced(at + key.size() + result.order.size());
        }
    }
    return text;
}

QJsonObject orderChangeJson(const OrderChange &change)
{
    return {{u"result"_s, outcomeWord(change.outcome)}, {u"order"_s, change.order}};
}

QJsonObject skuJson(const SkuLevels &levels, const GateSide &gate)
{
    QJsonObject out;
    QJsonValue gateJson;
    if (gate.configured && !gate.reachable) {
        out.insert(u"gate_error"_s, gate.error);
    } else if (gate.configured && gate.available >= 0) {
        QJsonObject g{{u"available"_s, gate.available}};
        if (const auto &c = gate.counts) {
            // Tokens issued counts gate pre-deducts; a reserve the book then refused is among
            // the refusals as well.
            g.insert(u"tokens_issued"_s, c->reserved);
            g.insert(u"refusals"_s, QJsonObject{{outcomeWord(Outcome::OutOfStock), c->outOfStock},
                                                {outcomeWord(Outcome::LimitExceeded), c->limitExceeded},
                                                {outcomeWord(Outcome::SaleClosed), c->saleClosed},
                                                {outcomeWord(Outcome::Paused), c->paused}});
        } else {
            g.insert(u"counters_error"_s, gate.error);
        }
        gateJson = g;
    }
    out.insert(u"sku"_s, levels.sku);
    out.insert(u"book"_s, levelsJson(levels));
    out.insert(u"gate"_s, gateJson);
    out.insert(u"buckets"_s, bucketsJson(levels));
    return out;
}

QJsonObject orderJson(const OrderView &order)
{
    QJsonArray lines;
    for (const OrderLine &l : order.lines)
        lines.append(QJsonObject{{u"sku"_s, l.sku}, {u"qty"_s, l.qty}, {u"token"_s, textOrNull(l.token)}});
    return {{u"order"_s, order.order},
            {u"status"_s, orderStatusName(order.status)},
            {u"user"_s, textOrNull(order.user)},
            {u"lines"_s, lines},
            {u"created_at"_s, timeOrNull(order.createdAtMs)},
            {u"expires_at"_s, timeOrNull(order.expiresAtMs)},
            {u"payment"_s, textOrNull(order.paymentRef)},
            {u"closed_reason"_s, textOrNull(order.closeReason)},
            {u"created_by"_s, textOrNull(order.createdBy)}};
}

} // namespace flashstock
