#pragma once

// Internal to core/store: the conversions between statement values and C++ that every store
// makes the same way.

#include <QMetaType>
#include <QString>
#include <QVariant>

namespace flashstock {

/// A column read as a whole number (NULL reads 0).
inline qint64 i64(const QVariant &v)
{
    return v.toLongLong();
}

/// `s` bound as text, or as SQL NULL when it is empty.
inline QVariant nullable(const QString &s)
{
    return s.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(s);
}

} // namespace flashstock
