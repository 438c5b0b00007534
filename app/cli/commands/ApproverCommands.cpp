#include "ApproverCommands.h"

#include "CliContext.h"
#include "Identifiers.h"
#include "reconcile/Approvers.h"
#include "store/ApproverStore.h"

#include <QCommandLineParser>
#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The book's policy, seeded once from the data dir's list while the book has none (reads
/// and writes of the book only: no redis-server is started).
Result<ApproverPolicy> policyOf(CliContext &ctx, std::optional<ApproverStore> &store)
{
    auto engine = ctx.engine(GateNeed::BookIsEnough);
    if (!engine)
        return std::unexpected(engine.error());
    store.emplace((*engine)->database());
    return store->policy(seedApprovers(ctx.profile.dataDir));
}

/// The policy as `approver list` and the changes print it; `operator` is the asserted one.
CommandOutput policyOutput(const ApproverPolicy &policy, const QString &operatorName)
{
    CommandOutput out;
    const bool may = policy.allows(operatorName);
    out.json = {{u"approvers"_s, QJsonArray::fromStringList(policy.approvers)},
                {u"four_eyes_units"_s, policy.fourEyesUnits},
                {u"operator"_s, operatorName},
                {u"operator_may_approve"_s, may}};
    if (policy.approvers.isEmpty())
        out.text = u"approvers: none yet (set [approval] approvers=NAME in the data dir's flashstock.ini; the first "
                   u"decision or approver command seeds the book from it, once)\n"_s;
    else
        out.text = u"approvers: %1\n"_s.arg(printable(policy.approvers.join(u", "_s)));
    out.text += u"four eyes: a correction above %1 units needs two different approvers\n"_s.arg(policy.fourEyesUnits);
    out.text += printable(u"operator %1 %2\n"_s.arg(operatorName, may ? u"may approve"_s : u"may not approve"_s), true);
    return out;
}

/// The single NAME argument of `approver add` / `approver remove`, checked and in NFC.
Result<QString> nameArgument(const QStringList &args, const QString &synopsis)
{
    if (args.size() != 1)
        return fail(ErrorCode::InvalidArgument, u"name: expected exactly one approver name (usage: %1)"_s.arg(synopsis),
                    u"name"_s);
    const QString name = normalizedName(args.first());
    if (auto r = checkName(name, u"name"_s); !r)
        return std::unexpected(r.error());
    return name;
}

/// `approver list`.
struct ApproverList final : Command {
    ApproverList()
        : Command({{u"approver"_s, u"list"_s}, u"approver list"_s,
                   u"who may approve or reject discrepancies, and the four-eyes limit (the book's policy)"_s, {}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args) override
    {
        if (auto r = noPositional(args); !r)
            return errorOutput(r.error());
        std::optional<ApproverStore> store;
        auto policy = policyOf(ctx, store);
        if (!policy)
            return errorOutput(policy.error());
        return policyOutput(*policy, ctx.profile.operatorName);
    }
};

/// `approver add NAME` / `approver remove NAME`, by an approver (`--operator`; exit 4 otherwise).
class ApproverChange : public Command {
public:
    ApproverChange(bool add, const QString &verb, const QString &summary)
        : Command({{u"approver"_s, verb}, u"approver %1 NAME [--operator NAME]"_s.arg(verb), summary, {}})
        , m_add(add)
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &, const QStringList &args) override
    {
        auto name = nameArgument(args, spec().synopsis);
        if (!name)
            return errorOutput(name.error());
        std::optional<ApproverStore> store;
        if (auto seeded = policyOf(ctx, store); !seeded)
            return errorOutput(seeded.error());
        const QString &by = ctx.profile.operatorName;
        bool changed = true;
        if (m_add) {
            auto added = store->add(*name, by);
            if (!added)
                return errorOutput(added.error());
            changed = *added;
        } else if (auto removed = store->remove(*name, by); !removed) {
            return errorOutput(removed.error());
        }
        auto policy = store->policy({});
        if (!policy)
            return errorOutput(policy.error());
        CommandOutput out = policyOutput(*policy, by);
        out.json.insert(u"approver"_s, *name);
        out.json.insert(m_add ? u"added"_s : u"removed"_s, changed);
        out.text.prepend(printable(m_add ? (changed ? u"%1 added by %2\n"_s : u"%1 was an approver already\n"_s)
                                               .arg(*name, by)
                                         : u"%1 removed by %2\n"_s.arg(*name, by),
                                   true));
        return out;
    }

private:
    bool m_add;
};

struct ApproverAdd final : ApproverChange {
    ApproverAdd() : ApproverChange(true, u"add"_s, u"let NAME approve and reject discrepancies (approvers only)"_s) {}
};

struct ApproverRemove final : ApproverChange {
    ApproverRemove()
        : ApproverChange(false, u"remove"_s, u"take NAME off the approvers (approvers only; never the last)"_s)
    {
    }
};

/// `approver policy [--four-eyes-units N]`: shows the policy, or sets the four-eyes limit.
struct ApproverPolicyCommand final : Command {
    ApproverPolicyCommand()
        : Command({{u"approver"_s, u"policy"_s}, u"approver policy [--four-eyes-units N]"_s,
                   u"show the approver policy, or set how many units a correction may move with one approver"_s,
                   {{u"four-eyes-units"_s,
                     u"A correction above N units needs a second, different approver (default 100; approvers only)."_s,
                     u"N"_s}}})
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override
    {
        if (auto r = noPositional(args); !r)
            return errorOutput(r.error());
        std::optional<qint64> units;
        if (parser.isSet(u"four-eyes-units"_s)) {
            bool ok = false;
            const qint64 n = parser.value(u"four-eyes-units"_s).trimmed().toLongLong(&ok);
            if (!ok || n < 0 || n > kMaxQuantity)
                return errorOutput({ErrorCode::InvalidArgument,
                                    u"four-eyes-units: %1 is not a number of units from 0 to %2"_s.arg(
                                        quoteForMessage(parser.value(u"four-eyes-units"_s)),
                                        QString::number(kMaxQuantity)),
                                    u"four-eyes-units"_s});
            units = n;
        }
        std::optional<ApproverStore> store;
        auto policy = policyOf(ctx, store);
        if (!policy)
            return errorOutput(policy.error());
        if (units) {
            if (auto r = store->setFourEyesUnits(*units, ctx.profile.operatorName); !r)
                return errorOutput(r.error());
            policy = store->policy({});
            if (!policy)
                return errorOutput(policy.error());
        }
        return policyOutput(*policy, ctx.profile.operatorName);
    }
};

} // namespace

Commands approverCommands()
{
    return makeCommands<ApproverList, ApproverAdd, ApproverRemove, ApproverPolicyCommand>();
}

} // namespace flashstock
