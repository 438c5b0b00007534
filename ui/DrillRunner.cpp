#include "DrillRunner.h"

#include "drill/Drill.h"
#include "gate/EmbeddedRedis.h"
#include "open/EngineOpener.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QTemporaryDir>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The drill's options from the console's profile and the view's request, validated before
/// any server starts; then the data dir and the gate are brought up as the console's are.
Result<DrillOptions> drillOptions(const EngineProfile &profile, const DrillRequest &request)
{
    auto resolved = EngineOpener::resolve(profile);
    if (!resolved)
        return std::unexpected(resolved.error());
    DrillOptions o;
    static_cast<DrillParameters &>(o) = request;
    o.sku = request.sku.trimmed();
    auto faults = parseFaults(request.faults);
    if (!faults)
        return std::unexpected(faults.error());
    o.faults = *faults;
    o.useProfile(*resolved);
    if (auto v = o.validate(); !v)
        return std::unexpected(v.error());
    auto opened = EngineOpener::open(*resolved, u"drill"_s);
    if (!opened)
        return std::unexpected(opened.error());
    if (!opened->gate.problem.isEmpty())
        return fail(ErrorCode::Unavailable,
                    QObject::tr("The drill needs its gate, which is down: %1").arg(opened->gate.problem), u"redis"_s);
    return o;
}

} // namespace

void DrillRunner::run(const EngineProfile &profile, const DrillRequest &request,
                      std::shared_ptr<std::atomic<bool>> cancel)
{
    QElapsedTimer clock;
    clock.start();
    DrillOutcome outcome;
    outcome.sku = request.sku.trimmed();
    // The scratch target: a data dir of its own (short path: the unix socket lives in it),
    // its embedded redis-server stopped and the dir removed before the outcome is told.
    std::optional<QTemporaryDir> scratch;
    const auto finish = [&] {
        if (scratch) {
            (void)EmbeddedRedis(scratch->path()).stop();
            scratch.reset();
        }
        outcome.seconds = double(clock.elapsed()) / 1000.0;
        emit finished(outcome);
    };
    EngineProfile target = profile;
    if (request.target == DrillTarget::Scratch) {
        scratch.emplace(QDir::temp().filePath(u"flashstock-drill-XXXXXX"_s));
        if (!scratch->isValid()) {
            outcome.error = tr("Cannot create a scratch data dir: %1").arg(scratch->errorString());
            return finish();
        }
        const bool haveRedis = EmbeddedRedis::findServer().has_value();
        target = EngineProfile{scratch->path(), {}, haveRedis ? QString() : u"none"_s, profile.operatorName};
        outcome.target = haveRedis ? tr("scratch book and gate in %1 (removed afterwards)").arg(scratch->path())
                                   : tr("scratch book in %1, book-only: redis-server is not installed (removed "
                                        "afterwards)")
                                         .arg(scratch->path());
    } else {
        outcome.target = tr("the console's book and gate");
    }
    auto options = drillOptions(target, request);
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
    qRegisterMetaType<EngineProfile>();
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

bool DrillController::start(const EngineProfile &profile, const DrillRequest &request)
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
