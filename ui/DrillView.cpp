#include "DrillView.h"

#include "ConsoleSession.h"
#include "DrillRunner.h"
#include "EngineWorker.h"
#include "Identifiers.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <limits>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

const QString kGreen = u"#2e9d4b"_s;
const QString kRed = u"#d9534f"_s;
const QString kAmber = u"#d08a00"_s;

QSpinBox *spin(QWidget *parent, int min, int max, int value, const QString &suffix = {})
{
    auto *s = new QSpinBox(parent);
    s->setRange(min, max);
    s->setValue(value);
    s->setGroupSeparatorShown(true);
    s->setSuffix(suffix);
    s->setAlignment(Qt::AlignRight);
    return s;
}

} // namespace

DrillView::DrillView(ConsoleSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_controller(new DrillController(this))
{
    auto *layout = new QHBoxLayout(this);

    // --- the options ---------------------------------------------------------------------
    auto *box = new QGroupBox(tr("Rehearsal"), this);
    auto *form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    auto *skuRow = new QHBoxLayout;
    m_sku = new QLineEdit(box);
    m_sku->setToolTip(tr("The drill creates this SKU; it must not exist yet."));
    m_newName = new QPushButton(tr("&New name"), box);
    m_newName->setToolTip(tr("A fresh drill-<time> name"));
    skuRow->addWidget(m_sku, 1);
    skuRow->addWidget(m_newName);
    auto *skuLabel = new QLabel(tr("&SKU:"), box);
    skuLabel->setBuddy(m_sku);
    form->addRow(skuLabel, skuRow);
    const DrillParameters d;
    m_stock = spin(box, 1, int(kMaxQuantity), int(d.stock), tr(" units"));
    form->addRow(tr("S&tock:"), m_stock);
    m_buyers = spin(box, 1, int(DrillParameters::kMaxBuyers), int(d.buyers));
    m_buyers->setToolTip(tr("Each buyer wants one unit."));
    form->addRow(tr("&Buyers:"), m_buyers);
    m_concurrency = spin(box, 1, DrillParameters::kMaxConcurrency, d.concurrency, tr(" threads"));
    m_concurrency->setToolTip(tr("Worker threads, each with its own engine."));
    form->addRow(tr("&Concurrency:"), m_concurrency);
    m_payRatio = new QDoubleSpinBox(box);
    m_payRatio->setRange(0, 1);
    m_payRatio->setSingleStep(0.05);
    m_payRatio->setDecimals(2);
    m_payRatio->setValue(d.payRatio);
    m_payRatio->setAlignment(Qt::AlignRight);
    m_payRatio->setToolTip(tr("Share of the buyers who pay; the others abandon and their holds expire."));
    form->addRow(tr("&Pay ratio:"), m_payRatio);
    m_hold = spin(box, 1, int(DrillParameters::kMaxHoldSeconds), int(d.holdSeconds), tr(" s"));
    form->addRow(tr("&Hold:"), m_hold);
    m_faults = new QComboBox(box);
    m_faults->addItem(tr("All faults"), u"all"_s);
    m_faults->addItem(tr("None"), u"none"_s);
    m_faults->setCurrentIndex(m_faults->findData(DrillParameters::defaultFaults()));
    m_faults->setToolTip(tr("All: every fault kind fires at least once; those that need a gate are left out "
                            "when the console runs book-only, node-failover unless the gate is a Redis Cluster."));
    form->addRow(tr("Fa&ults:"), m_faults);
    m_seed = spin(box, 0, std::numeric_limits<int>::max(), int(d.seed));
    m_seed->setGroupSeparatorShown(false);
    m_seed->setToolTip(tr("The same seed gives the same fault schedule."));
    form->addRow(tr("S&eed:"), m_seed);
    // Where it runs: scratch unless the operator says otherwise, and then only after a question.
    auto *targetBox = new QGroupBox(tr("Run on"), box);
    auto *targetLayout = new QVBoxLayout(targetBox);
    m_scratch = new QRadioButton(tr("A scr&atch book and gate of its own"), targetBox);
    m_scratch->setToolTip(tr("Safe during a sale: the drill's faults (a redis-server restart, a script flush, failing "
                             "book transactions) hit only its own temporary servers"));
    m_live = new QRadioButton(tr("This console's book and &gate"),
                              targetBox);
    m_scratch->setChecked(true);
    targetLayout->addWidget(m_scratch);
    targetLayout->addWidget(m_live);
    m_target = new QLabel(targetBox);
    m_target->setWordWrap(true);
    m_target->setTextInteractionFlags(Qt::TextSelectableByMouse);
    targetLayout->addWidget(m_target);
    form->addRow(targetBox);
    m_run = new QPushButton(tr("&Run drill"), box);
    m_run->setToolTip(tr("Run the drill where chosen above"));
    m_cancel = new QPushButton(tr("&Cancel drill"), box);
    m_cancel->setToolTip(tr("Stop serving buyers; the drill then winds down (holds expire, the reconciler runs) "
                            "so the book and gate stay consistent"));
    m_cancel->setEnabled(false);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_run, 1);
    buttons->addWidget(m_cancel);
    form->addRow(buttons);
    box->setMinimumWidth(box->sizeHint().width() + 80);
    box->setMaximumWidth(480);
    auto *left = new QVBoxLayout;
    left->addWidget(box);
    left->addStretch(1);
    layout->addLayout(left);

    // --- progress and report ---------------------------------------------------------------
    auto *right = new QVBoxLayout;
    m_verdict = new QLabel(this);
    QFont big = m_verdict->font();
    big.setPointSizeF(big.pointSizeF() * 2.0);
    big.setBold(true);
    m_verdict->setFont(big);
    m_verdict->setTextFormat(Qt::RichText);
    m_verdict->setWordWrap(true);
    m_verdict->setText(tr("No drill run yet"));
    right->addWidget(m_verdict);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    right->addWidget(m_progress);
    m_line = new QLabel(this);
    m_line->setWordWrap(true);
    m_line->setTextInteractionFlags(Qt::TextSelectableByMouse);
    right->addWidget(m_line);
    auto *reportRow = new QHBoxLayout;
    auto *reportLabel = new QLabel(tr("Report:"), this);
    reportRow->addWidget(reportLabel);
    reportRow->addStretch(1);
    m_json = new QCheckBox(tr("&JSON"), this);
    reportRow->addWidget(m_json);
    right->addLayout(reportRow);
    m_report = new QPlainTextEdit(this);
    m_report->setReadOnly(true);
    m_report->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_report->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_report->setPlaceholderText(tr("The report appears here when the drill has finished."));
    reportLabel->setBuddy(m_report);
    right->addWidget(m_report, 1);
    layout->addLayout(right, 1);

    m_generatedSku = DrillParameters::freshSku();
    m_sku->setText(m_generatedSku);
    connect(m_newName, &QPushButton::clicked, this, [this] {
        m_generatedSku = DrillParameters::freshSku();
        m_sku->setText(m_generatedSku);
    });
    connect(m_run, &QPushButton::clicked, this, &DrillView::run);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        m_controller->cancel();
        m_cancel->setEnabled(false);
        m_line->setText(tr("Cancelling: no new buyers; winding down…"));
    });
    connect(m_json, &QCheckBox::toggled, this, &DrillView::showReport);
    connect(m_scratch, &QRadioButton::toggled, this, &DrillView::describeTarget);
    connect(session->worker(), &EngineWorker::opened, this, &DrillView::describeTarget);
    describeTarget();
    connect(m_controller->runner(), &DrillRunner::progressed, this, &DrillView::onProgress);
    connect(m_controller->runner(), &DrillRunner::finished, this, &DrillView::onFinished);
}

DrillView::~DrillView() = default;

QString DrillView::verdictText() const
{
    return m_verdict->text();
}

QString DrillView::reportText() const
{
    return m_report->toPlainText();
}

bool DrillView::isRunning() const
{
    return m_controller->isRunning();
}

void DrillView::setVerdict(const QString &color, const QString &text)
{
    m_verdict->setText(u"<span style=\"color:%1\">%2</span>"_s.arg(color, text.toHtmlEscaped()));
}

DrillTarget DrillView::target() const
{
    return m_live->isChecked() ? DrillTarget::Console : DrillTarget::Scratch;
}

void DrillView::setTarget(DrillTarget target)
{
    (target == DrillTarget::Console ? m_live : m_scratch)->setChecked(true);
}

void DrillView::describeTarget()
{
    const ConnectionInfo &info = m_session->connection();
    if (target() == DrillTarget::Scratch) {
        m_target->setText(tr("A temporary data dir with its own SQLite book and redis-server, removed afterwards: "
                             "nothing of the console's is touched, so it is safe during a sale."));
        return;
    }
    m_target->setText(tr("Asks first, and is refused while a sale is open there.\nBook: %1\nGate: %2")
                          .arg(info.bookDisplay.isEmpty() ? tr("(not open)") : info.bookDisplay,
                               info.gateDisplay.isEmpty() ? tr("(not open)") : info.gateDisplay));
}

void DrillView::run()
{
    if (m_controller->isRunning() || m_confirmation)
        return;
    DrillRequest r;
    r.target = target();
    r.sku = m_sku->text().trimmed();
    r.stock = m_stock->value();
    r.buyers = m_buyers->value();
    r.concurrency = m_concurrency->value();
    r.payRatio = m_payRatio->value();
    r.holdSeconds = m_hold->value();
    r.faults = m_faults->currentData().toString();
    r.seed = quint64(m_seed->value());
    describeTarget();
    if (r.target == DrillTarget::Scratch)
        return start(r);
    const ConnectionInfo &info = m_session->connection();
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Drill on the live book and gate"),
                                tr("Run the drill on this console's own book and gate?"), QMessageBox::Cancel, this);
    box->setInformativeText(tr("Book: %1\nGate: %2\n\nIt creates SKU %3 there for good, and its faults act on these "
                               "servers: the redis-server may be restarted and its scripts flushed, and book "
                               "transactions fail on purpose. It is refused while any sale is open or paused there. "
                               "A scratch drill tests the same code without any of this.")
                                .arg(info.bookDisplay, info.gateDisplay, r.sku));
    QPushButton *go = box->addButton(tr("Run on the live book and gate"), QMessageBox::AcceptRole);
    box->setDefaultButton(qobject_cast<QPushButton *>(box->button(QMessageBox::Cancel)));
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this, [this, go, r](QAbstractButton *clicked) {
        if (clicked == go)
            start(r);
    });
    connect(box, &QObject::destroyed, this, [this] { m_confirmation = nullptr; });
    m_confirmation = box;
    box->open();
}

void DrillView::start(const DrillRequest &r)
{
    if (!m_controller->start(m_session->profile(), r))
        return;
    m_run->setEnabled(false);
    m_cancel->setEnabled(true);
    m_last = {};
    m_report->clear();
    m_progress->setRange(0, int(qMin<qint64>(r.buyers, std::numeric_limits<int>::max())));
    m_progress->setValue(0);
    m_progress->setFormat(tr("starting… %p%"));
    const QString where = r.target == DrillTarget::Scratch ? tr("a scratch book and gate") : tr("the live book and gate");
    setVerdict(kAmber, tr("Running drill on %1 (%2)…").arg(r.sku, where));
    m_line->setText(tr("Opening the book and the gate…"));
    emit message(tr("Drill started on %1, on %2").arg(r.sku, where));
}

void DrillView::onProgress(const DrillProgress &p)
{
    m_progress->setValue(int(qMin<qint64>(p.answered, m_progress->maximum())));
    m_progress->setFormat(p.phase == u"sale"_s ? tr("sale: %p%") : tr("%1…").arg(p.phase));
    m_line->setText(tr("[%1] %2 of %3 buyers answered · %4 units reserved · %5 paid · %6 buyers/s · %7 faults · "
                       "%8 s")
                        .arg(p.phase)
                        .arg(p.answered)
                        .arg(p.buyers)
                        .arg(p.reservedUnits)
                        .arg(p.paidUnits)
                        .arg(p.ratePerS, 0, 'f', 0)
                        .arg(p.faults)
                        .arg(p.elapsedS, 0, 'f', 1));
}

void DrillView::onFinished(const DrillOutcome &outcome)
{
    m_last = outcome;
    m_run->setEnabled(true);
    m_cancel->setEnabled(false);
    m_progress->setValue(m_progress->maximum());
    if (!outcome.ran) {
        m_progress->setFormat(tr("not run"));
        setVerdict(kRed, tr("Drill could not run"));
        m_line->setText(outcome.error);
        emit message(tr("Drill on %1 could not run: %2").arg(outcome.sku, outcome.error));
    } else {
        m_progress->setFormat(tr("done"));
        const QString verdict = outcome.cancelled ? tr("CANCELLED") : outcome.passed ? tr("PASSED") : tr("FAILED");
        setVerdict(outcome.cancelled ? kAmber : outcome.passed ? kGreen : kRed, tr("%1 — %2").arg(verdict, outcome.sku));
        m_line->setText(tr("Finished in %1 s, on %2.").arg(outcome.seconds, 0, 'f', 1).arg(outcome.target));
        emit message(tr("Drill on %1: %2").arg(outcome.sku, verdict));
        // The SKU now exists: offer a fresh default unless the operator typed their own.
        if (m_sku->text().trimmed() == m_generatedSku) {
            m_generatedSku = DrillParameters::freshSku();
            m_sku->setText(m_generatedSku);
        }
    }
    showReport();
    emit drillFinished(outcome);
}

void DrillView::showReport()
{
    if (!m_last.ran)
        m_report->setPlainText(m_last.error);
    else
        m_report->setPlainText(m_json->isChecked() ? m_last.reportJson : m_last.reportText);
}

} // namespace flashstock
