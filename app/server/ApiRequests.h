#pragma once

#include "Engine.h"
#include "Result.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

namespace flashstock::server {

// Request bodies of API v1, parsed strictly: malformed JSON, a wrong type, an unknown field
// or a bad value is InvalidArgument naming the field and the value. Values are checked by
// the core's own rules (Identifiers, Engine::checkReserve), never by rules of their own.
// Plain functions; any thread.

/// The body as one JSON object, with one meaning (checkOneMeaning: no key twice, every
/// number an integer).
[[nodiscard]] Result<QJsonObject> parseObject(const QByteArray &body);
/// InvalidArgument naming the first field of `object` not in `allowed`.
[[nodiscard]] Result<void> onlyFields(const QJsonObject &object, const QStringList &allowed, const QString &prefix = {});
/// A required string field.
[[nodiscard]] Result<QString> requiredString(const QJsonObject &object, const QString &name, const QString &prefix = {});
/// One reservation, `{"order", "user", "lines": [{"sku", "qty"}], "hold_seconds"}`, checked
/// (Engine::checkReserve). `prefix` names where it sits (`reservations[3].`).
[[nodiscard]] Result<ReserveRequest> reservationFrom(const QJsonValue &value, const QString &prefix = {});
/// The reservations of a batch body, `{"reservations": [...]}` (1..`max` of them), unchecked.
[[nodiscard]] Result<QJsonArray> batchFrom(const QJsonObject &object, qsizetype max);

} // namespace flashstock::server
