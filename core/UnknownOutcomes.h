#pragma once

#include "Domain.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <mutex>

namespace flashstock {

/// Gate tokens a process left held because the book's answer to their reserve was lost
/// (a COMMIT whose connection dropped and whose replay failed too: OutcomeUnknown), kept
/// until the process resolves them itself (Reconciler::resolveTokens: settled if the book
/// has the order, given back after a fence if not) instead of waiting for a reconcile
/// pass. Filled by Engine::applyBooks when an engine records into it
/// (Engine::recordUnknownOutcomes). Thread-safe; owned by whoever runs the engines.
class UnknownOutcomes {
public:
    /// Keeps the tokens of `lines` (those with one). Any thread.
    void add(const QList<OrderLine> &lines);
    /// Takes every token kept so far, by SKU (they are no longer kept). Any thread.
    QHash<QString, QStringList> take();
    /// Keeps `tokens` of `sku` again (still unresolved). Any thread.
    void putBack(const QString &sku, const QStringList &tokens);
    /// Tokens kept now. Any thread.
    qsizetype size() const;

private:
    mutable std::mutex m_mutex;
    QHash<QString, QStringList> m_bySku;
};

} // namespace flashstock
