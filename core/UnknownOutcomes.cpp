#include "UnknownOutcomes.h"

namespace flashstock {

void UnknownOutcomes::add(const QList<OrderLine> &lines)
{
    std::lock_guard lock(m_mutex);
    for (const OrderLine &l : lines)
        if (!l.token.isEmpty() && !m_bySku[l.sku].contains(l.token))
            m_bySku[l.sku] << l.token;
}

QHash<QString, QStringList> UnknownOutcomes::take()
{
    std::lock_guard lock(m_mutex);
    return std::exchange(m_bySku, {});
}

void UnknownOutcomes::putBack(const QString &sku, const QStringList &tokens)
{
    if (tokens.isEmpty())
        return;
    std::lock_guard lock(m_mutex);
    QStringList &kept = m_bySku[sku];
    for (const QString &t : tokens)
        if (!kept.contains(t))
            kept << t;
}

qsizetype UnknownOutcomes::size() const
{
    std::lock_guard lock(m_mutex);
    qsizetype n = 0;
    for (const QStringList &tokens : m_bySku)
        n += tokens.size();
    return n;
}

} // namespace flashstock
