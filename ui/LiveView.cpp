#include "LiveView.h"

#include "ConsoleText.h"
#include "EngineWorker.h"
#include "TableExport.h"
#include "models/ModelRoles.h"
#include "models/SkuLevelsModel.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QValueAxis>
#include <QVBoxLayout>

#include <cmath>
#include <tuple>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr qint64 kDayMs = 86400000;

const QString kRed = u"#c62828"_s;
const QString kAmber = u"#b26a00"_s;

/// Change per second of the points' y from the newest point at least LiveView::kRateSpanMs
/// older than the last (or the oldest) to the last; 0 with fewer than two points.
double changePerSecond(const QList<QPointF> &points)
{
    if (points.size() < 2)
        return 0;
    const double x = points.last().x();
    qsizetype from = points.size() - 1;
    while (from > 0 && points[from].x() > x - LiveView::kRateSpanMs)
        --from;
    const double dt = (x - points[from].x()) / 1000.0;
    return dt > 0 ? (points.last().y() - points[from].y()) / dt : 0.0;
}

/// The highest y of `points` at or after `fromX`, and its x; {0, 0} if none is above 0.
std::pair<double, qint64> peakSince(const QList<QPointF> &points, double fromX)
{
    std::pair<double, qint64> peak{0.0, 0};
    for (const QPointF &p : points)
        if (p.x() >= fromX && p.y() > peak.first)
            peak = {p.y(), qint64(p.x())};
    return peak;
}

/// Drops points older than `keepFromMs`, and the oldest beyond `cap`.
void trim(QList<QPointF> &points, qsizetype cap, qint64 keepFromMs)
{
    qsizetype drop = qMax<qsizetype>(0, points.size() - cap);
    while (drop < points.size() && points[drop].x() < double(keepFromMs))
        ++drop;
    if (drop)
        points.remove(0, drop);
}

/// `14:46:23 UTC`: a time of today's sale, short enough to sit under a figure.
QString shortUtc(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(u"HH:mm:ss"_s) + u" UTC"_s;
}

QString colored(const QString &color, const QString &html, bool bold = false)
{
    return u"<span style=\"color:%1;%2\">%3</span>"_s.arg(color, bold ? u"font-weight:bold"_s : QString(), html);
}

} // namespace

LiveView::LiveView(QWidget *parent)
    : QWidget(parent)
    , m_levels(new SkuLevelsModel(this))
{
    auto *layout = new QVBoxLayout(this);

    auto *top = new QHBoxLayout;
    auto *skuLabel = new QLabel(tr("&SKU:"), this);
    top->addWidget(skuLabel);
    m_sku = new QComboBox(this);
    m_sku->setMinimumContentsLength(16);
    m_sku->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    skuLabel->setBuddy(m_sku);
    top->addWidget(m_sku);
    top->addSpacing(16);
    auto *windowLabel = new QLabel(tr("&Window:"), this);
    top->addWidget(windowLabel);
    m_window = new QSpinBox(this);
    m_window->setRange(1, 120);
    m_window->setValue(15);
    m_window->setSuffix(tr(" min"));
    windowLabel->setBuddy(m_window);
    top->addWidget(m_window);
    m_follow = new QCheckBox(tr("&Follow the sale"), this);
    m_follow->setChecked(true);
    m_follow->setToolTip(tr("The time axis begins a little before the stock first moved in the window, so a short "
                            "sale fills the chart; off: the whole window"));
    top->addWidget(m_follow);
    top->addSpacing(16);
    m_state = new QLabel(this);
    m_state->setTextFormat(Qt::RichText);
    m_state->setWordWrap(true);
    top->addWidget(m_state, 1);
    layout->addLayout(top);

    // Large figures, readable across a room.
    auto *figures = new QFrame(this);
    figures->setFrameShape(QFrame::StyledPanel);
    auto *grid = new QGridLayout(figures);
    m_figures[BookAvailable] = addFigure(grid, 0, tr("Available (book)"));
    m_figures[GateAvailable] = addFigure(grid, 1, tr("Available (gate)"));
    m_figures[Locked] = addFigure(grid, 2, tr("Locked"));
    m_figures[Sold] = addFigure(grid, 3, tr("Sold"));
    m_rateFigure = addFigure(grid, 4, tr("Taken per second"));
    m_rateFigure->setToolTip(tr("Units that left book available in the last second (net of releases)"));
    m_rateNote = addFigureNote(grid, 4);
    m_refusedFigure = addFigure(grid, 5, tr("Refused per second"));
    m_refusedFigure->setToolTip(tr("Reserves refused in the last second (out of stock, over the per-user limit, sale "
                                   "closed, paused) as the gate counts them; n/a when book-only"));
    m_refusedNote = addFigureNote(grid, 5);
    layout->addWidget(figures);

    // Holds past expiry, and whether anything releases them.
    auto *expiry = new QFrame(this);
    expiry->setFrameShape(QFrame::StyledPanel);
    auto *expiryRow = new QHBoxLayout(expiry);
    expiryRow->setContentsMargins(8, 4, 8, 4);
    m_expiry = new QLabel(expiry);
    m_expiry->setTextFormat(Qt::RichText);
    m_expiry->setWordWrap(true);
    expiryRow->addWidget(m_expiry, 1);
    m_expiryRun = new QLabel(expiry);
    m_expiryRun->setWordWrap(true); // a failure's message is long: it must not widen the window
    expiryRow->addWidget(m_expiryRun);
    m_autoRelease = new QCheckBox(tr("This console &releases expired holds (every %1 s)")
                                      .arg(EngineWorker::kExpirerEveryMs / 1000),
                                  expiry);
    m_autoRelease->setChecked(true);
    m_autoRelease->setToolTip(tr("While on, this console is an expirer: it releases holds past their expiry and "
                                 "records its heartbeat in the book, so every console sees that holds are released"));
    expiryRow->addWidget(m_autoRelease);
    m_releaseNow = new QPushButton(tr("Release e&xpired holds now"), expiry);
    m_releaseNow->setToolTip(tr("Release every hold past its expiry now (database clock): its units go back to "
                                "available"));
    expiryRow->addWidget(m_releaseNow);
    layout->addWidget(expiry);

    m_chart = new QChart;
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    const QString names[SeriesCount] = {tr("Available (book)"), tr("Available (gate)"), tr("Locked"), tr("Sold")};
    const QColor colors[SeriesCount] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x9c, 0x27, 0xb0),
                                        QColor(0x2c, 0xa0, 0x2c)};
    // Labels are made by updateTimeAxis(), in UTC like every time the console shows.
    m_axisX = new QCategoryAxis;
    m_axisX->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    m_axisX->setTitleText(tr("UTC"));
    m_axisY = new QValueAxis;
    m_axisY->setLabelFormat(u"%d"_s);
    m_chart->addAxis(m_axisX, Qt::AlignBottom);
    m_chart->addAxis(m_axisY, Qt::AlignLeft);
    for (int i = 0; i < SeriesCount; ++i) {
        m_series[i] = new QLineSeries;
        m_series[i]->setName(names[i]);
        QPen pen(colors[i]);
        pen.setWidth(i == GateAvailable ? 2 : 3);
        if (i == GateAvailable)
            pen.setStyle(Qt::DashLine); // drawn over book available: a gap between them is drift
        m_series[i]->setPen(pen);
        m_chart->addSeries(m_series[i]);
        m_series[i]->attachAxis(m_axisX);
        m_series[i]->attachAxis(m_axisY);
    }
    m_chartView = new QChartView(m_chart, this);
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumHeight(140);

    // What to do when there is nothing to draw (first start, book down).
    auto *emptyPage = new QWidget(this);
    auto *emptyLayout = new QVBoxLayout(emptyPage);
    emptyLayout->addStretch(1);
    m_empty = new QLabel(emptyPage);
    m_empty->setTextFormat(Qt::RichText);
    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignCenter);
    emptyLayout->addWidget(m_empty);
    auto *emptyButtons = new QHBoxLayout;
    emptyButtons->addStretch(1);
    m_addSku = new QPushButton(tr("&Add a SKU…"), emptyPage);
    m_launch = new QPushButton(tr("&Launch a sale…"), emptyPage);
    emptyButtons->addWidget(m_addSku);
    emptyButtons->addWidget(m_launch);
    emptyButtons->addStretch(1);
    emptyLayout->addLayout(emptyButtons);
    emptyLayout->addStretch(2);
    m_chartStack = new QStackedWidget(this);
    m_chartStack->addWidget(emptyPage);
    m_chartStack->addWidget(m_chartView);

    m_table = new QTableView(this);
    m_table->setModel(m_levels);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    TableExport::install(m_table, u"flashstock-live"_s);

    // The operator moves the split (MainWindow keeps where); neither side collapses away.
    m_split = new QSplitter(Qt::Vertical, this);
    m_split->setObjectName(u"liveSplit"_s);
    m_split->addWidget(m_chartStack);
    m_split->addWidget(m_table);
    m_split->setChildrenCollapsible(false);
    m_split->setStretchFactor(0, 3);
    m_split->setStretchFactor(1, 2);
    m_split->setSizes({400, 260});
    layout->addWidget(m_split, 1);

    connect(m_sku, &QComboBox::currentTextChanged, this, [this](const QString &sku) {
        // The table follows the chart's SKU, and the other way round (below).
        const int row = m_levels->rowOf(sku);
        if (row >= 0 && m_table->selectionModel()->selectedRows().value(0).row() != row)
            m_table->selectRow(row);
        updateFigures();
        updateState();
        redraw();
    });
    connect(m_window, &QSpinBox::valueChanged, this, [this] {
        redraw();
        updateFigures(); // the peaks are the window's
    });
    connect(m_follow, &QCheckBox::toggled, this, [this] { redraw(); });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const QModelIndexList rows = m_table->selectionModel()->selectedRows(SkuLevelsModel::Sku);
        if (!rows.isEmpty())
            setCurrentSku(rows.first().data(RawRole).toString());
    });
    connect(m_addSku, &QPushButton::clicked, this, &LiveView::addSkuRequested);
    connect(m_launch, &QPushButton::clicked, this, &LiveView::launchSaleRequested);
    connect(m_releaseNow, &QPushButton::clicked, this, [this] {
        m_expiryRun->setText(tr("Releasing…"));
        emit releaseNowRequested();
    });
    connect(m_autoRelease, &QCheckBox::toggled, this, [this](bool on) {
        updateExpiry();
        emit releasesExpiredHoldsChanged(on);
    });
    applyPalette();
    clear(tr("Opening the book of record…"));
}

QLabel *LiveView::addFigure(QGridLayout *grid, int column, const QString &caption)
{
    auto *captionLabel = new QLabel(caption, this);
    captionLabel->setAlignment(Qt::AlignCenter);
    auto *value = new QLabel(u"–"_s, this);
    value->setAlignment(Qt::AlignCenter);
    QFont big = value->font();
    big.setPointSizeF(big.pointSizeF() * 2.8);
    big.setBold(true);
    value->setFont(big);
    value->setMinimumWidth(value->fontMetrics().horizontalAdvance(u"0 000 000"_s));
    grid->addWidget(captionLabel, 0, column);
    grid->addWidget(value, 1, column);
    return value;
}

QLabel *LiveView::addFigureNote(QGridLayout *grid, int column)
{
    auto *note = new QLabel(this);
    note->setAlignment(Qt::AlignCenter);
    grid->addWidget(note, 2, column);
    return note;
}

void LiveView::setPointCap(int cap)
{
    m_pointCap = qMax(2, cap);
    for (History &h : m_history) {
        for (auto &points : h.points)
            if (points.size() > m_pointCap)
                points.remove(0, points.size() - m_pointCap);
        for (auto *rates : {&h.takenRate, &h.refusedRate})
            if (rates->size() > m_pointCap)
                rates->remove(0, rates->size() - m_pointCap);
    }
    redraw();
}

int LiveView::windowMinutes() const
{
    return m_window->value();
}

void LiveView::setWindowMinutes(int minutes)
{
    m_window->setValue(minutes);
}

bool LiveView::followsSale() const
{
    return m_follow->isChecked();
}

void LiveView::setFollowsSale(bool on)
{
    m_follow->setChecked(on);
}

std::pair<double, double> LiveView::timeAxisRange() const
{
    return {m_axisX->min(), m_axisX->max()};
}

QString LiveView::takenText() const
{
    return m_rateFigure->text() + u' ' + m_rateNote->text();
}

QString LiveView::currentSku() const
{
    return m_sku->currentText();
}

void LiveView::setCurrentSku(const QString &sku)
{
    const int i = m_sku->findText(sku);
    if (i >= 0)
        m_sku->setCurrentIndex(i);
}

int LiveView::seriesPointCount(Series which) const
{
    return m_series[which]->count();
}

QStringList LiveView::timeAxisLabels() const
{
    return m_axisX->categoriesLabels();
}

bool LiveView::releasesExpiredHolds() const
{
    return m_autoRelease->isChecked();
}

void LiveView::setReleasesExpiredHolds(bool on)
{
    m_autoRelease->setChecked(on);
}

QString LiveView::emptyStateText() const
{
    return m_chartStack->currentWidget() == m_chartView ? QString() : m_empty->text();
}

QString LiveView::stateText() const
{
    return m_state->text();
}

QString LiveView::expiryText() const
{
    return m_expiry->text();
}

void LiveView::clear(const QString &why)
{
    m_history.clear();
    m_rates.clear();
    m_last.clear();
    m_expiryStatus.reset();
    m_bookUp = false;
    m_sampled = false;
    m_lastAtMs = 0;
    {
        QSignalBlocker block(m_sku);
        m_sku->clear();
    }
    m_levels->setSamples({});
    m_expiryRun->clear();
    showEmptyState(u"<p style=\"font-size:large\">%1</p>"_s.arg(why.toHtmlEscaped().replace(u'\n', u"<br>"_s)), false);
    updateFigures();
    updateState();
    updateExpiry();
    redraw();
}

void LiveView::showEmptyState(const QString &html, bool offerActions)
{
    m_empty->setText(html);
    m_addSku->setVisible(offerActions);
    m_launch->setVisible(offerActions);
    m_chartStack->setCurrentIndex(0);
}

void LiveView::addSnapshot(const LiveSnapshot &snap)
{
    m_sampled = true;
    m_bookUp = snap.health.bookUp;
    if (!snap.health.bookUp) {
        // Nothing new to draw, and no stale figure left looking live: the status bar says why.
        m_last.clear();
        m_levels->setSamples({});
        showEmptyState(tr("<p style=\"font-size:large\">The book of record does not answer: no figures.</p>"
                          "<p>%1</p><p>The status bar shows when it is back.</p>")
                           .arg(snap.health.bookDetail.toHtmlEscaped()),
                       false);
        updateFigures();
        updateState();
        updateExpiry();
        return;
    }
    const qint64 keepFromMs = snap.atMs - qint64(m_window->maximum()) * 60000;
    for (const SkuSample &s : snap.skus) {
        History &h = m_history[s.sku];
        const double x = double(snap.atMs);
        h.points[BookAvailable].append(QPointF(x, double(s.available)));
        if (s.gateAvailable >= 0)
            h.points[GateAvailable].append(QPointF(x, double(s.gateAvailable)));
        h.points[Locked].append(QPointF(x, double(s.locked)));
        h.points[Sold].append(QPointF(x, double(s.sold)));
        for (auto &points : h.points)
            trim(points, m_pointCap, keepFromMs);
        SkuRates &rates = m_rates[s.sku];
        // Units taken per second: available going down over the last second.
        rates.taken = qMax(0.0, -changePerSecond(h.points[BookAvailable]));
        h.takenRate.append(QPointF(x, rates.taken));
        trim(h.takenRate, m_pointCap, keepFromMs);
        // Refusals per second from the gate's counter; a counter that went down was started
        // again (a Redis restart without persistence): its history no longer applies.
        if (s.gateRefused < 0 || (!h.refused.isEmpty() && h.refused.last().y() > double(s.gateRefused)))
            h.refused.clear();
        if (s.gateRefused >= 0) {
            h.refused.append(QPointF(x, double(s.gateRefused)));
            while (h.refused.size() > 2 && h.refused[1].x() <= x - kRateSpanMs)
                h.refused.removeFirst();
        }
        rates.refused = s.gateRefused < 0 ? -1.0 : changePerSecond(h.refused);
        if (rates.refused >= 0)
            h.refusedRate.append(QPointF(x, rates.refused));
        trim(h.refusedRate, m_pointCap, keepFromMs);
        updatePeaks(h, rates);
    }
    m_last = snap.skus;
    m_lastAtMs = snap.atMs;
    m_expiryStatus = snap.expiry;

    QStringList skus;
    for (const SkuSample &s : snap.skus)
        skus << s.sku;
    QStringList shown;
    for (int i = 0; i < m_sku->count(); ++i)
        shown << m_sku->itemText(i);
    m_levels->setSamples(snap.skus, m_rates, snap.expiry ? snap.expiry->nowMs : snap.atMs);
    if (skus != shown) {
        const QString keep = m_sku->currentText();
        {
            QSignalBlocker block(m_sku);
            m_sku->clear();
            m_sku->addItems(skus);
            m_sku->setCurrentIndex(-1);
        }
        const int i = m_sku->findText(keep);
        m_sku->setCurrentIndex(i >= 0 ? i : (skus.isEmpty() ? -1 : 0)); // selects the table row too
    }
    if (skus.isEmpty())
        showEmptyState(tr("<p style=\"font-size:large\"><b>No SKUs yet.</b></p>"
                          "<p>Start with a SKU and its stock (SKUs view, <b>Add SKU…</b>), or launch a flash sale, "
                          "which creates its SKU (Sales view, <b>New sale…</b>, Ctrl+N).</p>"
                          "<p>Then this view draws book and gate stock, holds and sales as they happen.</p>"),
                       true);
    else
        m_chartStack->setCurrentWidget(m_chartView);
    updateFigures();
    updateState();
    updateExpiry();
    redraw();
}

void LiveView::updatePeaks(const History &h, SkuRates &rates) const
{
    if (h.points[BookAvailable].isEmpty())
        return;
    const double from = h.points[BookAvailable].last().x() - double(m_window->value()) * 60000;
    std::tie(rates.takenPeak, rates.takenPeakAtMs) = peakSince(h.takenRate, from);
    std::tie(rates.refusedPeak, rates.refusedPeakAtMs) = peakSince(h.refusedRate, from);
}

void LiveView::updateFigures()
{
    const QString sku = m_sku->currentText();
    for (const SkuSample &s : std::as_const(m_last)) {
        if (s.sku != sku)
            continue;
        const QLocale loc;
        m_figures[BookAvailable]->setText(loc.toString(s.available));
        m_figures[GateAvailable]->setText(s.gateAvailable >= 0 ? loc.toString(s.gateAvailable) : tr("n/a"));
        m_figures[Locked]->setText(loc.toString(s.locked));
        m_figures[Sold]->setText(loc.toString(s.sold));
        SkuRates rates = m_rates.value(sku);
        updatePeaks(m_history.value(sku), rates);
        m_rateFigure->setText(loc.toString(rates.taken, 'f', 1));
        m_refusedFigure->setText(rates.refused >= 0 ? loc.toString(rates.refused, 'f', 1) : tr("n/a"));
        // The peak of the window, so a burst that is over still shows how fast it went.
        const auto peak = [&loc](double value, qint64 atMs) {
            return atMs ? tr("peak %1 at %2").arg(loc.toString(value, 'f', 1), shortUtc(atMs)) : tr("no peak yet");
        };
        m_rateNote->setText(peak(rates.takenPeak, rates.takenPeakAtMs));
        m_refusedNote->setText(rates.refused >= 0 ? peak(rates.refusedPeak, rates.refusedPeakAtMs) : QString());
        // Drift shows in the gate figure's colour as well as in the chart.
        const bool drift = s.gateAvailable >= 0 && s.gateAvailable != s.available;
        m_figures[GateAvailable]->setStyleSheet(drift ? u"color: #d9534f;"_s : QString());
        m_figures[GateAvailable]->setToolTip(drift ? tr("Gate and book differ by %1 units").arg(s.gateAvailable - s.available)
                                             : s.gateAvailable < 0
                                                 ? tr("No gate figure: the gate is down, not configured, or not loaded")
                                                 : QString());
        return;
    }
    for (QLabel *label : m_figures) {
        label->setText(u"–"_s);
        label->setStyleSheet({});
        label->setToolTip({});
    }
    m_rateFigure->setText(u"–"_s);
    m_refusedFigure->setText(u"–"_s);
    m_rateNote->clear();
    m_refusedNote->clear();
}

void LiveView::updateState()
{
    const QString sku = m_sku->currentText();
    for (const SkuSample &s : std::as_const(m_last)) {
        if (s.sku != sku)
            continue;
        const qint64 now = m_expiryStatus ? m_expiryStatus->nowMs : m_lastAtMs;
        QString html = s.sale ? tr("Sale #%1: <b>%2</b>").arg(s.sale->id).arg(ConsoleText::saleState(*s.sale, now).toHtmlEscaped())
                              : tr("No sale: %1 sells normally (holds of %2)").arg(sku.toHtmlEscaped(), ConsoleText::duration(kDefaultHoldSeconds * 1000));
        if (!s.pausedBy.isEmpty()) {
            QStringList ids;
            for (qint64 id : s.pausedBy)
                ids << u"#%1"_s.arg(id);
            html = colored(kRed, tr("‖ PAUSED by discrepancy %1: reserves answer paused until it is approved or "
                                    "rejected (Reconciliation)")
                                     .arg(ids.join(u", "_s)),
                           true)
                + u" &nbsp; "_s + html;
        }
        m_state->setText(html);
        return;
    }
    m_state->clear();
}

void LiveView::updateExpiry()
{
    m_releaseNow->setEnabled(m_bookUp);
    if (!m_sampled || !m_bookUp) {
        m_expiry->setText(tr("Holds past expiry: –"));
        return;
    }
    if (!m_expiryStatus) {
        m_expiry->setText(colored(kAmber, tr("Holds past expiry: unknown (the book did not answer the question)")));
        return;
    }
    const ExpiryStatus &e = *m_expiryStatus;
    QStringList who;
    for (const ExpirerBeat &b : e.alive())
        who << tr("%1 on %2 (%3, every %4, last pass %5 ago)")
                   .arg(b.kind, b.host(), b.operatorName,
                        ConsoleText::duration(b.everyMs), ConsoleText::duration(e.nowMs - b.atMs))
                   .toHtmlEscaped();
    const QString releasing = who.isEmpty() ? QString() : tr("released by %1").arg(who.join(u"; "_s));
    if (e.overdueOrders == 0) {
        m_expiry->setText(who.isEmpty()
                              ? tr("No holds past expiry. <b>No expirer is running</b>: holds that expire stay locked "
                                   "until one runs (the switch on the right, <tt>expire --every</tt>, or the server).")
                              : tr("No holds past expiry; %1.").arg(releasing));
        return;
    }
    qint64 oldest = 0;
    for (const OverdueHolds &h : e.overdue)
        oldest = oldest ? qMin(oldest, h.oldestDueMs) : h.oldestDueMs;
    const QString count = tr("<b>%L1 hold(s) past expiry</b> (%L2 units locked), the oldest for %3")
                              .arg(e.overdueOrders)
                              .arg(e.overdueUnits())
                              .arg(ConsoleText::duration(e.nowMs - oldest));
    if (who.isEmpty())
        m_expiry->setText(colored(kRed, tr("%1 — <b>nothing is releasing them</b>: release them now, switch this "
                                           "console's expirer on, or run <tt>expire --every</tt>.")
                                            .arg(count)));
    else
        m_expiry->setText(colored(kAmber, tr("%1 — being %2.").arg(count, releasing)));
}

void LiveView::showExpiryRun(const ExpiryRun &run)
{
    if (!run.manual && run.problem.isEmpty())
        return; // the console's own passes show in the heartbeat line
    if (!run.problem.isEmpty())
        m_expiryRun->setText(colored(kRed, tr("Release failed: %1").arg(run.problem.toHtmlEscaped())));
    else
        m_expiryRun->setText(tr("Released %n hold(s), %L1 units.", nullptr, int(run.orders)).arg(run.units));
}

void LiveView::redraw()
{
    const History h = m_history.value(m_sku->currentText());
    const qint64 now = m_lastAtMs ? m_lastAtMs : QDateTime::currentMSecsSinceEpoch();
    double from = double(now - qint64(m_window->value()) * 60000);
    if (m_follow->isChecked()) {
        // From a little before the first movement in the window (else the oldest sample), so a
        // sale of a minute is not one vertical line on a 15-minute axis.
        double anchor = -1, oldest = -1;
        for (const QList<QPointF> &points : h.points)
            for (const QPointF &p : points)
                if (p.x() >= from && (oldest < 0 || p.x() < oldest))
                    oldest = p.x();
        for (const QList<QPointF> &points : h.points) {
            for (qsizetype i = 1; i < points.size(); ++i) {
                if (points[i].x() < from || points[i].y() == points[i - 1].y())
                    continue;
                if (anchor < 0 || points[i - 1].x() < anchor)
                    anchor = qMax(from, points[i - 1].x());
                break;
            }
        }
        if (anchor >= 0)
            from = qMax(from, double(now) - qMax(double(kFollowMinSpanMs), (double(now) - anchor) * 1.1));
        // Never empty time before the first sample (a console just started), yet never a point.
        if (oldest >= 0)
            from = qMin(qMax(from, oldest), double(now) - 1000);
    }
    double top = 0;
    for (int i = 0; i < SeriesCount; ++i) {
        QList<QPointF> visible;
        visible.reserve(h.points[i].size());
        for (const QPointF &p : h.points[i]) {
            if (p.x() >= from) {
                visible.append(p);
                top = qMax(top, p.y());
            }
        }
        m_series[i]->replace(visible);
    }
    updateTimeAxis(from, double(now));
    // Headroom above the highest point, rounded up to a readable step (1, 2 or 5 x 10^n).
    const double want = qMax(10.0, top * 1.1);
    double step = std::pow(10.0, std::floor(std::log10(want)));
    for (double m : {0.1, 0.2, 0.25, 0.5, 1.0})
        if (want <= step * m * 10) {
            step *= m;
            break;
        }
    m_axisY->setRange(0, std::ceil(want / step) * step);
    m_axisY->setTickCount(int(std::ceil(want / step)) + 1 <= 11 ? int(std::ceil(want / step)) + 1 : 6);
}

void LiveView::updateTimeAxis(double fromMs, double toMs)
{
    // A step that gives at most 6 labels, on round UTC times (every step divides a day).
    static const qint64 steps[] = {1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000,
                                   900000, 1800000, 3600000, 7200000};
    qint64 step = steps[std::size(steps) - 1];
    for (qint64 s : steps) {
        if ((toMs - fromMs) / double(s) <= 6) {
            step = s;
            break;
        }
    }
    for (const QString &label : m_axisX->categoriesLabels())
        m_axisX->remove(label);
    m_axisX->setStartValue(fromMs);
    const QString timeFormat = step < 60000 ? u"HH:mm:ss"_s : u"HH:mm"_s;
    // The date on the first label, and on the first one of a new UTC day.
    const bool crossesMidnight = qint64(fromMs) / kDayMs != qint64(toMs) / kDayMs;
    qint64 previousDay = -1;
    for (qint64 t = (qint64(fromMs) / step + 1) * step; double(t) <= toMs; t += step) {
        const QDateTime at = QDateTime::fromMSecsSinceEpoch(t, Qt::UTC);
        const bool withDate = crossesMidnight && t / kDayMs != previousDay;
        previousDay = t / kDayMs;
        m_axisX->append(at.toString(withDate ? u"MM-dd "_s + timeFormat : timeFormat), double(t));
    }
    m_axisX->setRange(fromMs, toMs);
    m_axisX->setTitleText(crossesMidnight ? tr("UTC (the window crosses midnight)") : tr("UTC"));
}

void LiveView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyPalette();
    QWidget::changeEvent(event);
}

void LiveView::applyPalette()
{
    // Qt Charts draws its own theme: follow the system palette so dark mode stays readable.
    const QPalette pal = palette();
    m_chart->setBackgroundBrush(pal.base());
    m_chart->setPlotAreaBackgroundVisible(false);
    m_chart->legend()->setLabelColor(pal.color(QPalette::Text));
    for (QAbstractAxis *axis : {static_cast<QAbstractAxis *>(m_axisX), static_cast<QAbstractAxis *>(m_axisY)}) {
        axis->setLabelsColor(pal.color(QPalette::Text));
        axis->setTitleBrush(pal.color(QPalette::Text));
        QColor grid = pal.color(QPalette::Text);
        grid.setAlpha(40);
        axis->setGridLineColor(grid);
        axis->setLinePenColor(pal.color(QPalette::Mid));
    }
}

} // namespace flashstock
