#include "store/ApproverStore.h"

#include "Identifiers.h"
#include "store/Database.h"

using namespace Qt::StringLiterals;

namespace flashstock {

ApproverStore::ApproverStore(Database &db)
    : m_db(db)
{
}

Result<void> ApproverStore::requireApprover(Database &db, const QString &name)
{
    auto r = db.exec(u"SELECT 1 FROM approvers WHERE name = ?"_s, {name});
    if (!r)
        return std::unexpected(r.error());
    if (r->isEmpty())
        return fail(ErrorCode::NotPermitted,
                    u"operator: %1 is not an approver of this book (see `flashstock-cli approver list`)"_s.arg(
                        name.isEmpty() ? u"(nobody)"_s : quoteForMessage(name)),
                    u"operator"_s);
    return {};
}

Result<ApproverPolicy> ApproverStore::policy(const QStringList &seed)
{
    auto read = [this]() -> Result<ApproverPolicy> {
        auto p = m_db.exec(u"SELECT four_eyes_units, seeded FROM approval_policy WHERE id = 1"_s);
        if (!p)
            return std::unexpected(p.error());
        if (p->isEmpty())
            return fail(ErrorCode::Internal, u"the book has no approval policy row"_s);
        ApproverPolicy out;
        out.fourEyesUnits = p->first().at(0).toLongLong();
        auto names = m_db.exec(u"SELECT name FROM approvers ORDER BY name"_s);
        if (!names)
            return std::unexpected(names.error());
        for (const QVariantList &row : names->rows)
            out.approvers << row.at(0).toString();
        return out;
    };
    auto seeded = m_db.exec(u"SELECT seeded FROM approval_policy WHERE id = 1"_s);
    if (!seeded)
        return std::unexpected(seeded.error());
    QStringList valid;
    for (const QString &name : seed)
        if (checkName(normalizedName(name), u"approver"_s))
            valid << normalizedName(name);
    if (seeded->isEmpty() || seeded->first().at(0).toInt() != 0 || valid.isEmpty())
        return read();
    // Never seeded and a seed to give: once, under the write lock (a second process that
    // raced here finds it seeded and adds nothing).
    auto done = m_db.write<bool>([&](Transaction &) -> Result<bool> {
        auto claim = m_db.exec(u"UPDATE approval_policy SET seeded = 1, changed_by = 'data dir seed', changed_at = %1 "
                               u"WHERE id = 1 AND seeded = 0"_s.arg(m_db.nowMsExpr()));
        if (!claim)
            return std::unexpected(claim.error());
        if (claim->affected != 1)
            return false;
        for (const QString &name : valid)
            if (auto r = m_db.exec(u"INSERT INTO approvers (name, added_by, added_at) VALUES (?, 'data dir seed', %1) "
                                   u"ON CONFLICT (name) DO NOTHING"_s.arg(m_db.nowMsExpr()),
                                   {name});
                !r)
                return std::unexpected(r.error());
        return true;
    });
    if (!done)
        return std::unexpected(done.error());
    return read();
}

Result<bool> ApproverStore::add(const QString &name, const QString &by)
{
    if (auto r = checkName(name, u"name"_s); !r)
        return std::unexpected(r.error());
    return m_db.write<bool>([&](Transaction &) -> Result<bool> {
        if (auto r = requireApprover(m_db, by); !r)
            return std::unexpected(r.error());
        auto added = m_db.exec(u"INSERT INTO approvers (name, added_by, added_at) VALUES (?, ?, %1) "
                               u"ON CONFLICT (name) DO NOTHING"_s.arg(m_db.nowMsExpr()),
                               {normalizedName(name), by});
        if (!added)
            return std::unexpected(added.error());
        return added->affected == 1;
    });
}

Result<void> ApproverStore::remove(const QString &name, const QString &by)
{
    if (auto r = checkName(name, u"name"_s); !r)
        return std::unexpected(r.error());
    return m_db.write<void>([&](Transaction &) -> Result<void> {
        if (auto r = requireApprover(m_db, by); !r)
            return r;
        auto count = m_db.exec(u"SELECT COUNT(*) FROM approvers"_s);
        if (!count)
            return std::unexpected(count.error());
        auto removed = m_db.exec(u"DELETE FROM approvers WHERE name = ?"_s, {normalizedName(name)});
        if (!removed)
            return std::unexpected(removed.error());
        if (removed->affected != 1)
            return fail(ErrorCode::InvalidArgument,
                        u"name: %1 is not an approver of this book"_s.arg(quoteForMessage(name)), u"name"_s);
        if (count->first().at(0).toLongLong() <= 1)
            return fail(ErrorCode::InvalidArgument,
                        u"name: %1 is the book's last approver; add another before removing it"_s.arg(
                            quoteForMessage(name)),
                        u"name"_s);
        return {};
    });
}

Result<void> ApproverStore::setFourEyesUnits(qint64 units, const QString &by)
{
    if (units < 0 || units > kMaxQuantity)
        return fail(ErrorCode::InvalidArgument,
                    u"four-eyes-units: %1 is not a number of units from 0 to %2"_s.arg(units).arg(kMaxQuantity),
                    u"four-eyes-units"_s);
    return m_db.write<void>([&](Transaction &) -> Result<void> {
        if (auto r = requireApprover(m_db, by); !r)
            return r;
        auto set = m_db.exec(u"UPDATE approval_policy SET four_eyes_units = ?, changed_by = ?, changed_at = %1 "
                             u"WHERE id = 1"_s.arg(m_db.nowMsExpr()),
                             {units, by});
        if (!set)
            return std::unexpected(set.error());
        return {};
    });
}

} // namespace flashstock
