#include "MainWindow.h"

#include "AboutDialog.h"
#include "ConsoleSession.h"
#include "DrillView.h"
#include "EngineWorker.h"
#include "LaunchWizard.h"
#include "LedgerView.h"
#include "LiveView.h"
#include "ProfileDialog.h"
#include "ProfileSettings.h"
#include "ReconciliationView.h"
#include "SalesView.h"
#include "models/DiscrepancyModel.h"
#include "models/LedgerModel.h"
#include "models/WarningModel.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QPushButton>
#include <QVBoxLayout>
#include <QSpinBox>
#include <QTableView>
#include <QDir>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

QString latency(qint64 us)
{
    return us < 1000 ? QObject::tr("%1 µs").arg(us) : QObject::tr("%1 ms").arg(double(us) / 1000.0, 0, 'f', 1);
}

QString badge(const QString &color, const QString &text)
{
    return u"<span style=\"color:%1\">●</span> %2"_s.arg(color, text.toHtmlEscaped());
}

/// The list of `model`'s warnings with the dropped count and Clear; `model` stays the caller's.
QDialog *warningsDialog(WarningModel *model, QWidget *parent)
{
    auto *dialog = new QDialog(parent);
    dialog->setWindowTitle(QObject::tr("Engine warnings"));
    auto *layout = new QVBoxLayout(dialog);
    auto *intro = new QLabel(QObject::tr("Gate trouble met after the book had answered. The book stays right; the "
                                         "reconciler (or the action each one names) heals the gate."),
                             dialog);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto *table = new QTableView(dialog);
    table->setModel(model);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setWordWrap(false);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(table);
    auto *dropped = new QLabel(dialog);
    layout->addWidget(dropped);
    const auto showDropped = [model, dropped] {
        dropped->setVisible(model->dropped() > 0);
        dropped->setText(QObject::tr("%L1 older warnings dropped: only the newest are kept.").arg(model->dropped()));
    };
    QObject::connect(model, &WarningModel::countChanged, dropped, showDropped);
    showDropped();
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons->addButton(QObject::tr("C&lear"), QDialogButtonBox::ResetRole), &QPushButton::clicked,
                     model, &WarningModel::clear);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog->resize(900, 420);
    return dialog;
}

const QString kGreen = u"#2e9d4b"_s;
const QString kAmber = u"#d08a00"_s;
const QString kRed = u"#d9534f"_s;

} // namespace

MainWindow::MainWindow(const EngineProfile &profile, QWidget *parent)
    : QMainWindow(parent)
    , m_session(new ConsoleSession(this))
{
    setWindowTitle(tr("FlashStock console"));
    m_tabs = new QTabWidget(this);
    m_live = new LiveView(this);
    m_sales = new SalesView(m_session, this);
    m_reconciliation = new ReconciliationView(m_session, this);
    m_ledger = new LedgerView(m_session, this);
    m_drill = new DrillView(m_session, this);
    m_tabs->addTab(m_live, tr("&Live"));
    m_tabs->addTab(m_sales, tr("Sa&les"));
    m_tabs->addTab(m_reconciliation, tr("&Reconciliation"));
    m_tabs->addTab(m_ledger, tr("Le&dger"));
    m_tabs->addTab(m_drill, tr("Dr&ill"));
    m_tabs->setDocumentMode(true);
    setCentralWidget(m_tabs);

    auto *file = menuBar()->addMenu(tr("&File"));
    QAction *connection = file->addAction(tr("&Connection…"), this, &MainWindow::editConnection);
    connection->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_P);
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    auto *view = menuBar()->addMenu(tr("&View"));
    const QString names[] = {tr("Live"), tr("Sales"), tr("Reconciliation"), tr("Ledger"), tr("Drill")};
    for (int i = 0; i < 5; ++i) {
        QAction *a = view->addAction(names[i], this, [this, i] { m_tabs->setCurrentIndex(i); });
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
    }
    auto *actions = menuBar()->addMenu(tr("&Actions"));
    actions->addAction(m_sales->newSaleAction());
    QAction *reconcile = actions->addAction(tr("Reconcile now"), this, [this] {
        m_tabs->setCurrentWidget(m_reconciliation);
        m_reconciliation->reconcileAction()->trigger();
    });
    reconcile->setShortcut(Qt::Key_F5);
    QAction *find = actions->addAction(tr("Search the ledger"), this, [this] {
        m_tabs->setCurrentWidget(m_ledger);
        m_ledger->focusSearch();
    });
    find->setShortcut(Qt::CTRL | Qt::Key_L);
    // The view's own F5 only fires while it has focus; the menu's covers the other tabs.
    m_reconciliation->reconcileAction()->setShortcut({});
    auto *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About FlashStock"), this, [this] { AboutDialog(this).exec(); });

    m_gateStatus = new QLabel(this);
    m_bookStatus = new QLabel(this);
    m_where = new QLabel(this);
    m_gateStatus->setText(badge(kAmber, tr("Gate: connecting…")));
    m_bookStatus->setText(badge(kAmber, tr("Book: opening…")));
    m_warningModel = new WarningModel(WarningModel::kDefaultCapacity, this);
    m_warningStatus = new QToolButton(this);
    m_warningStatus->setAutoRaise(true);
    m_warningStatus->setToolTip(tr("Engine warnings: gate trouble left for the reconciler (click for the list)"));
    connect(m_warningStatus, &QToolButton::clicked, this, &MainWindow::showWarnings);
    connect(m_warningModel, &WarningModel::countChanged, this, &MainWindow::updateWarningStatus);
    updateWarningStatus();
    statusBar()->addPermanentWidget(m_warningStatus);
    statusBar()->addPermanentWidget(m_where);
    statusBar()->addPermanentWidget(m_gateStatus);
    statusBar()->addPermanentWidget(m_bookStatus);
    m_where->setText(tr("Operator %1").arg(profile.operatorName));

    connect(m_sales, &SalesView::message, this, &MainWindow::showStatusMessage);
    connect(m_reconciliation, &ReconciliationView::message, this, &MainWindow::showStatusMessage);
    connect(m_drill, &DrillView::message, this, &MainWindow::showStatusMessage);

    EngineWorker *w = m_session->worker();
    connect(w, &EngineWorker::opened, this, &MainWindow::onOpened);
    connect(w, &EngineWorker::sampled, this, &MainWindow::onSampled);
    connect(w, &EngineWorker::failed, this, &MainWindow::onFailed);
    connect(w, &EngineWorker::warned, m_warningModel, &WarningModel::add);

    m_sampleTimer = new QTimer(this);
    m_sampleTimer->setInterval(1000);
    connect(m_sampleTimer, &QTimer::timeout, m_session, &ConsoleSession::sample);

    resize(1280, 800);
    m_session->open(profile);
}

MainWindow::~MainWindow() = default;

void MainWindow::editConnection()
{
    auto *dialog = new ProfileDialog(m_session->profile(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        const EngineProfile p = dialog->profile();
        if (!ProfileSettings::save(p))
            showStatusMessage(tr("Cannot save the profile to %1").arg(ProfileSettings::filePath(p.dataDir)));
        reopen(p);
    });
    dialog->open();
}

void MainWindow::reopen(const EngineProfile &profile)
{
    m_sampleTimer->stop();
    m_liveSkuChosen = false;
    m_gateStatus->setText(badge(kAmber, tr("Gate: connecting…")));
    m_bookStatus->setText(badge(kAmber, tr("Book: opening…")));
    m_where->setText(tr("Operator %1").arg(profile.operatorName));
    showStatusMessage(tr("Reconnecting…"));
    m_session->open(profile);
}

void MainWindow::showStatusMessage(const QString &text)
{
    statusBar()->showMessage(text, 8000);
}

QString MainWindow::gateStatusText() const
{
    return m_gateStatus->text();
}

QString MainWindow::bookStatusText() const
{
    return m_bookStatus->text();
}

QString MainWindow::warningStatusText() const
{
    return m_warningStatus->text();
}

void MainWindow::updateWarningStatus()
{
    const qint64 count = m_warningModel->rowCount() + m_warningModel->dropped();
    // Quiet when there is nothing to read; amber, with the count, when there is.
    m_warningStatus->setText(count == 0   ? tr("No warnings")
                             : count == 1 ? tr("⚠ 1 warning")
                                          : tr("⚠ %L1 warnings").arg(count));
    m_warningStatus->setStyleSheet(count ? u"QToolButton { color: %1; font-weight: bold; }"_s.arg(kAmber) : QString());
}

QDialog *MainWindow::showWarnings()
{
    if (!m_warningsDialog)
        m_warningsDialog = warningsDialog(m_warningModel, this);
    m_warningsDialog->show();
    m_warningsDialog->raise();
    return m_warningsDialog;
}

void MainWindow::onOpened(const ConnectionInfo &info)
{
    if (!info.bookOpen) {
        m_bookStatus->setText(badge(kRed, tr("Book: DOWN")));
        m_bookStatus->setToolTip(info.error);
        statusBar()->showMessage(tr("Cannot open the book of record: %1").arg(info.error));
        if (!m_quiet)
            onFailed(tr("Open the book of record"), info.error);
        return;
    }
    setWindowTitle(tr("FlashStock console — %1").arg(info.bookDisplay));
    m_bookStatus->setToolTip(info.bookDisplay);
    m_gateStatus->setToolTip(info.gateDisplay);
    if (!info.gateConfigured)
        m_gateStatus->setText(badge(kAmber, tr("Gate: %1").arg(info.gateDisplay)));
    m_session->sample();
    m_sampleTimer->start();
}

void MainWindow::onSampled(const LiveSnapshot &snap)
{
    const HealthSnapshot &h = snap.health;
    if (h.bookUp)
        m_bookStatus->setText(badge(kGreen, tr("Book: up, %1").arg(latency(h.bookRoundTripUs))));
    else
        m_bookStatus->setText(badge(kRed, tr("Book: DOWN — %1").arg(h.bookDetail.left(80))));
    if (h.gateConfigured) {
        if (!h.gateUp)
            m_gateStatus->setText(badge(kRed, tr("Gate: DOWN — reserves refused unless book-only")));
        else if (!h.gateScriptsLoaded)
            m_gateStatus->setText(badge(kAmber, tr("Gate: up, scripts not loaded, %1").arg(latency(h.gateRoundTripUs))));
        else
            m_gateStatus->setText(badge(kGreen, tr("Gate: up, %1").arg(latency(h.gateRoundTripUs))));
        m_gateStatus->setToolTip(h.gateDetail.isEmpty() ? m_session->connection().gateDisplay : h.gateDetail);
    }
    m_live->addSnapshot(snap);
    if (!m_liveSkuChosen && h.bookUp) {
        // Open on what staff watch: the SKU of the newest open sale.
        for (const Sale &sale : snap.sales) {
            if (sale.status == SaleStatus::Open) {
                m_live->setCurrentSku(sale.sku);
                break;
            }
        }
        m_liveSkuChosen = true;
    }
    m_sales->setSnapshot(snap, m_live->rates());
    if (!m_screenshotDir.isEmpty() && h.bookUp && ++m_samplesSeen == m_samplesBeforeShots)
        QTimer::singleShot(300, this, &MainWindow::shootNow);
}

void MainWindow::onFailed(const QString &what, const QString &message)
{
    statusBar()->showMessage(tr("%1 failed: %2").arg(what, message), 15000);
    if (m_quiet)
        return;
    auto *box = new QMessageBox(QMessageBox::Warning, what, tr("%1 failed.").arg(what), QMessageBox::Ok, this);
    box->setInformativeText(message);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::takeScreenshots(const QString &dir, int samples)
{
    m_screenshotDir = dir;
    m_samplesBeforeShots = qMax(1, samples);
    m_quiet = true;
    m_live->setWindowMinutes(1); // a few seconds of data would be a sliver of 15 minutes
}

void MainWindow::saveShot(QWidget *widget, const QString &name)
{
    QApplication::processEvents();
    const bool saved = widget->grab().save(QDir(m_screenshotDir).absoluteFilePath(name));
    if (!saved)
        qWarning("screenshot: cannot write %s", qPrintable(name));
    m_shotsOk = m_shotsOk && saved;
}

void MainWindow::shootNow()
{
    QDir().mkpath(m_screenshotDir);
    m_shotsOk = true;
    m_tabs->setCurrentWidget(m_live);
    saveShot(this, u"live.png"_s);
    m_tabs->setCurrentWidget(m_sales);
    saveShot(this, u"sales.png"_s);
    m_tabs->setCurrentWidget(m_reconciliation);
    m_reconciliation->setStatusFilter(QString()); // show the healed ones too
    m_reconciliation->selectFirstPending();
    // The selected discrepancy's trace and the ledger search come from the worker: give each a moment.
    QTimer::singleShot(800, this, [this] {
        saveShot(this, u"reconciliation.png"_s);
        m_tabs->setCurrentWidget(m_ledger);
        m_ledger->search(LedgerSearchMode::Order, u"o2"_s);
        QTimer::singleShot(800, this, [this] {
            saveShot(this, u"ledger.png"_s);
            LaunchWizard *wizard = m_sales->openWizard();
            if (!wizard)
                return emit screenshotsDone(false);
            wizard->skuField()->setCurrentText(u"FLASH-NEW"_s);
            wizard->unitsField()->setValue(500);
            connect(wizard, &LaunchWizard::preflightShown, this, [this, wizard] {
                QTimer::singleShot(200, this, [this, wizard] {
                    saveShot(wizard, u"launch-wizard.png"_s);
                    wizard->reject();
                    emit screenshotsDone(m_shotsOk);
                });
            });
            wizard->next();
        });
    });
}

} // namespace flashstock
