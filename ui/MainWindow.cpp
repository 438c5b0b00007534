#include "MainWindow.h"

#include "ConsoleSession.h"
#include "ConsoleText.h"
#include "GateNodesStatus.h"
#include "DrillView.h"
#include "EngineWorker.h"
#include "HelpDialogs.h"
#include "LaunchWizard.h"
#include "LedgerView.h"
#include "LiveView.h"
#include "ProfileDialog.h"
#include "ProfileSettings.h"
#include "ReconciliationView.h"
#include "SalesView.h"
#include "ServerMonitor.h"
#include "ServersView.h"
#include "SkuDialogs.h"
#include "SkuView.h"
#include "models/DiscrepancyModel.h"
#include "models/LedgerModel.h"
#include "models/WarningModel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QPushButton>
#include <QVBoxLayout>
#include <QSpinBox>
#include <QTableView>
#include <QDir>
#include <QFileInfo>
#include <QFrame>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr auto latency = &ConsoleText::roundTrip;
constexpr auto badge = &ConsoleText::badge;

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

const QString &kGreen = ConsoleText::kGreen;
const QString &kAmber = ConsoleText::kAmber;
const QString &kRed = ConsoleText::kRed;
const QString &kGrey = ConsoleText::kGrey;

/// The gate's badge for one health sample (a configured gate only).
QString gateBadge(const HealthSnapshot &h)
{
    if (!h.gateUp)
        return badge(kRed, QObject::tr("Gate: DOWN — reserves refused unless book-only"));
    if (!h.gateScriptsLoaded)
        return badge(kAmber, QObject::tr("Gate: up, scripts not loaded, %1").arg(latency(h.gateRoundTripUs)));
    return badge(kGreen, QObject::tr("Gate: up, %1").arg(latency(h.gateRoundTripUs)));
}

/// The book's badge for one health sample.
QString bookBadge(const HealthSnapshot &h)
{
    if (!h.bookUp)
        return badge(kRed, QObject::tr("Book: DOWN — %1").arg(h.bookDetail.left(80)));
    const QString rtt = latency(h.bookRoundTripUs);
    const std::optional<BookReplication> &rep = h.bookReplication;
    if (!rep || rep->state() == BookReplication::State::Single)
        return badge(kGreen, QObject::tr("Book: up, %1").arg(rtt));
    switch (rep->state()) {
    case BookReplication::State::WritingAlone:
        return badge(kAmber, QObject::tr("Book: up, primary %1 WRITING ALONE (no standby copy), %2").arg(rep->primary, rtt));
    case BookReplication::State::CommitsWaiting:
        return badge(kAmber, QObject::tr("Book: up, primary %1, commits WAITING for a standby, %2").arg(rep->primary, rtt));
    case BookReplication::State::Unknown:
        return badge(kAmber, QObject::tr("Book: up, primary %1, standbys unreadable, %2").arg(rep->primary, rtt));
    default:
        return badge(kGreen, QObject::tr("Book: up, primary %1, synchronous, %2").arg(rep->primary, rtt));
    }
}

/// The README's sections Help offers, in the order of the README.
const char *const kReadmeSections[] = {
    QT_TRANSLATE_NOOP("MainWindow", "The console"),
    QT_TRANSLATE_NOOP("MainWindow", "A flash sale"),
    QT_TRANSLATE_NOOP("MainWindow", "Reconciliation and approval"),
    QT_TRANSLATE_NOOP("MainWindow", "Hot SKUs"),
    QT_TRANSLATE_NOOP("MainWindow", "Using the CLI"),
    QT_TRANSLATE_NOOP("MainWindow", "Using PostgreSQL"),
};

} // namespace

MainWindow::MainWindow(const EngineProfile &profile, QWidget *parent)
    : QMainWindow(parent)
    , m_session(new ConsoleSession(this))
{
    setWindowTitle(tr("FlashStock console"));
    m_tabs = new QTabWidget(this);
    m_live = new LiveView(this);
    m_sales = new SalesView(m_session, this);
    m_skus = new SkuView(m_session, this);
    m_reconciliation = new ReconciliationView(m_session, this);
    m_ledger = new LedgerView(m_session, this);
    m_drill = new DrillView(m_session, this);
    m_serverMonitor = new ServerMonitor(this);
    m_serversView = new ServersView(m_serverMonitor, this);
    m_tabs->addTab(m_live, tr("&Live"));
    m_tabs->addTab(m_sales, tr("Sa&les"));
    m_tabs->addTab(m_skus, tr("S&KUs"));
    m_tabs->addTab(m_reconciliation, tr("&Reconciliation"));
    m_tabs->addTab(m_ledger, tr("Le&dger"));
    m_tabs->addTab(m_drill, tr("Dr&ill"));
    m_tabs->addTab(m_serversView, tr("Ser&vers"));
    m_tabs->setDocumentMode(true);
    // Above every tab: a new discrepancy that pauses a SKU is announced where the operator looks.
    auto *banner = new QFrame(this);
    banner->setObjectName(u"pauseBanner"_s);
    banner->setStyleSheet(u"#pauseBanner { background: #fdecea; border: 2px solid %1; border-radius: 3px; }"
                          u" #pauseBanner QLabel { color: #5f1a17; }"_s.arg(kRed));
    auto *bannerRow = new QHBoxLayout(banner);
    bannerRow->setContentsMargins(8, 4, 8, 4);
    m_pauseText = new QLabel(banner);
    m_pauseText->setTextFormat(Qt::RichText);
    m_pauseText->setWordWrap(true);
    bannerRow->addWidget(m_pauseText, 1);
    auto *openPaused = new QPushButton(tr("Open in Reconciliation"), banner);
    auto *dismiss = new QPushButton(tr("Dismiss"), banner);
    bannerRow->addWidget(openPaused);
    bannerRow->addWidget(dismiss);
    banner->hide();
    m_pauseBanner = banner;
    connect(openPaused, &QPushButton::clicked, this, [this] {
        if (m_announced.isEmpty())
            return;
        const qint64 id = m_announced.lastKey(); // the newest
        m_tabs->setCurrentWidget(m_reconciliation);
        m_selectWhenListed = m_reconciliation->select(id) ? -1 : id;
        m_reconciliation->refresh();
    });
    connect(dismiss, &QPushButton::clicked, this, [this] {
        m_announced.clear();
        showPauseBanner();
    });
    auto *central = new QWidget(this);
    auto *centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(2);
    centralLayout->addWidget(banner);
    centralLayout->addWidget(m_tabs, 1);
    setCentralWidget(central);
    buildMenus();

    m_gateStatus = new QLabel(this);
    m_gateNodes = new GateNodesStatus(this);
    m_bookStatus = new QLabel(this);
    m_where = new QLabel(this);
    m_warningModel = new WarningModel(WarningModel::kDefaultCapacity, this);
    m_serverStatus = new QToolButton(this);
    m_serverStatus->setAutoRaise(true);
    m_serverStatus->setToolTip(tr("The flashstock-servers working on this book (click for the list)"));
    connect(m_serverStatus, &QToolButton::clicked, this, [this] { m_tabs->setCurrentWidget(m_serversView); });
    connect(m_serverMonitor, &ServerMonitor::changed, this, &MainWindow::updateServerStatus);
    updateServerStatus();
    m_warningStatus = new QToolButton(this);
    m_warningStatus->setAutoRaise(true);
    m_warningStatus->setToolTip(tr("Engine warnings: gate trouble left for the reconciler (click for the list)"));
    connect(m_warningStatus, &QToolButton::clicked, this, &MainWindow::showWarnings);
    connect(m_warningModel, &WarningModel::countChanged, this, &MainWindow::updateWarningStatus);
    updateWarningStatus();
    statusBar()->addPermanentWidget(m_serverStatus);
    statusBar()->addPermanentWidget(m_warningStatus);
    statusBar()->addPermanentWidget(m_where);
    statusBar()->addPermanentWidget(m_gateStatus);
    statusBar()->addPermanentWidget(m_gateNodes);
    statusBar()->addPermanentWidget(m_bookStatus);

    connect(m_sales, &SalesView::message, this, &MainWindow::showStatusMessage);
    connect(m_skus, &SkuView::message, this, &MainWindow::showStatusMessage);
    connect(m_reconciliation, &ReconciliationView::message, this, &MainWindow::showStatusMessage);
    connect(m_drill, &DrillView::message, this, &MainWindow::showStatusMessage);
    connect(m_live, &LiveView::addSkuRequested, this, [this] {
        m_tabs->setCurrentWidget(m_skus);
        m_skus->openDialog(m_skus->addSkuAction());
    });
    connect(m_live, &LiveView::launchSaleRequested, this, [this] {
        m_tabs->setCurrentWidget(m_sales);
        m_sales->openWizard();
    });
    connect(m_live, &LiveView::releaseNowRequested, this, [this] { m_session->releaseExpired(true); });

    EngineWorker *w = m_session->worker();
    connect(w, &EngineWorker::opened, this, &MainWindow::onOpened);
    connect(w, &EngineWorker::sampled, this, &MainWindow::onSampled);
    connect(w, &EngineWorker::failed, this, &MainWindow::onFailed);
    connect(w, &EngineWorker::warned, m_warningModel, &WarningModel::add);
    // After the view's own handler (connected first): the banner's discrepancy, once listed.
    connect(w, &EngineWorker::discrepanciesListed, this, [this] {
        if (m_selectWhenListed >= 0 && m_reconciliation->select(m_selectWhenListed))
            m_selectWhenListed = -1;
    });
    connect(w, &EngineWorker::expired, this, [this](const ExpiryRun &run) {
        m_live->showExpiryRun(run);
        if (run.manual && run.problem.isEmpty())
            showStatusMessage(tr("Released %n expired hold(s), %L1 units back to available", nullptr, int(run.orders))
                                  .arg(run.units));
        if (run.orders > 0 || run.manual)
            m_session->sample();
    });

    m_sampleTimer = new QTimer(this);
    m_sampleTimer->setInterval(1000);
    connect(m_sampleTimer, &QTimer::timeout, m_session, &ConsoleSession::sample);
    // The console is an expirer of its own while the Live view's switch is on.
    m_expiryTimer = new QTimer(this);
    m_expiryTimer->setInterval(int(EngineWorker::kExpirerEveryMs));
    connect(m_expiryTimer, &QTimer::timeout, this, [this] {
        if (m_connected && m_live->releasesExpiredHolds())
            m_session->releaseExpired(false);
    });

    resize(1280, 800);
    // The operator's split of the Live view, from the last run.
    m_layoutDir = EngineProfile::dataDirFor(profile.dataDir);
    if (const QByteArray split = ProfileSettings::layout(m_layoutDir, u"liveSplit"_s); !split.isEmpty())
        m_live->splitter()->restoreState(split);
    auto *saveSoon = new QTimer(this);
    saveSoon->setSingleShot(true);
    saveSoon->setInterval(500);
    connect(saveSoon, &QTimer::timeout, this, &MainWindow::saveLayout);
    connect(m_live->splitter(), &QSplitter::splitterMoved, saveSoon, qOverload<>(&QTimer::start));
    reopen(profile, false);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus()
{
    auto *file = menuBar()->addMenu(tr("&File"));
    QAction *connection = file->addAction(tr("&Connection…"), this, &MainWindow::editConnection);
    connection->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_P);
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    auto *view = menuBar()->addMenu(tr("&View"));
    const QString names[] = {tr("Live"),   tr("Sales"), tr("SKUs"),   tr("Reconciliation"),
                             tr("Ledger"), tr("Drill"), tr("Servers")};
    for (int i = 0; i < int(std::size(names)); ++i) {
        QAction *a = view->addAction(names[i], this, [this, i] { m_tabs->setCurrentIndex(i); });
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
    }
    auto *actions = menuBar()->addMenu(tr("&Actions"));
    actions->addAction(m_sales->newSaleAction());
    actions->addAction(tr("Add a SKU…"), this, [this] {
        m_tabs->setCurrentWidget(m_skus);
        m_skus->openDialog(m_skus->addSkuAction());
    });
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
    actions->addAction(tr("Release expired holds now"), this, [this] { m_session->releaseExpired(true); });
    // The view's own F5 only fires while it has focus; the menu's covers the other tabs.
    m_reconciliation->reconcileAction()->setShortcut({});

    m_help = menuBar()->addMenu(tr("&Help"));
    for (const char *section : kReadmeSections) {
        const QString heading = tr(section);
        m_help->addAction(tr("README: %1").arg(heading), this, [this, heading] { showReadme(heading); });
    }
    m_help->addSeparator();
    m_help->addAction(tr("&About FlashStock"), this, &MainWindow::showAbout);
    m_help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::editConnection()
{
    auto *dialog = new ProfileDialog(m_session->profile(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { reopen(dialog->profile(), true); });
    dialog->open();
}

void MainWindow::clearViews(const QString &why)
{
    m_live->clear(why);
    m_sales->clear();
    m_skus->clear();
    m_reconciliation->clear();
    m_ledger->clear();
    m_serverMonitor->clear();
    m_pausing.clear();
    m_pausingKnown = false;
    m_announced.clear();
    m_selectWhenListed = -1;
    showPauseBanner();
}

void MainWindow::reopen(const EngineProfile &profile, bool saveOnSuccess)
{
    m_sampleTimer->stop();
    m_expiryTimer->stop();
    m_connected = false; // a sample of the engine before is no longer news
    m_liveSkuChosen = false;
    m_saveOnOpen = saveOnSuccess ? std::optional<EngineProfile>(profile) : std::nullopt;
    setWindowTitle(tr("FlashStock console — connecting…"));
    m_gateStatus->setText(badge(kAmber, tr("Gate: connecting…")));
    m_gateNodes->setNodes({});
    m_gateStatus->setToolTip({});
    m_bookStatus->setText(badge(kAmber, tr("Book: opening…")));
    m_bookStatus->setToolTip({});
    m_where->setText(tr("Operator %1").arg(profile.operatorName));
    clearViews(tr("Connecting…"));
    if (saveOnSuccess)
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

QString MainWindow::serverStatusText() const
{
    return m_serverStatus->text();
}

QString MainWindow::pauseBannerText() const
{
    return m_pauseBanner->isHidden() ? QString() : m_pauseText->text();
}

void MainWindow::updateServerStatus()
{
    bool alarm = false, warn = false;
    const QString line = ServersView::statusLine(*m_serverMonitor, &alarm, &warn);
    m_serverStatus->setText(line.isEmpty() ? QString() : (alarm ? u"● "_s : QString()) + line);
    m_serverStatus->setVisible(!line.isEmpty());
    m_serverStatus->setStyleSheet(alarm  ? u"QToolButton { color: %1; font-weight: bold; }"_s.arg(kRed)
                                  : warn ? u"QToolButton { color: %1; }"_s.arg(kAmber)
                                         : QString());
}

void MainWindow::announcePauses(const LiveSnapshot &snap)
{
    QMap<qint64, QString> pausing; // id -> its SKU
    for (const SkuSample &s : snap.skus)
        for (qint64 id : s.pausedBy)
            pausing.insert(id, s.sku);
    QList<qint64> fresh;
    for (auto it = pausing.cbegin(); it != pausing.cend(); ++it)
        if (m_pausingKnown && !m_pausing.contains(it.key()))
            fresh << it.key();
    m_pausing = QSet<qint64>(pausing.keyBegin(), pausing.keyEnd());
    m_pausingKnown = true;
    for (auto it = m_announced.begin(); it != m_announced.end();)
        it = pausing.contains(it.key()) ? std::next(it) : m_announced.erase(it);
    for (qint64 id : std::as_const(fresh))
        m_announced.insert(id, tr("New discrepancy <b>#%1</b> pauses <b>%2</b> (seen %3): its reserves answer "
                                  "<i>paused</i> until an approver approves or rejects it.")
                                   .arg(id)
                                   .arg(pausing.value(id).toHtmlEscaped(), ConsoleText::utcTime(snap.atMs)));
    showPauseBanner();
    if (fresh.isEmpty())
        return;
    m_reconciliation->refresh();
    showStatusMessage(tr("New discrepancy #%1 pauses %2").arg(fresh.last()).arg(pausing.value(fresh.last())));
    QApplication::alert(this);
}

void MainWindow::showPauseBanner()
{
    QStringList lines;
    for (const QString &line : std::as_const(m_announced))
        lines.prepend(u"⚠ "_s + line); // newest first
    m_pauseText->setText(lines.join(u"<br>"_s));
    m_pauseBanner->setVisible(!lines.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    saveLayout();
    QMainWindow::closeEvent(event);
}

void MainWindow::saveLayout()
{
    if (!QFileInfo(m_layoutDir).isDir())
        return; // never opened: nothing made the data dir, and the layout is the default
    if (!ProfileSettings::saveLayout(m_layoutDir, u"liveSplit"_s, m_live->splitter()->saveState()))
        qWarning("console: cannot keep the layout in %s", qPrintable(ProfileSettings::filePath(m_layoutDir)));
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

ReadmeDialog *MainWindow::showReadme(const QString &heading)
{
    if (!m_readme)
        m_readme = new ReadmeDialog(this);
    m_readme->show();
    m_readme->raise();
    QApplication::processEvents(); // laid out, so the section can be scrolled to
    m_readme->showSection(heading);
    return m_readme;
}

QMessageBox *MainWindow::showAbout()
{
    auto *box = new QMessageBox(QMessageBox::Information, tr("About FlashStock"), AboutText::html(), QMessageBox::Ok,
                                this);
    box->setTextFormat(Qt::RichText);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    return box;
}

void MainWindow::onOpened(const ConnectionInfo &info)
{
    if (!info.bookOpen) {
        // Nothing of the connection before stays on screen as if live, and nothing is saved.
        m_saveOnOpen.reset();
        setWindowTitle(tr("FlashStock console — not connected"));
        m_bookStatus->setText(badge(kRed, tr("Book: not open")));
        m_bookStatus->setToolTip(info.error);
        m_gateStatus->setText(badge(kGrey, tr("Gate: not connected")));
        m_gateStatus->setToolTip(info.error);
        clearViews(tr("Not connected: %1\n\nFile > Connection… (Ctrl+Shift+P) to try again.").arg(info.error));
        statusBar()->showMessage(tr("Cannot open the book of record: %1").arg(info.error));
        if (!m_quiet)
            onFailed(tr("Open the book of record"), info.error);
        return;
    }
    if (m_saveOnOpen) {
        if (!ProfileSettings::save(*m_saveOnOpen))
            showStatusMessage(tr("Cannot save the profile to %1").arg(ProfileSettings::filePath(m_saveOnOpen->dataDir)));
        m_saveOnOpen.reset();
    }
    m_connected = true;
    if (!info.previousGate.isEmpty())
        showStatusMessage(info.previousGate);
    setWindowTitle(tr("FlashStock console — %1").arg(info.bookDisplay));
    m_bookStatus->setToolTip(info.bookDisplay);
    m_gateStatus->setToolTip(info.gateDisplay);
    if (!info.gateConfigured)
        m_gateStatus->setText(badge(kAmber, tr("Gate: %1").arg(info.gateDisplay)));
    m_live->clear(tr("Reading the book…"));
    m_session->sample();
    m_sampleTimer->start();
    m_expiryTimer->start();
}

void MainWindow::onSampled(const LiveSnapshot &snap)
{
    if (!m_connected)
        return; // from the engine of the connection before
    const HealthSnapshot &h = snap.health;
    m_bookStatus->setText(bookBadge(h));
    m_bookStatus->setToolTip(h.bookReplication ? m_session->connection().bookDisplay + u'\n' + h.bookReplication->describe()
                                               : m_session->connection().bookDisplay);
    if (h.gateConfigured) {
        m_gateStatus->setText(gateBadge(h));
        m_gateNodes->setNodes(h.gateNodes);
        m_gateStatus->setToolTip(h.gateDetail.isEmpty() ? m_session->connection().gateDisplay : h.gateDetail);
    }
    m_live->addSnapshot(snap);
    if (h.bookUp) {
        if (snap.expiry)
            m_serverMonitor->update(*snap.expiry);
        announcePauses(snap);
    }
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
    m_skus->setSnapshot(snap);
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
    m_live->setCurrentSku(u"PHONE-X"_s); // the crowd's
    saveShot(this, u"live.png"_s);
    m_tabs->setCurrentWidget(m_sales);
    m_sales->table()->selectRow(0);
    saveShot(this, u"sales.png"_s);
    m_tabs->setCurrentWidget(m_skus);
    m_skus->select(u"PHONE-X"_s);
    saveShot(this, u"skus.png"_s);
    if (SkuChangeDialog *restock = m_skus->openDialog(m_skus->restockAction())) {
        auto *d = static_cast<RestockDialog *>(restock);
        d->qtyField()->setValue(200);
        d->reasonField()->setText(u"delivery 4711 from the warehouse"_s);
        saveShot(d, u"sku-restock.png"_s);
        d->reject();
    }
    // A small rehearsal on its scratch book and gate (the default), then its report.
    m_tabs->setCurrentWidget(m_drill);
    m_drill->stockField()->setValue(50);
    m_drill->buyersField()->setValue(300);
    m_drill->concurrencyField()->setValue(4);
    m_drill->holdField()->setValue(1);
    auto *drilled = new QMetaObject::Connection;
    *drilled = connect(m_drill, &DrillView::drillFinished, this, [this, drilled] {
        disconnect(*drilled);
        delete drilled;
        shootRest();
    });
    m_drill->run();
}

void MainWindow::shootRest()
{
    saveShot(this, u"drill.png"_s);
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
            m_tabs->setCurrentWidget(m_serversView);
            saveShot(this, u"servers.png"_s);
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
