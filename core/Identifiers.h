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
/// Most lines (distinct SKUs) one order may have.
inline constexpr int kMaxOrderLines = 100;
/// Longest hold of a reservation or a sale, in seconds (30 days).
inline constexpr qint64 kMaxHoldSeconds = 30LL * 24 * 3600;

/// Checks a SKU id: 1..64 characters of `[A-Za-z0-9._-]`. `field` names it in the error.
/// Returns InvalidArgument naming the field and the (truncated) value.
[[nodiscard]] Result<void> checkSkuId(const QString &sku, const QString &field = QStringLiteral("sku"));

/// Checks an order id: 1..128 characters of `[A-Za-z0-9._-]`.
[[nodiscard]] Result<void> checkOrderId(const QString &order, const QString &field = QStringLiteral("order"));

/// Maximum length of a reason (restock, approve, reject), in characters.
inline constexpr int kMaxReasonLength = 500;

/// THE rule for free text (operator, user, payment reference, reason): 1..`maxLength`
/// characters, none of them a control, format (bidi controls, zero-width characters, tag
/// characters) or line/paragraph separator character, no lone surrogate (UTF-16 that is no
/// text: stored as UTF-8 it would become `?` and equal other text), in Unicode NFC.
/// InvalidArgument naming `field`.
/// (Names are normalised to NFC where they enter: normalizedName.)
[[nodiscard]] Result<void> checkName(const QString &value, const QString &field, int maxLength = 128);

/// `text` safe to print on a terminal or in a table: every control, format (bidi,
/// zero-width, tag) and separator character and every lone surrogate becomes `\u{XXXX}` (a
/// line break `\n`), so stored
/// text can never rewrite what is shown around it. `keepLineBreaks`: whole outputs, whose
/// own lines stay lines (tabs too).
QString printable(const QString &text, bool keepLineBreaks = false);

/// `name` in Unicode NFC: how a name a person typed is kept (operator names).
QString normalizedName(const QString &name);

/// Longest name of a server bearer token, in characters.
inline constexpr int kMaxTokenNameLength = 64;

/// Checks a server bearer token's name: 1..64 characters of `[A-Za-z0-9._-]`.
[[nodiscard]] Result<void> checkTokenName(const QString &name, const QString &field = QStringLiteral("name"));

/// Checks why an order is released: `timeout`, `cancel` or `risk`. InvalidArgument naming `field`.
[[nodiscard]] Result<void> checkReleaseReason(const QString &reason, const QString &field = QStringLiteral("reason"));

/// Checks a payment reference: a short name (checkName, at most 128 characters).
[[nodiscard]] Result<void> checkPaymentRef(const QString &payment, const QString &field = QStringLiteral("payment"));

/// Checks a quantity in units: 1..2 147 483 647.
[[nodiscard]] Result<void> checkQuantity(qint64 qty, const QString &field = QStringLiteral("qty"));

/// Checks a hold in seconds: 1..kMaxHoldSeconds. InvalidArgument naming `field`.
[[nodiscard]] Result<void> checkHoldSeconds(qint64 seconds, const QString &field = QStringLiteral("hold-seconds"));

/// Parses a quantity typed by a person ("12"); anything but a whole number in 1..2^31-1 is
/// InvalidArgument naming `field` and the text.
[[nodiscard]] Result<qint64> parseQuantity(const QString &text, const QString &field = QStringLiteral("qty"));

/// A value shown in an error message: quoted, control characters (`\xHH`) and lone
/// surrogates (`\u{XXXX}`) escaped, cut to 40 characters.
QString quoteForMessage(const QString &value);

} // namespace flashstock
