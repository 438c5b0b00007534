#include "Identifiers.h"

namespace flashstock {

namespace {

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
    for (QChar c : value.left(40)) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            shown += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        else
            shown += c;
    }
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
    for (QChar c : value) {
        // Control characters (newline, ESC of a screen-clear), format characters (the bidi
        // controls U+202A-202E and U+2066-2069, zero-width spaces and joiners, marks) and
        // line or paragraph separators rewrite what a person sees when it is printed.
        const QChar::Category category = c.category();
        if (category == QChar::Other_Control || category == QChar::Other_Format
            || category == QChar::Separator_Line || category == QChar::Separator_Paragraph)
            return fail(ErrorCode::InvalidArgument,
                        QStringLiteral("%1 %2 contains a control, bidi or zero-width character (U+%3)")
                            .arg(field, quoteForMessage(value))
                            .arg(c.unicode(), 4, 16, QLatin1Char('0')),
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
    for (QChar c : text) {
        const QChar::Category category = c.category();
        const bool unsafe = category == QChar::Other_Control || category == QChar::Other_Format
            || category == QChar::Separator_Line || category == QChar::Separator_Paragraph;
        if (!unsafe || (keepLineBreaks && (c == QLatin1Char('\n') || c == QLatin1Char('\t'))))
            out += c;
        else if (c == QLatin1Char('\n'))
            out += QStringLiteral("\\n");
        else
            out += QStringLiteral("\\u{%1}").arg(c.unicode(), 4, 16, QLatin1Char('0'));
    }
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
