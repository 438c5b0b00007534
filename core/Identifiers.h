#pragma once

#include "Result.h"

#include <QString>

namespace flashstock {

/// Longest SKU id, in characters (DESIGN.md, identifiers).
inline constexpr int kMaxSkuLength = 64;
/// Longest order id, in characters.
inline constexpr int kMaxOrderLength = 128;
/// Largest quantity of one line or one restock, in units.
inline constexpr qint64 kMaxQuantity = 2147483647;

/// Checks a SKU id: 1..64 characters of `[A-Za-z0-9._-]`. `field` names it in the error.
/// Returns InvalidArgument naming the field and the (truncated) value.
[[nodiscard]] Result<void> checkSkuId(const QString &sku, const QString &field = QStringLiteral("sku"));

/// Checks an order id: 1..128 characters of `[A-Za-z0-9._-]`.
[[nodiscard]] Result<void> checkOrderId(const QString &order, const QString &field = QStringLiteral("order"));

/// Checks a free-form short name (operator, user, payment reference, reason): 1..`maxLength`
/// printable characters, no control characters.
[[nodiscard]] Result<void> checkName(const QString &value, const QString &field, int maxLength = 128);

/// Checks a quantity in units: 1..2 147 483 647.
[[nodiscard]] Result<void> checkQuantity(qint64 qty, const QString &field = QStringLiteral("qty"));

/// Parses a quantity typed by a person ("12"); anything but a whole number in 1..2^31-1 is
/// InvalidArgument naming `field` and the text.
[[nodiscard]] Result<qint64> parseQuantity(const QString &text, const QString &field = QStringLiteral("qty"));

/// A value shown in an error message: quoted, control characters escaped, cut to 40 characters.
QString quoteForMessage(const QString &value);

} // namespace flashstock
