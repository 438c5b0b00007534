#include "ApiRequests.h"

#include "Identifiers.h"
#include "StrictJson.h"

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

/// Where a reservation's fields sit in the body: after `prefix` ("" at the top), and for a
/// line's fields after `lines[i].` too. A field's full name is made only for an error.
struct Where {
    const QString &prefix;
    qsizetype line = -1; ///< the line's index; -1: a field of the reservation itself

    /// True when a field's bare name is its full name (no allocation to name it).
    bool top() const { return prefix.isEmpty() && line < 0; }
    /// The full name of field `name` here.
    QString operator()(const QString &name) const
    {
        return line < 0 ? prefix + name : u"%1lines[%2].%3"_s.arg(prefix).arg(line).arg(name);
    }
    /// The name of the object itself: `lines[i]` for a line.
    QString object() const { return u"%1lines[%2]"_s.arg(prefix).arg(line); }
};

/// A core check (Identifiers: `check(value, field)`) of field `name` at `where`. It runs with
/// the bare name (a literal), and again with the full name only if it fails.
template <typename Check, typename Value>
Result<void> valid(const Check &check, const Value &value, const Where &where, const QString &name)
{
    Result<void> r = check(value, name);
    return r || where.top() ? r : check(value, where(name));
}

/// InvalidArgument naming the first field of `object` not in `allowed`.
Result<void> knownFields(const QJsonObject &object, const QStringList &allowed, const Where &where)
{
    // A JSON object's keys are unique: all are allowed when as many allowed names are in it
    // as it has keys. Looked up without allocating; each key as a QString only for the error.
    qsizetype known = 0;
    for (const QString &name : allowed)
        known += object.contains(name) ? 1 : 0;
    if (known == object.size())
        return {};
    for (auto it = object.begin(); it != object.end(); ++it)
        if (!allowed.contains(it.key()))
            return bad(where(it.key()), u"unknown field (expected %1)"_s.arg(allowed.join(u", "_s)));
    return {};
}

/// The string field `name` at `where`.
Result<QString> stringField(const QJsonObject &object, const QString &name, const Where &where)
{
    const QJsonValue v = object.value(name);
    if (!v.isString())
        return bad(where(name), u"must be a string, got %1"_s.arg(typeName(v)));
    return v.toString();
}

/// The field `name` at `where` as a JSON number that is a whole number within qint64 (its
/// text is an integer already: checkOneMeaning), as qint64. `what` says what it counts, for
/// the error.
Result<qint64> wholeNumber(const QJsonObject &object, const QString &name, const Where &where, const QString &what)
{
    const QJsonValue v = object.value(name);
    if (!v.isDouble())
        return bad(where(name), u"must be %1, got %2"_s.arg(what, typeName(v)));
    const double d = v.toDouble();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18)
        return bad(where(name), u"must be %1, got %2"_s.arg(what).arg(d, 0, 'g', 17));
    return qint64(d);
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
    if (auto one = checkOneMeaning(body); !one)
        return std::unexpected(one.error());
    return doc.object();
}

Result<void> onlyFields(const QJsonObject &object, const QStringList &allowed, const QString &prefix)
{
    return knownFields(object, allowed, Where{prefix});
}

Result<QString> requiredString(const QJsonObject &object, const QString &name, const QString &prefix)
{
    return stringField(object, name, Where{prefix});
}

Result<ReserveRequest> reservationFrom(const QJsonValue &value, const QString &prefix)
{
    if (!value.isObject())
        return bad(prefix.isEmpty() ? u"body"_s : prefix.chopped(1), u"must be a JSON object"_s);
    const QJsonObject o = value.toObject();
    static const QStringList fields{u"order"_s, u"user"_s, u"lines"_s, u"hold_seconds"_s};
    static const QStringList lineFields{u"sku"_s, u"qty"_s};
    static const QString orderName = u"order"_s, userName = u"user"_s, holdName = u"hold_seconds"_s,
                         linesName = u"lines"_s, skuName = u"sku"_s, qtyName = u"qty"_s;
    const Where here{prefix};
    if (auto r = knownFields(o, fields, here); !r)
        return std::unexpected(r.error());
    auto order = stringField(o, orderName, here);
    if (!order)
        return std::unexpected(order.error());
    if (auto r = valid(checkOrderId, *order, here, orderName); !r)
        return std::unexpected(r.error());
    QString user;
    if (o.contains(userName)) {
        auto u = stringField(o, userName, here);
        if (!u)
            return std::unexpected(u.error());
        const auto name = [](const QString &v, const QString &f) { return checkName(v, f); };
        if (auto r = valid(name, *u, here, userName); !r)
            return std::unexpected(r.error());
        user = *u;
    }
    std::optional<qint64> hold;
    if (o.contains(holdName)) {
        auto h = wholeNumber(o, holdName, here, u"a whole number of seconds"_s);
        if (!h)
            return std::unexpected(h.error());
        if (auto r = valid(checkHoldSeconds, *h, here, holdName); !r)
            return std::unexpected(r.error());
        hold = *h;
    }
    const QJsonValue linesValue = o.value(linesName);
    if (!linesValue.isArray())
        return bad(here(linesName), u"must be an array of {\"sku\", \"qty\"}, got %1"_s.arg(typeName(linesValue)));
    const QJsonArray array = linesValue.toArray();
    QList<OrderLine> lines;
    lines.reserve(array.size());
    for (qsizetype i = 0; i < array.size(); ++i) {
        const Where at{prefix, i};
        if (!array[i].isObject())
            return bad(at.object(), u"must be an object {\"sku\", \"qty\"}, got %1"_s.arg(typeName(array[i])));
        const QJsonObject line = array[i].toObject();
        if (auto r = knownFields(line, lineFields, at); !r)
            return std::unexpected(r.error());
        auto sku = stringField(line, skuName, at);
        if (!sku)
            return std::unexpected(sku.error());
        if (auto r = valid(checkSkuId, *sku, at, skuName); !r)
            return std::unexpected(r.error());
        auto qty = wholeNumber(line, qtyName, at, u"a whole number of units"_s);
        if (!qty)
            return std::unexpected(qty.error());
        if (auto r = valid(checkQuantity, *qty, at, qtyName); !r)
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
