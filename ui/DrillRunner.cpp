#include "DrillRunner.h"

#include "ProfileSettings.h"

#include "drill/Drill.h"
#include "gate/EmbeddedRedis.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The drill's options from the console's profile and the view's request, or why not.
Result<DrillOptions> drillOptions(const ConnectionProfile &profile, const DrillRequest &request)
{
    DrillOptions o;
    o.sku = request.sku.trimmed();
    o.stock = request.stock;
    o.buyers = request.buyers;
    o.concurrency = request.concurrency;
    o.payRatio = request.payRatio;
    o.holdSeconds = request.holdSeconds;
    o.seed = request.seed;
    o.operatorName = profile.operatorName;
    auto faults = parseFaults(request.faults);
    if (!faults)
        return std::unexpected(faults.error());
    o.faults = *faults;

    const bool embedded = profile.redisUrl.isEmpty();
    auto db = ProfileSettings::bookUrl(profile);
    if (!db)
        return std::unexpected(db.error());
    o.db = *db;
    // Validate before starting any server (a gate is assumed unless the profile says none).
    auto gate = ProfileSettings::gateUrl(profile);
    if (!gate)
        return std::unexpected(gate.error());
    std::optional<RedisUrl> redis = *gate;
    o.redis = embedded ? std::optional<RedisUrl>(RedisUrl::unixSocket(u"/validation-only"_s)) : redis;
    if (auto v = o.validate(); !v)
        return std::unexpected(v.error());
    if (embedded) {
        EmbeddedRedis server(profile.dataDir);
        auto started = server.start();
        if (!started)
            return std::unexpected(started.error());
        redis = *started;
        o.embeddedDataDir = profile.dataDir;
    }
    o.redis = redis;
    return o;
}

} // namespace

void DrillRunner::run(const ConnectionProfile &profile, const DrillRequest &request,
                      std::shared_ptr<std::atomic<bool>> cancel)
{
    QElapsedTimer clock;
    clock.start();
    DrillOutcome outcome;
    outcome.sku = request.sku.trimmed();
    const auto finish = [&] {
        outcome.seconds = double(clock.elapsed()) / 1000.0;
        emit finished(outcome);
    };
    auto options = drillOptions(profile, request);
    if (!options) {
        outcome.error = options.error().message;
        return finish();
    }
    options->progressIntervalMs = 200;
    options->progress = [this](const DrillProgress &p) { emit progressed(p); };
    if (cancel)
        options->cancelled = [cancel] { return cancel->load(); };
    auto report = Drill(*options).run();
    if (!report) {
        outcome.error = report.error().message;
        return finish();
    }
    outcome.ran = true;
    outcome.passed = report->passed();
    outcome.cancelled = report->cancelled;
    outcome.reportText = report->toText();
    outcome.reportJson = QString::fromUtf8(QJsonDocument(report->toJson()).toJson(QJsonDocument::Indented));
    finish();
}

DrillController::DrillController(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<ConnectionProfile>();
    qRegisterMetaType<DrillRequest>();
    qRegisterMetaType<DrillOutcome>();
    qRegisterMetaType<DrillProgress>();
    m_thread.setObjectName(u"flashstock-drill"_s);
    m_runner = new DrillRunner; // no parent: it moves to the thread and dies there
    m_runner->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_runner, &QObject::deleteLater);
    connect(m_runner, &DrillRunner::finished, this, [this] { m_running = false; });
    m_thread.start();
}

DrillController::~DrillController()
{
    cancel();
    m_thread.quit();
    m_thread.wait();
}

bool DrillController::start(const ConnectionProfile &profile, const DrillRequest &request)
{
    if (m_running)
        return false;
    m_running = true;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    QMetaObject::invokeMethod(m_runner, [r = m_runner, profile, request, c = m_cancel] { r->run(profile, request, c); },
                              Qt::QueuedConnection);
    return true;
}

void DrillController::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
}

} // namespace flashstock
