#include "store/ReconcilePassStore.h"

#include "store/Database.h"

#include <QHash>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

// The names of the pass's figures in reconcile_state.
const QString kFinishedAt = u"last_pass_finished_at"_s;
const QString kDuration = u"last_pass_duration_ms"_s;
const QString kAutoFixed = u"last_pass_auto_fixed"_s;
const QString kPending = u"last_pass_pending_approval"_s;
const QString kWarnings = u"last_pass_warnings"_s;

} // namespace

ReconcilePassStore::ReconcilePassStore(Database &db)
    : m_db(db)
{
}

Result<void> ReconcilePassStore::record(const ReconcilePassRecord &pass)
{
    const QString upsert = u"INSERT INTO reconcile_state (name, value) VALUES (?, %1) "
                           u"ON CONFLICT (name) DO UPDATE SET value = excluded.value"_s;
    return m_db.write<void>([&](Transaction &) -> Result<void> {
        for (const auto &[name, value] : {std::pair{kDuration, pass.durationMs}, std::pair{kAutoFixed, pass.autoFixed},
                                          std::pair{kPending, pass.pendingApproval}, std::pair{kWarnings, pass.warnings}})
            if (auto r = m_db.exec(upsert.arg(u"?"_s), {name, value}); !r)
                return std::unexpected(r.error());
        if (auto r = m_db.exec(upsert.arg(m_db.nowMsExpr()), {kFinishedAt}); !r)
            return std::unexpected(r.error());
        return {};
    });
}

Result<std::optional<ReconcilePassRecord>> ReconcilePassStore::last()
{
    auto rows = m_db.exec(u"SELECT name, value FROM reconcile_state WHERE name IN (?, ?, ?, ?, ?)"_s,
                          {kFinishedAt, kDuration, kAutoFixed, kPending, kWarnings});
    if (!rows)
        return std::unexpected(rows.error());
    QHash<QString, qint64> values;
    for (const QVariantList &row : std::as_const(rows->rows))
        values.insert(row.at(0).toString(), row.at(1).toLongLong());
    if (!values.contains(kFinishedAt))
        return std::optional<ReconcilePassRecord>{};
    return std::optional<ReconcilePassRecord>{ReconcilePassRecord{values.value(kFinishedAt), values.value(kDuration),
                                                                  values.value(kAutoFixed), values.value(kPending),
                                                                  values.value(kWarnings)}};
}

} // namespace flashstock
