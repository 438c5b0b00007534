#include "support/EngineHelpers.h"

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

int countWarnings(const WarningRing &warnings, WarningKind kind, const QString &sku)
{
    return int(std::count_if(warnings.items().cbegin(), warnings.items().cend(), [&](const EngineWarning &w) {
        return w.kind == kind && (sku.isEmpty() || w.sku == sku);
    }));
}

} // namespace flashstock::test
