#include "LiveView.h"

#include "models/ModelRoles.h"
#include "models/SkuLevelsModel.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QValueAxis>
#include <QVBoxLayout>

#include <cmath>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

constexpr qint64 kRateSpanMs = 5000; // rates average over this span, so one slow sample does not spike them

/// Change per second of the points' y from the newest point at least kRateSpanMs older than
/// the last (or the oldest) to the last; 0 with fewer than two points.
double changePerSecond(const QList<QPointF> &points)
{
    if (points.size() < 2)
        return 0;
    const double x = points.last().x();
    qsizetype from = points.size() - 1;
    while (from > 0 && points[from].x() > x - kRateSpanMs)
        --from;
    const double dt = (x - points[from].x()) / 1000.0;
    return dt > 0 ? (points.last().y() - points[from].y()) / dt : 0.0;
}

} // namespace

LiveView::LiveView(QWidget *parent)
    : QWidget(parent)
    , m_levels(new SkuLevelsModel(this))
{
    auto *layout = new QVBoxLayout(this);

    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("&SKU:"), this));
    m_sku = new QComboBox(this);
    m_sku->setMinimumContentsLength(16);
    m_sku->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    qobject_cast<QLabel *>(top->itemAt(0)->widget())->setBuddy(m_sku);
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
    top->addStretch();
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
    m_refusedFigure = addFigure(grid, 5, tr("Refused per second"));
    m_refusedFigure->setToolTip(tr("Reserves refused (out of stock, over the per-user limit, sale closed, paused) "
                                   "as the gate counts them; n/a when book-only"));
    layout->addWidget(figures);

    m_chart = new QChart;
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    const QString names[SeriesCount] = {tr("Available (book)"), tr("Available (gate)"), tr("Locked"), tr("Sold")};
    const QColor colors[SeriesCount] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x9c, 0x27, 0xb0),
                                        QColor(0x2c, 0xa0, 0x2c)};
    m_axisX = new QDateTimeAxis;
    m_axisX->setFormat(u"HH:mm:ss"_s);
    m_axisX->setTickCount(6);
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
    m_chartView->setMinimumHeight(260);

    m_table = new QTableView(this);
    m_table->setModel(m_levels);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_chartView);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({520, 180});
    layout->addWidget(split, 1);

    connect(m_sku, &QComboBox::currentTextChanged, this, [this] {
        updateFigures();
        redraw();
    });
    connect(m_window, &QSpinBox::valueChanged, this, [this] { redraw(); });
    connect(m_table, &QTableView::activated, this, [this](const QModelIndex &index) {
        setCurrentSku(index.siblingAtColumn(SkuLevelsModel::Sku).data(RawRole).toString());
    });
    applyPalette();
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

void LiveView::setPointCap(int cap)
{
    m_pointCap = qMax(2, cap);
    for (History &h : m_history)
        for (auto &points : h.points)
            if (points.size() > m_pointCap)
                points.remove(0, points.size() - m_pointCap);
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

void LiveView::addSnapshot(const LiveSnapshot &snap)
{
    if (!snap.health.bookUp)
        return; // nothing new to draw; the status bar says why
    const qint64 keepFromMs = snap.atMs - qint64(m_window->maximum()) * 60000;
    for (const SkuSample &s : snap.skus) {
        History &h = m_history[s.sku];
        const double x = double(snap.atMs);
        h.points[BookAvailable].append(QPointF(x, double(s.available)));
        if (s.gateAvailable >= 0)
            h.points[GateAvailable].append(QPointF(x, double(s.gateAvailable)));
        h.points[Locked].append(QPointF(x, double(s.locked)));
        h.points[Sold].append(QPointF(x, double(s.sold)));
        for (auto &points : h.points) {
            qsizetype drop = qMax<qsizetype>(0, points.size() - m_pointCap);
            while (drop < points.size() && points[drop].x() < double(keepFromMs))
                ++drop;
            if (drop)
                points.remove(0, drop);
        }
        SkuRates &rates = m_rates[s.sku];
        // Units taken per second: available going down over the last few seconds.
        rates.taken = qMax(0.0, -changePerSecond(h.points[BookAvailable]));
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
    }
    m_last = snap.skus;
    m_lastAtMs = snap.atMs;

    QStringList skus;
    for (const SkuSample &s : snap.skus)
        skus << s.sku;
    QStringList shown;
    for (int i = 0; i < m_sku->count(); ++i)
        shown << m_sku->itemText(i);
    if (skus != shown) {
        const QString keep = m_sku->currentText();
        QSignalBlocker block(m_sku);
        m_sku->clear();
        m_sku->addItems(skus);
        const int i = m_sku->findText(keep);
        m_sku->setCurrentIndex(i >= 0 ? i : (skus.isEmpty() ? -1 : 0));
    }
    m_levels->setSamples(snap.skus, m_rates);
    updateFigures();
    redraw();
}

void LiveView::updateFigures()
{
    const QString sku = m_sku->currentText();
    for (const SkuSample &s : m_last) {
        if (s.sku != sku)
            continue;
        const QLocale loc;
        m_figures[BookAvailable]->setText(loc.toString(s.available));
        m_figures[GateAvailable]->setText(s.gateAvailable >= 0 ? loc.toString(s.gateAvailable) : tr("n/a"));
        m_figures[Locked]->setText(loc.toString(s.locked));
        m_figures[Sold]->setText(loc.toString(s.sold));
        const SkuRates rates = m_rates.value(sku);
        m_rateFigure->setText(loc.toString(rates.taken, 'f', 1));
        m_refusedFigure->setText(rates.refused >= 0 ? loc.toString(rates.refused, 'f', 1) : tr("n/a"));
        // Drift shows in the gate figure's colour as well as in the chart.
        const bool drift = s.gateAvailable >= 0 && s.gateAvailable != s.available;
        m_figures[GateAvailable]->setStyleSheet(drift ? u"color: #d9534f;"_s : QString());
        m_figures[GateAvailable]->setToolTip(drift ? tr("Gate and book differ by %1 units").arg(s.gateAvailable - s.available)
                                                   : QString());
        return;
    }
    for (QLabel *label : m_figures)
        label->setText(u"–"_s);
    m_rateFigure->setText(u"–"_s);
    m_refusedFigure->setText(u"–"_s);
}

void LiveView::redraw()
{
    const History h = m_history.value(m_sku->currentText());
    const qint64 now = m_lastAtMs ? m_lastAtMs : QDateTime::currentMSecsSinceEpoch();
    const double from = double(now - qint64(m_window->value()) * 60000);
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
    m_axisX->setRange(QDateTime::fromMSecsSinceEpoch(qint64(from)), QDateTime::fromMSecsSinceEpoch(now));
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
        QColor grid = pal.color(QPalette::Text);
        grid.setAlpha(40);
        axis->setGridLineColor(grid);
        axis->setLinePenColor(pal.color(QPalette::Mid));
    }
}

} // namespace flashstock
