#pragma once

#include "ConsoleTypes.h"

#include <QWizard>

class QCheckBox;
class QComboBox;
class QDateTimeEdit;
class QLabel;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace flashstock {

class ConsoleSession;
class RestockDialog;

/// Launches a flash sale in two pages: the sale (SKU; stock and buckets for a new SKU; start
/// and end in UTC, with the local time beside them; hold seconds, per-user limit), then a
/// pre-flight the worker runs (gate ready, what the launch will do to the SKU, no open
/// discrepancy, no other live sale) and what Launch will do, which must pass before Launch.
/// A launch never changes an existing SKU's stock: its sale offers what the book has, and a
/// restock is its own step (Restock… on the pre-flight page: reason, confirmation, ledger).
/// On accept it sends the request through the session; the answer arrives as
/// EngineWorker::saleLaunched or failed. GUI thread.
class LaunchWizard : public QWizard {
    Q_OBJECT
public:
    /// `known`: the SKUs of the latest sample (offered in the SKU field; their stock is shown).
    LaunchWizard(ConsoleSession *session, const QList<SkuSample> &known, QWidget *parent = nullptr);

    /// The answers as they stand.
    SaleRequest request() const;
    /// The last pre-flight answer (empty until one arrived).
    const PreflightResult &preflight() const { return m_preflight; }
    /// What Launch will do, as the pre-flight page shows it.
    QString planText() const;
    /// The pre-flight verdict line, as shown.
    QString statusText() const;

    // Fields, for tests and for prefilling.
    QComboBox *skuField() const { return m_sku; }
    QSpinBox *unitsField() const { return m_units; }
    QSpinBox *bucketsField() const { return m_buckets; }
    QCheckBox *startNowField() const { return m_startNow; }
    QDateTimeEdit *startField() const { return m_start; }
    QCheckBox *noEndField() const { return m_noEnd; }
    QDateTimeEdit *endField() const { return m_end; }
    QSpinBox *holdField() const { return m_hold; }
    QSpinBox *limitField() const { return m_limit; }
    QPushButton *restockButton() const { return m_restock; }
    /// Opens the restock step for the wizard's existing SKU (as the Restock… button does).
    RestockDialog *openRestock();

    void accept() override;

signals:
    /// The pre-flight answer arrived and the checklist page was updated.
    void preflightShown(bool ok);

private:
    friend class PreflightPage;
    void runPreflight();
    void showPreflight(const PreflightResult &result);
    void updateSkuFields();
    void updateLocalHints();
    const SkuSample *known(const QString &sku) const;

    ConsoleSession *m_session = nullptr;
    QList<SkuSample> m_known;
    QComboBox *m_sku = nullptr;
    QLabel *m_skuNote = nullptr;
    QSpinBox *m_units = nullptr;
    QSpinBox *m_buckets = nullptr;
    QCheckBox *m_startNow = nullptr;
    QDateTimeEdit *m_start = nullptr;
    QLabel *m_startLocal = nullptr;
    QCheckBox *m_noEnd = nullptr;
    QDateTimeEdit *m_end = nullptr;
    QLabel *m_endLocal = nullptr;
    QSpinBox *m_hold = nullptr;
    QSpinBox *m_limit = nullptr;
    QListWidget *m_checks = nullptr;
    QLabel *m_plan = nullptr;
    QLabel *m_checkStatus = nullptr;
    QCheckBox *m_openNow = nullptr;
    QPushButton *m_restock = nullptr;
    class PreflightPage *m_preflightPage = nullptr;
    PreflightResult m_preflight;
    QString m_pendingKey; ///< "sku|units" of the pre-flight in flight
};

} // namespace flashstock
