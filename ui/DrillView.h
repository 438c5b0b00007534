#pragma once

#include "ConsoleTypes.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace flashstock {

class ConsoleSession;
class DrillController;

/// The drill view: a rehearsal on a fresh SKU against the console's own book and gate (the
/// session's EngineProfile). The drill runs on its own thread (DrillController); its
/// progress and report arrive as queued signals; the report is shown as text (or JSON) with
/// PASSED or FAILED large above it. GUI thread.
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
    QPushButton *cancelButton() const { return m_cancel; }
    QProgressBar *progressBar() const { return m_progress; }
    /// The verdict line (PASSED, FAILED, or why the drill could not run).
    QString verdictText() const;
    /// The report box's text.
    QString reportText() const;
    bool isRunning() const;

    /// Starts a drill with the fields' values (as if the operator pressed Run).
    void run();

signals:
    void drillFinished(const flashstock::DrillOutcome &outcome);
    /// For the status bar.
    void message(const QString &text);

private:
    void onProgress(const DrillProgress &p);
    void onFinished(const DrillOutcome &outcome);
    void showReport();
    void setVerdict(const QString &color, const QString &text);
    static QString freshSkuName();

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
    QCheckBox *m_json = nullptr;
    QPlainTextEdit *m_report = nullptr;
    DrillOutcome m_last;
    QString m_generatedSku; ///< the default name last put in the field
};

} // namespace flashstock
