#include "Identifiers.h"

#include <optional>

namespace flashstock {

namespace {

/// Calls `visit(code)` with each code point of `text`, in order. A surrogate pair is one code
/// point; a lone surrogate (no UTF-8 has it) is visited as its own value, U+D800..U+DFFF.
template <typename Visit>
void forEachCodePoint(const QString &text, Visit visit)
{
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (c.isHighSurrogate() && i + 1 < text.size() && text.at(i + 1).isLowSurrogate()) {
            visit(QChar::surrogateToUcs4(c, text.at(i + 1)));
            ++i;
        } else {
            visit(char32_t(c.unicode()));
        }
    }
}

/// True for a code point that rewrites what a person sees around it when printed: a control
/// (newline, the ESC of a screen clear), format (the bidi controls U+202A-202E and
/// U+2066-2069, zero-width spaces and joiners, tag characters) or line or paragraph
/// separator; and for a lone surrogate, which is no character at all.
bool unsafeToShow(char32_t code)
{
    if (QChar::isSurrogate(code))
        return true;
    const QChar::Category category = QChar::category(code);
    return category == QChar::Other_Control || category == QChar::Other_Format
        || category == QChar::Separator_Line || category == QChar::Separator_Paragraph;
}

/// `\u{XXXX}`: how printable() and quoteForMessage() show a code point they do not print.
QString escapedCode(char32_t code)
{
    return QStringLiteral("\\u{%1}").arg(uint(code), 4, 16, QLatin1Char('0'));
}

bool isIdChar(QChar c)
{
    const char16_t u = c.unicode();
    return (u >= u'a' && u <= u'z') || (u >= u'A' && u <= u'Z') || (u >= u'0' && u <= u'9')
        || u == u'.' || u == u'_' || u == u'-';
}

Result<void> checkId(const QString &value, const QString &field, const QString &what, int maxLength)
{
    if (value.isEmpty())
        return fail(ErrorCode::InvalidArgument, QStringLiteral("%1 must not be empty").arg(field), field);
    if (value.size() > maxLength)
        return fail(ErrorCode::InvalidArgument,
                    QStringLiteral("%1 is %2 characters long; %3 ids have at most %4")
                        .arg(field).arg(value.size()).arg(what).arg(maxLength),
                    field);
    for (QChar c : value) {
        if (!isIdChar(c))
            return fail(ErrorCode::InvalidArgument,
                        QStringLiteral("%1 %2 is not a valid %3 id: only A-Z a-z 0-9 . _ - are allowed")
                            .arg(field, quoteForMessage(value), what),
                        field);
    }
    return {};
}

} // namespace

QString quoteForMessage(const QString &value)
{
    QString shown;
    forEachCodePoint(value.left(40), [&](char32_t code) {
        if (code < 0x20 || code == 0x7f)
            shown += QStringLiteral("\\x%1").arg(uint(code), 2, 16, QLatin1Char('0'));
        else if (QChar::isSurrogate(code))
            shown += escapedCode(code);
        else
            shown += QString::fromUcs4(&code, 1);
    });
    if (value.size() > 40)
        shown += QStringLiteral("...");
    return QLatin1Char('"') + shown + QLatin1Char('"');
}

Result<void> checkSkuId(const QString &sku, const QString &field)
{
    return checkId(sku, field, QStringLiteral("SKU"), kMaxSkuLength);
}

Result<void> checkOrderId(const QString &order, const QString &field)
{
    return checkId(order, field, QStringLiteral("order"), kMaxOrderLength);
}

Result<void> checkTokenName(const QString &name, const QString &field)
{
    return checkId(name, field, QStringLiteral("token name"), kMaxTokenNameLength);
}

Result<void> checkName(const QString &value, const QString &field, int maxLength)
{
    if (value.trimmed().isEmpty())
        return fail(ErrorCode::InvalidArgument, QStringLiteral("%1 must not be empty").arg(field), field);
    if (value.size() > maxLength)
        return fail(ErrorCode::InvalidArgument,
                    QStringLiteral("%1 is %2 characters long; at most %3 are allowed")
                        .arg(field).arg(value.size()).arg(maxLength),
                    field);
    std::optional<char32_t> unsafe;
    forEachCodePoint(value, [&](char32_t code) {
        if (!unsafe && unsafeToShow(code))
            unsafe = code;
    });
    if (unsafe) {
        const QString code = QStringLiteral("U+%1").arg(uint(*unsafe), 4, 16, QLatin1Char('0')).toUpper();
        return fail(ErrorCode::InvalidArgument,
                    QChar::isSurrogate(*unsafe)
                        ? QStringLiteral("%1 %2 contains a lone surrogate (%3), which is not text").arg(
                              field, quoteForMessage(value), code)
                        : QStringLiteral("%1 %2 contains a control, bidi or zero-width character (%3)").arg(
                              field, quoteForMessage(value), code),
                    field);
    }
    // One spelling per name: a decomposed look-alike of a name is not another name.
    if (value != value.normalized(QString::NormalizationForm_C))
        return fail(ErrorCode::InvalidArgument,
                    QStringLiteral("%1 %2 is not in Unicode NFC (composed) form").arg(field, quoteForMessage(value)),
                    field);
    return {};
}

QString printable(const QString &text, bool keepLineBreaks)
{
    QString out;
    out.reserve(text.size());
    forEachCodePoint(text, [&](char32_t code) {
        if (!unsafeToShow(code) || (keepLineBreaks && (code == U'\n' || code == U'\t')))
            out += QString::fromUcs4(&code, 1);
        else if (code == U'\n')
            out += QStringLiteral("\\n");
        else
            out += escapedCode(code);
    });
    return out;
}

QString normalizedName(const QString &name)
{
    return name.normalized(QString::NormalizationForm_C);
}

Result<void> checkReleaseReason(const QString &reason, const QString &field)
{
    for (const char *known : {"timeout", "cancel", "risk"})
        if (reason == QLatin1String(known))
            return {};
    return fail(ErrorCode::InvalidArgument,
                QStringLiteral("%1 must be timeout, cancel or risk, got %2").arg(field, quoteForMessage(reason)), field);
}

Result<void> checkPaymentRef(const QString &payment, const QString &field)
{
    return checkName(payment, field);
}

Result<void> checkQuantity(qint64 qty, const QString &field)
{
    if (qty < 1 || qty > kMaxQuantity)
        return fail(ErrorCode::InvalidArgument,
                    QStringLiteral("%1 must be a whole number of units from 1 to %2, got %3")
                        .arg(field).arg(kMaxQuantity).arg(qty),
                    field);
    return {};
}

Result<void> checkHoldSeconds(qint64 seconds, const QString &field)
{
    if (seconds < 1 || seconds > kMaxHoldSeconds)
        return fail(ErrorCode::InvalidArgument,
                    QStringLiteral("%1 must be from 1 to %2, got %3").arg(field).arg(kMaxHoldSeconds).arg(seconds),
                    field);
    return {};
}

Result<qint64> parseQuantity(const QString &text, const QString &field)
{
    const QString t = text.trimmed();
    bool digitsOnly = !t.isEmpty() && t.size() <= 19;
    for (int i = 0; digitsOnly && i < t.size(); ++i)
        digitsOnly = t.at(i).isDigit() || (i == 0 && t.at(i) == QLatin1Char('-'));
    bool ok = false;
    const qint64 qty = digitsOnly ? t.toLongLong(&ok) : 0;
    if (!ok || qty < 1 || qty > kMaxQuantity)
        return fail(ErrorCode::InvalidArgument,
                    QStringLiteral("%1 must be a whole number of units from 1 to %2, got %3")
                        .arg(field).arg(kMaxQuantity).arg(quoteForMessage(text)),
                    field);
    return qty;
}

} // namespace flashstock
