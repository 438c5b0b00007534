#include "LaunchWizard.h"

#include "ConsoleSession.h"
#include "ConsoleText.h"
#include "EngineWorker.h"
#include "SkuDialogs.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDateTimeEdit>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
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

namespace {

/// A date and time edit in UTC, as every time the console shows (and the CLI reads).
QDateTimeEdit *utcEdit(QWidget *parent, qint64 secsFromNow)
{
    auto *edit = new QDateTimeEdit(parent);
    edit->setTimeSpec(Qt::UTC);
    edit->setDateTime(QDateTime::currentDateTimeUtc().addSecs(secsFromNow));
    edit->setCalendarPopup(true);
    edit->setDisplayFormat(u"yyyy-MM-dd HH:mm 'UTC'"_s);
    edit->setEnabled(false);
    return edit;
}

/// A form row of a check box, a time edit and the local time: its label's mnemonic focuses
/// the check box (a label of a layout has no buddy of its own, and would show its `&`).
QLabel *timeRow(QFormLayout *form, const QString &label, QCheckBox *box, QDateTimeEdit *edit, QLabel *local)
{
    auto *row = new QHBoxLayout;
    row->addWidget(box);
    row->addWidget(edit, 1);
    row->addWidget(local, 1);
    auto *caption = new QLabel(label, form->parentWidget());
    caption->setBuddy(box);
    form->addRow(caption, row);
    return caption;
}

} // namespace

LaunchWizard::LaunchWizard(ConsoleSession *session, const QList<SkuSample> &known, QWidget *parent)
    : QWizard(parent)
    , m_session(session)
    , m_known(known)
{
    setWindowTitle(tr("Launch a flash sale"));
    setWizardStyle(QWizard::ClassicStyle);
    setOption(QWizard::NoBackButtonOnLastPage, false);
    setButtonText(QWizard::FinishButton, tr("&Launch"));

    auto *salePage = new QWizardPage(this);
    salePage->setTitle(tr("Sale"));
    salePage->setSubTitle(tr("Give a flash-sale item its own SKU and stock. Times are UTC, as everywhere in "
                             "FlashStock; your local time is shown beside them."));
    auto *form = new QFormLayout(salePage);
    m_sku = new QComboBox(salePage);
    m_sku->setEditable(true);
    for (const SkuSample &s : known)
        m_sku->addItem(s.sku);
    m_sku->setCurrentText(QString());
    m_sku->lineEdit()->setPlaceholderText(tr("new or existing SKU id"));
    form->addRow(tr("&SKU:"), m_sku);
    m_skuNote = new QLabel(salePage);
    m_skuNote->setWordWrap(true);
    form->addRow(QString(), m_skuNote);
    m_units = new QSpinBox(salePage);
    m_units->setRange(1, 2147483647);
    m_units->setValue(100);
    m_units->setGroupSeparatorShown(true);
    m_units->setSuffix(tr(" units"));
    m_units->setToolTip(tr("A new SKU is created with this stock (ledgered). An existing SKU's sale offers what it has "
                           "available; restock it as its own step."));
    form->addRow(tr("S&tock (new SKU):"), m_units);
    m_buckets = new QSpinBox(salePage);
    m_buckets->setRange(1, 1024);
    m_buckets->setToolTip(tr("Buckets split a hot SKU's rows in the book; only for a new SKU"));
    form->addRow(tr("&Buckets (new SKU):"), m_buckets);

    m_startNow = new QCheckBox(tr("when started"), salePage);
    m_startNow->setChecked(true);
    m_start = utcEdit(salePage, 300);
    m_startLocal = new QLabel(salePage);
    timeRow(form, tr("St&art (UTC):"), m_startNow, m_start, m_startLocal);
    m_noEnd = new QCheckBox(tr("until stopped"), salePage);
    m_noEnd->setChecked(true);
    m_end = utcEdit(salePage, 3600);
    m_endLocal = new QLabel(salePage);
    timeRow(form, tr("&End (UTC):"), m_noEnd, m_end, m_endLocal);
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
    connect(m_startNow, &QCheckBox::toggled, this, [this](bool on) {
        m_start->setEnabled(!on);
        updateLocalHints();
    });
    connect(m_noEnd, &QCheckBox::toggled, this, [this](bool on) {
        m_end->setEnabled(!on);
        updateLocalHints();
    });
    connect(m_start, &QDateTimeEdit::dateTimeChanged, this, &LaunchWizard::updateLocalHints);
    connect(m_end, &QDateTimeEdit::dateTimeChanged, this, &LaunchWizard::updateLocalHints);
    connect(m_sku, &QComboBox::currentTextChanged, this, &LaunchWizard::updateSkuFields);
    addPage(salePage);

    m_preflightPage = new PreflightPage(this);
    m_preflightPage->setTitle(tr("Pre-flight"));
    m_preflightPage->setSubTitle(tr("Every check must pass before the sale can launch. Nothing has been done yet."));
    auto *checks = new QVBoxLayout(m_preflightPage);
    m_checks = new QListWidget(m_preflightPage);
    m_checks->setSelectionMode(QAbstractItemView::NoSelection);
    m_checks->setWordWrap(true);
    m_checks->setFocusPolicy(Qt::NoFocus);
    checks->addWidget(m_checks, 1);
    m_plan = new QLabel(m_preflightPage);
    m_plan->setWordWrap(true);
    m_plan->setTextFormat(Qt::PlainText);
    m_plan->setFrameShape(QFrame::StyledPanel);
    m_plan->setMargin(6);
    checks->addWidget(m_plan);
    m_checkStatus = new QLabel(m_preflightPage);
    m_checkStatus->setWordWrap(true);
    checks->addWidget(m_checkStatus);
    auto *again = new QPushButton(tr("&Check again"), m_preflightPage);
    connect(again, &QPushButton::clicked, this, &LaunchWizard::runPreflight);
    m_restock = new QPushButton(tr("&Restock…"), m_preflightPage);
    m_restock->setToolTip(tr("Add units to this SKU first: its own ledgered step, with a reason"));
    connect(m_restock, &QPushButton::clicked, this, &LaunchWizard::openRestock);
    m_openNow = new QCheckBox(tr("&Open the sale now (Start)"), m_preflightPage);
    m_openNow->setChecked(true);
    connect(m_openNow, &QCheckBox::toggled, this, [this] { m_plan->setText(planText()); });
    auto *row = new QHBoxLayout;
    row->addWidget(m_openNow);
    row->addStretch();
    row->addWidget(m_restock);
    row->addWidget(again);
    checks->addLayout(row);
    addPage(m_preflightPage);

    connect(session->worker(), &EngineWorker::preflightReady, this, &LaunchWizard::showPreflight);
    // A restock made from here (or anywhere) changes what the launch offers: check again.
    connect(session->worker(), &EngineWorker::skuChanged, this, [this](const SkuChange &c) {
        if (c.sku == request().sku && currentPage() == m_preflightPage)
            runPreflight();
    });
    updateSkuFields();
    updateLocalHints();
    resize(720, 560);
}

const SkuSample *LaunchWizard::known(const QString &sku) const
{
    for (const SkuSample &s : m_known)
        if (s.sku == sku)
            return &s;
    return nullptr;
}

void LaunchWizard::updateSkuFields()
{
    const SkuSample *s = known(m_sku->currentText().trimmed());
    m_units->setEnabled(!s);
    m_buckets->setEnabled(!s);
    if (s)
        m_skuNote->setText(tr("Existing SKU: %L1 units available, %n bucket(s). The sale offers what is available; "
                              "a launch never changes its stock (restock on the next page if it is short).",
                              nullptr, s->buckets)
                               .arg(s->available));
    else if (!m_sku->currentText().trimmed().isEmpty())
        m_skuNote->setText(tr("New SKU: created with the stock below (ledgered)."));
    else
        m_skuNote->setText(tr("Type a new SKU id, or pick an existing SKU."));
}

void LaunchWizard::updateLocalHints()
{
    m_startLocal->setText(m_startNow->isChecked() ? QString()
                                                  : ConsoleText::localHint(m_start->dateTime().toMSecsSinceEpoch()));
    m_endLocal->setText(m_noEnd->isChecked() ? QString() : ConsoleText::localHint(m_end->dateTime().toMSecsSinceEpoch()));
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

QString LaunchWizard::planText() const
{
    const SaleRequest r = request();
    if (m_preflight.sku != r.sku)
        return {};
    const QLocale loc;
    QStringList steps;
    if (!m_preflight.skuExists)
        steps << tr("• create SKU %1 with %2 units in %n bucket(s) (ledgered in your name)", nullptr, r.buckets)
                     .arg(r.sku, loc.toString(r.units));
    else
        steps << tr("• sell the %1 units %2 has available now; its stock is not changed").arg(
            loc.toString(m_preflight.bookAvailable), r.sku);
    const QString from = r.startMs ? ConsoleText::utcTime(r.startMs, false) : tr("when started");
    const QString to = r.endMs ? ConsoleText::utcTime(r.endMs, false) : tr("until stopped");
    steps << tr("• create the sale: window %1 → %2, holds of %3 s, per-user limit %4")
                 .arg(from, to)
                 .arg(r.holdSeconds)
                 .arg(r.perUserLimit ? loc.toString(r.perUserLimit) : tr("none"));
    steps << (r.start ? tr("• open it now (Start)") : tr("• leave it scheduled: start it from the Sales view"));
    return tr("Launch will:") + u'\n' + steps.join(u'\n');
}

QString LaunchWizard::statusText() const
{
    return m_checkStatus->text();
}

RestockDialog *LaunchWizard::openRestock()
{
    const SaleRequest r = request();
    if (!m_preflight.skuExists || m_preflight.sku != r.sku)
        return nullptr;
    SkuSample s;
    s.sku = r.sku;
    s.available = m_preflight.bookAvailable;
    s.total = m_preflight.bookTotal;
    auto *dialog = new RestockDialog(s, m_session->profile().operatorName, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        m_checks->clear();
        m_checkStatus->setText(tr("Restocking…"));
        m_session->changeSku(dialog->change());
    });
    dialog->open();
    return dialog;
}

void LaunchWizard::runPreflight()
{
    const SaleRequest r = request();
    m_checks->clear();
    m_plan->clear();
    m_checkStatus->setText(tr("Checking…"));
    m_restock->setVisible(false);
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
    if (r.endMs && r.endMs <= (r.startMs ? r.startMs : QDateTime::currentMSecsSinceEpoch()))
        m_preflight.items << PreflightItem{tr("The end must come after the start"), false, true};
    m_checks->clear();
    for (const PreflightItem &item : std::as_const(m_preflight.items)) {
        const QStyle::StandardPixmap icon = item.ok ? QStyle::SP_DialogApplyButton
                                            : item.blocking ? QStyle::SP_MessageBoxCritical
                                                            : QStyle::SP_MessageBoxWarning;
        m_checks->addItem(new QListWidgetItem(style()->standardIcon(icon), item.label));
    }
    m_restock->setVisible(result.skuExists);
    const bool ok = m_preflight.ok();
    m_plan->setText(planText());
    m_checkStatus->setText(ok ? tr("Ready: Launch does the above.")
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
