#include "ConsoleSession.h"

#include "EngineWorker.h"

using namespace Qt::StringLiterals;

namespace flashstock {

ConsoleSession::ConsoleSession(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<EngineProfile>();
    qRegisterMetaType<ConnectionInfo>();
    qRegisterMetaType<LiveSnapshot>();
    qRegisterMetaType<PreflightResult>();
    qRegisterMetaType<SaleRequest>();
    qRegisterMetaType<LedgerSearchResult>();
    qRegisterMetaType<Discrepancy>();
    qRegisterMetaType<ApproverView>();
    qRegisterMetaType<Sale>();
    qRegisterMetaType<LedgerSearchMode>();
    qRegisterMetaType<QList<EngineWarning>>();
    qRegisterMetaType<SkuChange>();
    qRegisterMetaType<ExpiryRun>();
    m_thread.setObjectName(u"flashstock-engine"_s);
    m_worker = new EngineWorker; // no parent: it moves to the thread and dies there
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &EngineWorker::opened, this, [this](const ConnectionInfo &info) { m_info = info; });
    connect(m_worker, &EngineWorker::sampled, this, [this] { m_sampleInFlight = false; });
    connect(m_worker, &EngineWorker::expired, this, [this](const ExpiryRun &run) {
        if (!run.manual)
            m_expiryInFlight = false;
    });
    m_thread.start();
}

ConsoleSession::~ConsoleSession()
{
    m_thread.quit();
    m_thread.wait();
}

void ConsoleSession::open(const EngineProfile &profile)
{
    m_profile = profile;
    QMetaObject::invokeMethod(m_worker, [w = m_worker, profile] { w->open(profile); }, Qt::QueuedConnection);
}

bool ConsoleSession::sample()
{
    if (m_sampleInFlight)
        return false;
    m_sampleInFlight = true;
    QMetaObject::invokeMethod(m_worker, &EngineWorker::sample, Qt::QueuedConnection);
    return true;
}

void ConsoleSession::preflight(const QString &sku, qint64 units)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, sku, units] { w->preflight(sku, units); }, Qt::QueuedConnection);
}

void ConsoleSession::launchSale(const SaleRequest &request)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, request] { w->launchSale(request); }, Qt::QueuedConnection);
}

void ConsoleSession::setSaleStatus(qint64 saleId, SaleStatus status)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, saleId, status] { w->setSaleStatus(saleId, status); },
                              Qt::QueuedConnection);
}

void ConsoleSession::setSaleBookOnly(qint64 saleId, bool on)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, saleId, on] { w->setSaleBookOnly(saleId, on); },
                              Qt::QueuedConnection);
}

void ConsoleSession::rebuildGate(const QString &sku)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, sku] { w->rebuildGate(sku); }, Qt::QueuedConnection);
}

void ConsoleSession::changeSku(const SkuChange &change)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, change] { w->changeSku(change); }, Qt::QueuedConnection);
}

void ConsoleSession::releaseExpired(bool manual)
{
    if (!manual) {
        if (m_expiryInFlight)
            return;
        m_expiryInFlight = true;
    }
    QMetaObject::invokeMethod(m_worker, [w = m_worker, manual] { w->releaseExpired(manual); }, Qt::QueuedConnection);
}

void ConsoleSession::listDiscrepancies()
{
    QMetaObject::invokeMethod(m_worker, &EngineWorker::listDiscrepancies, Qt::QueuedConnection);
}

void ConsoleSession::reconcileNow(qint64 graceMs)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, graceMs] { w->reconcileNow(graceMs); }, Qt::QueuedConnection);
}

void ConsoleSession::resolveDiscrepancy(qint64 id, bool approve, const Correction &decidesOn, const QString &reason)
{
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, id, approve, decidesOn, reason] { w->resolveDiscrepancy(id, approve, decidesOn, reason); },
        Qt::QueuedConnection);
}

void ConsoleSession::traceDiscrepancy(const Discrepancy &discrepancy)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, discrepancy] { w->traceDiscrepancy(discrepancy); },
                              Qt::QueuedConnection);
}

void ConsoleSession::searchLedger(LedgerSearchMode mode, const QString &text)
{
    QMetaObject::invokeMethod(m_worker, [w = m_worker, mode, text] { w->searchLedger(mode, text); }, Qt::QueuedConnection);
}

} // namespace flashstock
