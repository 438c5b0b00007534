#pragma once

#include "ConsoleTypes.h"

#include <QHash>
#include <QPointF>
#include <QWidget>

class QChart;
class QChartView;
class QComboBox;
class QDateTimeAxis;
class QGridLayout;
class QLabel;
class QLineSeries;
class QSpinBox;
class QTableView;
class QValueAxis;

namespace flashstock {

class SkuLevelsModel;

/// The live view: for the chosen SKU, book available, gate available, locked and sold over
/// time (one point per sample, the last `window` minutes, at most pointCap() points per
/// series, updated with QLineSeries::replace()), the current figures in large type, and a
/// table of every SKU. Fed by addSnapshot(); touches no engine. GUI thread.
class LiveView : public QWidget {
    Q_OBJECT
public:
    /// The four series, in drawing order.
    enum Series { BookAvailable, GateAvailable, Locked, Sold, SeriesCount };

    explicit LiveView(QWidget *parent = nullptr);

    /// Adds one sample of every SKU and redraws the chosen SKU.
    void addSnapshot(const LiveSnapshot &snapshot);
    /// Units taken (book available going down) and reserves refused per second over the last
    /// few seconds, by SKU.
    const QHash<QString, SkuRates> &rates() const { return m_rates; }

    /// Most points any series keeps (default: 15 minutes of 1 s samples).
    int pointCap() const { return m_pointCap; }
    void setPointCap(int cap);
    /// Window shown, in minutes (default 15).
    int windowMinutes() const;
    void setWindowMinutes(int minutes);
    QString currentSku() const;
    void setCurrentSku(const QString &sku);
    /// Points the chart's series `which` holds now (for tests).
    int seriesPointCount(Series which) const;
    SkuLevelsModel *levelsModel() const { return m_levels; }

protected:
    void changeEvent(QEvent *event) override;

private:
    struct History {
        QList<QPointF> points[SeriesCount];
        QList<QPointF> refused; ///< the gate's refusal counter, the last few seconds only
    };
    void redraw();
    void updateFigures();
    void applyPalette();
    QLabel *addFigure(QGridLayout *grid, int column, const QString &caption);

    SkuLevelsModel *m_levels = nullptr;
    QComboBox *m_sku = nullptr;
    QSpinBox *m_window = nullptr;
    QLabel *m_figures[SeriesCount] = {};
    QLabel *m_rateFigure = nullptr;
    QLabel *m_refusedFigure = nullptr;
    QChart *m_chart = nullptr;
    QChartView *m_chartView = nullptr;
    QLineSeries *m_series[SeriesCount] = {};
    QDateTimeAxis *m_axisX = nullptr;
    QValueAxis *m_axisY = nullptr;
    QTableView *m_table = nullptr;
    QHash<QString, History> m_history;
    QHash<QString, SkuRates> m_rates;
    QList<SkuSample> m_last;
    qint64 m_lastAtMs = 0;
    int m_pointCap = 15 * 60;
};

} // namespace flashstock
