#pragma once

#include "ConsoleTypes.h"

#include <QWizard>

class QCheckBox;
class QComboBox;
class QDateTimeEdit;
class QLabel;
class QListWidget;
class QSpinBox;

namespace flashstock {

class ConsoleSession;

/// Launches a flash sale in two pages: the sale (SKU, units, buckets for a new SKU, window,
/// hold seconds, per-user limit), then a pre-flight checklist the worker runs (gate ready,
/// book stock, no open discrepancy, no other open sale) that must pass before Launch.
/// On accept it sends the request through the session; the answer arrives as
/// EngineWorker::saleLaunched or failed. GUI thread.
class LaunchWizard : public QWizard {
    Q_OBJECT
public:
    LaunchWizard(ConsoleSession *session, const QStringList &knownSkus, QWidget *parent = nullptr);

    /// The answers as they stand.
    SaleRequest request() const;
    /// The last pre-flight answer (empty until one arrived).
    const PreflightResult &preflight() const { return m_preflight; }

    // Fields, for tests and for prefilling.
    QComboBox *skuField() const { return m_sku; }
    QSpinBox *unitsField() const { return m_units; }
    QSpinBox *bucketsField() const { return m_buckets; }
    QSpinBox *holdField() const { return m_hold; }
    QSpinBox *limitField() const { return m_limit; }

    void accept() override;

signals:
    /// The pre-flight answer arrived and the checklist page was updated.
    void preflightShown(bool ok);

private:
    friend class PreflightPage;
    void runPreflight();
    void showPreflight(const PreflightResult &result);

    ConsoleSession *m_session = nullptr;
    QComboBox *m_sku = nullptr;
    QSpinBox *m_units = nullptr;
    QSpinBox *m_buckets = nullptr;
    QCheckBox *m_startNow = nullptr;
    QDateTimeEdit *m_start = nullptr;
    QCheckBox *m_noEnd = nullptr;
    QDateTimeEdit *m_end = nullptr;
    QSpinBox *m_hold = nullptr;
    QSpinBox *m_limit = nullptr;
    QListWidget *m_checks = nullptr;
    QLabel *m_checkStatus = nullptr;
    QCheckBox *m_openNow = nullptr;
    class PreflightPage *m_preflightPage = nullptr;
    PreflightResult m_preflight;
    QString m_pendingKey; ///< "sku|units" of the pre-flight in flight
};

} // namespace flashstock
