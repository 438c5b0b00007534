#include "LaunchWizard.h"

#include "ConsoleSession.h"
#include "EngineWorker.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDateTimeEdit>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QVBoxLayout>
#include <QWizardPage>

using namespace Qt::StringLiterals;

namespace flashstock {

/// The checklist page: complete only when the latest pre-flight of the current answers passed.
class PreflightPage : public QWizardPage {
public:
    explicit PreflightPage(LaunchWizard *wizard)
        : m_wizard(wizard)
    {
    }
    void initializePage() override { m_wizard->runPreflight(); }
    bool isComplete() const override
    {
        const SaleRequest r = m_wizard->request();
        return m_wizard->m_pendingKey.isEmpty() && m_wizard->m_preflight.sku == r.sku && m_wizard->m_preflight.ok();
    }
    void changed() { emit completeChanged(); }

private:
    LaunchWizard *m_wizard;
};

LaunchWizard::LaunchWizard(ConsoleSession *session, const QStringList &knownSkus, QWidget *parent)
    : QWizard(parent)
    , m_session(session)
{
    setWindowTitle(tr("Launch a flash sale"));
    setWizardStyle(QWizard::ClassicStyle);
    setOption(QWizard::NoBackButtonOnLastPage, false);
    setButtonText(QWizard::FinishButton, tr("&Launch"));

    auto *salePage = new QWizardPage(this);
    salePage->setTitle(tr("Sale"));
    salePage->setSubTitle(tr("Give a flash-sale item its own SKU and stock."));
    auto *form = new QFormLayout(salePage);
    m_sku = new QComboBox(salePage);
    m_sku->setEditable(true);
    m_sku->addItems(knownSkus);
    m_sku->setCurrentText(QString());
    m_sku->lineEdit()->setPlaceholderText(tr("new or existing SKU id"));
    form->addRow(tr("&SKU:"), m_sku);
    m_units = new QSpinBox(salePage);
    m_units->setRange(1, 2147483647);
    m_units->setValue(100);
    m_units->setGroupSeparatorShown(true);
    m_units->setToolTip(tr("Stock for the sale: a new SKU is created with it; a SKU with less available is restocked "
                           "(ledgered)"));
    form->addRow(tr("&Units:"), m_units);
    m_buckets = new QSpinBox(salePage);
    m_buckets->setRange(1, 1024);
    m_buckets->setToolTip(tr("Buckets split a hot SKU's rows in the book; only for a new SKU"));
    form->addRow(tr("&Buckets (new SKU):"), m_buckets);

    auto *startRow = new QHBoxLayout;
    m_startNow = new QCheckBox(tr("when started"), salePage);
    m_startNow->setChecked(true);
    m_start = new QDateTimeEdit(QDateTime::currentDateTime().addSecs(300), salePage);
    m_start->setCalendarPopup(true);
    m_start->setDisplayFormat(u"yyyy-MM-dd HH:mm"_s);
    m_start->setEnabled(false);
    startRow->addWidget(m_startNow);
    startRow->addWidget(m_start, 1);
    form->addRow(tr("S&tart:"), startRow);
    auto *endRow = new QHBoxLayout;
    m_noEnd = new QCheckBox(tr("until stopped"), salePage);
    m_noEnd->setChecked(true);
    m_end = new QDateTimeEdit(QDateTime::currentDateTime().addSecs(3600), salePage);
    m_end->setCalendarPopup(true);
    m_end->setDisplayFormat(u"yyyy-MM-dd HH:mm"_s);
    m_end->setEnabled(false);
    endRow->addWidget(m_noEnd);
    endRow->addWidget(m_end, 1);
    form->addRow(tr("&End:"), endRow);
    m_hold = new QSpinBox(salePage);
    m_hold->setRange(1, 2592000);
    m_hold->setValue(120);
    m_hold->setSuffix(tr(" s"));
    m_hold->setToolTip(tr("How long a reservation holds its units before it expires"));
    form->addRow(tr("&Hold:"), m_hold);
    m_limit = new QSpinBox(salePage);
    m_limit->setRange(0, 2147483647);
    m_limit->setValue(1);
    m_limit->setSpecialValueText(tr("no limit"));
    form->addRow(tr("&Per-user limit:"), m_limit);
    connect(m_startNow, &QCheckBox::toggled, m_start, [this](bool on) { m_start->setEnabled(!on); });
    connect(m_noEnd, &QCheckBox::toggled, m_end, [this](bool on) { m_end->setEnabled(!on); });
    addPage(salePage);

    m_preflightPage = new PreflightPage(this);
    m_preflightPage->setTitle(tr("Pre-flight"));
    m_preflightPage->setSubTitle(tr("Every check must pass before the sale can launch."));
    auto *checks = new QVBoxLayout(m_preflightPage);
    m_checks = new QListWidget(m_preflightPage);
    m_checks->setSelectionMode(QAbstractItemView::NoSelection);
    m_checks->setWordWrap(true);
    m_checks->setFocusPolicy(Qt::NoFocus);
    checks->addWidget(m_checks, 1);
    m_checkStatus = new QLabel(m_preflightPage);
    m_checkStatus->setWordWrap(true);
    checks->addWidget(m_checkStatus);
    auto *again = new QPushButton(tr("&Check again"), m_preflightPage);
    connect(again, &QPushButton::clicked, this, &LaunchWizard::runPreflight);
    m_openNow = new QCheckBox(tr("&Open the sale now (Start)"), m_preflightPage);
    m_openNow->setChecked(true);
    auto *row = new QHBoxLayout;
    row->addWidget(m_openNow);
    row->addStretch();
    row->addWidget(again);
    checks->addLayout(row);
    addPage(m_preflightPage);

    connect(session->worker(), &EngineWorker::preflightReady, this, &LaunchWizard::showPreflight);
    resize(640, 480);
}

SaleRequest LaunchWizard::request() const
{
    SaleRequest r;
    r.sku = m_sku->currentText().trimmed();
    r.units = m_units->value();
    r.buckets = m_buckets->value();
    r.startMs = m_startNow->isChecked() ? 0 : m_start->dateTime().toMSecsSinceEpoch();
    r.endMs = m_noEnd->isChecked() ? 0 : m_end->dateTime().toMSecsSinceEpoch();
    r.holdSeconds = m_hold->value();
    r.perUserLimit = m_limit->value();
    r.start = m_openNow->isChecked();
    return r;
}

void LaunchWizard::runPreflight()
{
    const SaleRequest r = request();
    m_checks->clear();
    m_checkStatus->setText(tr("Checking…"));
    m_pendingKey = u"%1|%2"_s.arg(r.sku).arg(r.units);
    m_preflightPage->changed();
    m_session->preflight(r.sku, r.units);
}

void LaunchWizard::showPreflight(const PreflightResult &result)
{
    const SaleRequest r = request();
    if (m_pendingKey.isEmpty() || result.sku != r.sku)
        return; // an answer to an older question
    m_pendingKey.clear();
    m_preflight = result;
    m_checks->clear();
    for (const PreflightItem &item : result.items) {
        const QStyle::StandardPixmap icon = item.ok ? QStyle::SP_DialogApplyButton
                                            : item.blocking ? QStyle::SP_MessageBoxCritical
                                                            : QStyle::SP_MessageBoxWarning;
        m_checks->addItem(new QListWidgetItem(style()->standardIcon(icon), item.label));
    }
    if (r.endMs && r.endMs <= (r.startMs ? r.startMs : QDateTime::currentMSecsSinceEpoch())) {
        m_preflight.items << PreflightItem{tr("The end must come after the start"), false, true};
        m_checks->addItem(new QListWidgetItem(style()->standardIcon(QStyle::SP_MessageBoxCritical),
                                              m_preflight.items.last().label));
    }
    const bool ok = m_preflight.ok();
    m_checkStatus->setText(ok ? tr("Ready: Launch creates sale of %L1 units of %2.").arg(r.units).arg(r.sku)
                              : tr("Not ready: fix the items marked with a cross, then Check again."));
    m_preflightPage->changed();
    emit preflightShown(ok);
}

void LaunchWizard::accept()
{
    if (!m_preflightPage->isComplete())
        return;
    m_session->launchSale(request());
    QWizard::accept();
}

} // namespace flashstock
