#pragma once

#include "ConsoleTypes.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QMessageBox;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;

namespace flashstock {

class ConsoleSession;
class DrillController;

/// The drill view: a rehearsal on a fresh SKU, by default on a scratch book and gate of its
/// own (DrillTarget::Scratch: a temporary data dir, removed afterwards), so it can run during
/// a sale. The console's own book and gate are an explicit choice that asks first, naming
/// them, and that the core refuses while a sale is open there. The drill runs on its own
/// thread (DrillController); its progress and report arrive as queued signals; the report is
/// shown as text (or JSON) with PASSED or FAILED large above it. GUI thread.
class DrillView : public QWidget {
    Q_OBJECT
public:
    explicit DrillView(ConsoleSession *session, QWidget *parent = nullptr);
    ~DrillView() override;

    QLineEdit *skuField() const { return m_sku; }
    QSpinBox *stockField() const { return m_stock; }
    QSpinBox *buyersField() const { return m_buyers; }
    QSpinBox *concurrencyField() const { return m_concurrency; }
    QDoubleSpinBox *payRatioField() const { return m_payRatio; }
    QSpinBox *holdField() const { return m_hold; }
    QComboBox *faultsField() const { return m_faults; }
    QSpinBox *seedField() const { return m_seed; }
    QPushButton *runButton() const { return m_run; }
    /// Where the next drill runs (scratch by default).
    DrillTarget target() const;
    void setTarget(DrillTarget target);
    /// The confirmation a drill on the console's book and gate asks first, while open.
    QMessageBox *pendingConfirmation() const { return m_confirmation; }
    QPushButton *cancelButton() const { return m_cancel; }
    QProgressBar *progressBar() const { return m_progress; }
    /// The verdict line (PASSED, FAILED, or why the drill could not run).
    QString verdictText() const;
    /// The report box's text.
    QString reportText() const;
    bool isRunning() const;

    /// As if the operator pressed Run: starts a drill with the fields' values; on the console's
    /// own book and gate it asks first (pendingConfirmation()).
    void run();

signals:
    void drillFinished(const flashstock::DrillOutcome &outcome);
    /// For the status bar.
    void message(const QString &text);

private:
    void onProgress(const DrillProgress &p);
    void onFinished(const DrillOutcome &outcome);
    void showReport();
    void start(const DrillRequest &request);
    void describeTarget();
    void setVerdict(const QString &color, const QString &text);

    ConsoleSession *m_session = nullptr;
    DrillController *m_controller = nullptr;
    QLineEdit *m_sku = nullptr;
    QSpinBox *m_stock = nullptr;
    QSpinBox *m_buyers = nullptr;
    QSpinBox *m_concurrency = nullptr;
    QDoubleSpinBox *m_payRatio = nullptr;
    QSpinBox *m_hold = nullptr;
    QComboBox *m_faults = nullptr;
    QSpinBox *m_seed = nullptr;
    QPushButton *m_run = nullptr;
    QPushButton *m_cancel = nullptr;
    QPushButton *m_newName = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_line = nullptr;
    QLabel *m_verdict = nullptr;
    QLabel *m_target = nullptr;
    QRadioButton *m_scratch = nullptr;
    QRadioButton *m_live = nullptr;
    QMessageBox *m_confirmation = nullptr;
    QCheckBox *m_json = nullptr;
    QPlainTextEdit *m_report = nullptr;
    DrillOutcome m_last;
    QString m_generatedSku; ///< the default name last put in the field
};

} // namespace flashstock
