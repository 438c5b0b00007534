#include "ApiRequests.h"

#include "Identifiers.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>

using namespace Qt::StringLiterals;

namespace flashstock::server {

namespace {

std::unexpected<Error> bad(const QString &field, const QString &message)
{
    return fail(ErrorCode::InvalidArgument, u"%1: %2"_s.arg(field, message), field);
}

QString typeName(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Null: return u"null"_s;
    case QJsonValue::Bool: return u"a boolean"_s;
    case QJsonValue::Double: return u"a number"_s;
    case QJsonValue::String: return u"a string"_s;
    case QJsonValue::Array: return u"an array"_s;
    case QJsonValue::Object: return u"an object"_s;
    case QJsonValue::Undefined: return u"missing"_s;
    }
    return u"missing"_s;
}

/// A JSON number that is a whole number (1.0 is, 1.5 and 1e300 are not), as qint64.
Result<qint64> wholeNumber(const QJsonValue &v, const QString &field, const QString &what)
{
    if (!v.isDouble())
        return bad(field, u"must be %1, got %2"_s.arg(what, typeName(v)));
    const double d = v.toDouble();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18)
        return bad(field, u"must be %1, got %2"_s.arg(what).arg(d, 0, 'g', 17));
    return qint64(d);
}

/// Runs `check` (given a field name, it names that field in its error) with the name made
/// by `field` only if it fails: a valid request's field names cost no allocation.
template <typename Check, typename Field>
auto named(const Check &check, const Field &field) -> decltype(check(QString()))
{
    auto r = check(QString());
    return r ? r : check(field());
}

} // namespace

Result<QJsonObject> parseObject(const QByteArray &body)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &error);
    if (error.error != QJsonParseError::NoError)
        return bad(u"body"_s, u"not valid JSON (%1 at byte %2)"_s.arg(error.errorString()).arg(error.offset));
    if (!doc.isObject())
        return bad(u"body"_s, u"must be a JSON object"_s);
    return doc.object();
}

Result<void> onlyFields(const QJsonObject &object, const QStringList &allowed, const QString &prefix)
{
    for (auto it = object.begin(); it != object.end(); ++it)
        if (!allowed.contains(it.key()))
            return bad(prefix + it.key(), u"unknown field (expected %1)"_s.arg(allowed.join(u", "_s)));
    return {};
}

Result<QString> requiredString(const QJsonObject &object, const QString &name, const QString &prefix)
{
    const QJsonValue v = object.value(name);
    if (!v.isString())
        return bad(prefix + name, u"must be a string, got %1"_s.arg(typeName(v)));
    return v.toString();
}

Result<ReserveRequest> reservationFrom(const QJsonValue &value, const QString &prefix)
{
    if (!value.isObject())
        return bad(prefix.isEmpty() ? u"body"_s : prefix.chopped(1), u"must be a JSON object"_s);
    const QJsonObject o = value.toObject();
    static const QStringList fields{u"order"_s, u"user"_s, u"lines"_s, u"hold_seconds"_s};
    static const QStringList lineFields{u"sku"_s, u"qty"_s};
    const auto at = [&](const QString &name) { return [&prefix, &name] { return prefix + name; }; };
    if (auto r = named([&](const QString &p) { return onlyFields(o, fields, p); }, [&] { return prefix; }); !r)
        return std::unexpected(r.error());
    const QString orderName = u"order"_s;
    auto order = named([&](const QString &p) { return requiredString(o, orderName, p); }, [&] { return prefix; });
    if (!order)
        return std::unexpected(order.error());
    if (auto r = named([&](const QString &f) { return checkOrderId(*order, f); }, at(orderName)); !r)
        return std::unexpected(r.error());
    QString user;
    const QString userName = u"user"_s;
    if (o.contains(userName)) {
        auto u = named([&](const QString &p) { return requiredString(o, userName, p); }, [&] { return prefix; });
        if (!u)
            return std::unexpected(u.error());
        if (auto r = named([&](const QString &f) { return checkName(*u, f); }, at(userName)); !r)
            return std::unexpected(r.error());
        user = *u;
    }
    std::optional<qint64> hold;
    const QString holdName = u"hold_seconds"_s;
    if (o.contains(holdName)) {
        const QJsonValue v = o.value(holdName);
        auto h = named([&](const QString &f) { return wholeNumber(v, f, u"a whole number of seconds"_s); }, at(holdName));
        if (!h)
            return std::unexpected(h.error());
        if (auto r = named([&](const QString &f) { return checkHoldSeconds(*h, f); }, at(holdName)); !r)
            return std::unexpected(r.error());
        hold = *h;
    }
    const QJsonValue linesValue = o.value(u"lines"_s);
    if (!linesValue.isArray())
        return bad(prefix + u"lines"_s, u"must be an array of {\"sku\", \"qty\"}, got %1"_s.arg(typeName(linesValue)));
    const QJsonArray array = linesValue.toArray();
    QList<OrderLine> lines;
    lines.reserve(array.size());
    for (qsizetype i = 0; i < array.size(); ++i) {
        const auto lineAt = [&] { return u"%1lines[%2]."_s.arg(prefix).arg(i); };
        const auto lineField = [&](QStringView name) { return [&lineAt, name] { return lineAt().append(name); }; };
        if (!array[i].isObject())
            return bad(lineAt().chopped(1), u"must be an object {\"sku\", \"qty\"}, got %1"_s.arg(typeName(array[i])));
        const QJsonObject line = array[i].toObject();
        if (auto r = named([&](const QString &p) { return onlyFields(line, lineFields, p); }, lineAt); !r)
            return std::unexpected(r.error());
        auto sku = named([&](const QString &p) { return requiredString(line, lineFields[0], p); }, lineAt);
        if (!sku)
            return std::unexpected(sku.error());
        if (auto r = named([&](const QString &f) { return checkSkuId(*sku, f); }, lineField(u"sku")); !r)
            return std::unexpected(r.error());
        const QJsonValue qtyValue = line.value(lineFields[1]);
        auto qty = named([&](const QString &f) { return wholeNumber(qtyValue, f, u"a whole number of units"_s); },
                         lineField(u"qty"));
        if (!qty)
            return std::unexpected(qty.error());
        if (auto r = named([&](const QString &f) { return checkQuantity(*qty, f); }, lineField(u"qty")); !r)
            return std::unexpected(r.error());
        lines << OrderLine{*sku, *qty, {}};
    }
    auto checked = Engine::checkReserve(*order, user, lines, hold);
    if (!checked) {
        // The core names the CLI's words (`line`); the API's field is `lines`.
        Error e = checked.error();
        if (e.field == u"line"_s)
            e.field = u"lines"_s;
        if (!e.field.isEmpty() && !e.field.startsWith(prefix))
            e.field = prefix + e.field;
        return std::unexpected(e);
    }
    return checked;
}

Result<QJsonArray> batchFrom(const QJsonObject &object, qsizetype max)
{
    if (auto r = onlyFields(object, {u"reservations"_s}); !r)
        return std::unexpected(r.error());
    const QJsonValue v = object.value(u"reservations"_s);
    if (!v.isArray())
        return bad(u"reservations"_s, u"must be an array of reservations, got %1"_s.arg(typeName(v)));
    const QJsonArray a = v.toArray();
    if (a.isEmpty() || a.size() > max)
        return bad(u"reservations"_s, u"a batch holds 1 to %1 reservations, got %2"_s.arg(max).arg(a.size()));
    return a;
}

} // namespace flashstock::server
