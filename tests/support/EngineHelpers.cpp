#include "support/EngineHelpers.h"

#include "reconcile/Approvers.h"

#include <QDebug>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace flashstock::test {

std::unique_ptr<Engine> openEngine(const DbUrl &db, const std::optional<RedisUrl> &redis)
{
    auto engine = Engine::open(EngineOptions{db, redis, Actor{u"tester"_s, u"test"_s}});
    if (!engine) {
        qWarning("open failed: %s", qPrintable(engine.error().message));
        return nullptr;
    }
    return std::move(*engine);
}

bool bookHolds(Engine &engine)
{
    auto check = engine.book().check();
    if (!check) {
        qWarning("check failed: %s", qPrintable(check.error().message));
        return false;
    }
    for (const QString &p : check->problems())
        qWarning("%s", qPrintable(p));
    return check->ok();
}

DecisionBy by(const QString &who)
{
    return decisionByThisProcess(who);
}

DecisionBy byAt(const QString &who, const QString &host)
{
    return DecisionBy{who, DecisionOrigin{who, host}};
}

Result<Discrepancy> approveAsShown(Reconciler &reconciler, qint64 id, const DecisionBy &by, const QString &reason,
                                   const QStringList &seedApprovers)
{
    auto shown = reconciler.get(id);
    if (!shown)
        return shown;
    return reconciler.approve(id, shown->correction, by, reason, seedApprovers);
}

int countWarnings(const WarningRing &warnings, WarningKind kind, const QString &sku)
{
    return int(std::count_if(warnings.items().cbegin(), warnings.items().cend(), [&](const EngineWarning &w) {
        return w.kind == kind && (sku.isEmpty() || w.sku == sku);
    }));
}

} // namespace flashstock::test
