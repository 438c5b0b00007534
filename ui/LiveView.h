#pragma once

#include "ConsoleTypes.h"

#include <QHash>
#include <QPointF>
#include <QWidget>

class QCategoryAxis;
class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QLineSeries;
class QPushButton;
class QSpinBox;
class QSplitter;
class QStackedWidget;
class QTableView;
class QValueAxis;

namespace flashstock {

class SkuLevelsModel;

/// The live view: for the chosen SKU, book available, gate available, locked and sold over
/// time (one point per sample, the last `window` minutes, at most pointCap() points per
/// series, updated with QLineSeries::replace(); the time axis in UTC, with the date when the
/// window crosses midnight; while it follows the sale, the axis begins a little before the
/// first movement in the window), the current figures in large type (units taken and
/// refused over the last second, with the window's peak), the state of its sale and
/// the discrepancy that pauses it, the holds past expiry and whether an expirer releases
/// them, and a table of every SKU (selecting a row shows that SKU) below a split the operator
/// moves (splitter(); MainWindow keeps its place). With no SKU, or with the
/// book down, it says what to do instead of drawing. Fed by addSnapshot(); touches no
/// engine (its requests are signals). GUI thread.
class LiveView : public QWidget {
    Q_OBJECT
public:
    /// The four series, in drawing order.
    enum Series { BookAvailable, GateAvailable, Locked, Sold, SeriesCount };

    explicit LiveView(QWidget *parent = nullptr);

    /// Adds one sample of every SKU and redraws the chosen SKU. A sample with the book down
    /// draws nothing new and says so.
    void addSnapshot(const LiveSnapshot &snapshot);
    /// Forgets every sample (a new connection): figures, chart and table are emptied and the
    /// view says `why` (e.g. connecting, or the connection failed).
    void clear(const QString &why);
    /// Units taken (book available going down) and reserves refused per second over the last
    /// second (from the newest sample at least kRateSpanMs before the last one), and their
    /// peaks in the chart's window, by SKU.
    const QHash<QString, SkuRates> &rates() const { return m_rates; }
    /// The shortest span a rate is measured over, ms: a sample that comes a little early
    /// still measures the last second.
    static constexpr qint64 kRateSpanMs = 900;
    /// The shortest time axis while it follows a sale that moved, ms (less only while the
    /// samples themselves span less).
    static constexpr qint64 kFollowMinSpanMs = 20000;

    /// Most points any series keeps (default: 15 minutes of 1 s samples).
    int pointCap() const { return m_pointCap; }
    void setPointCap(int cap);
    /// Window shown, in minutes (default 15).
    int windowMinutes() const;
    void setWindowMinutes(int minutes);
    /// Whether the time axis follows the sale (on by default): it begins a little before the
    /// first movement of the SKU's levels in the window (at least kFollowMinSpanMs before
    /// the last sample), never before the oldest sample; off: the whole window.
    bool followsSale() const;
    void setFollowsSale(bool on);
    /// The time axis' range as drawn now, ms since the epoch (for tests).
    std::pair<double, double> timeAxisRange() const;
    /// The split between the chart and the SKU table.
    QSplitter *splitter() const { return m_split; }
    /// "Taken per second" as shown now: the figure and the line under it (for tests).
    QString takenText() const;
    QString currentSku() const;
    void setCurrentSku(const QString &sku);
    /// Points the chart's series `which` holds now (for tests).
    int seriesPointCount(Series which) const;
    /// The time axis labels as drawn now (for tests), oldest first.
    QStringList timeAxisLabels() const;
    SkuLevelsModel *levelsModel() const { return m_levels; }
    QTableView *table() const { return m_table; }
    /// Whether the console releases expired holds by itself (the switch; on by default).
    bool releasesExpiredHolds() const;
    void setReleasesExpiredHolds(bool on);
    QPushButton *releaseNowButton() const { return m_releaseNow; }
    /// The texts shown now (for tests): the empty state (empty while the chart shows), the
    /// SKU's state line, and the expiry line.
    QString emptyStateText() const;
    QString stateText() const;
    QString expiryText() const;
    /// Shows what a release of expired holds did.
    void showExpiryRun(const ExpiryRun &run);

signals:
    /// The empty state's buttons.
    void addSkuRequested();
    void launchSaleRequested();
    /// "Release expired holds now".
    void releaseNowRequested();
    /// The switch "this console releases expired holds" changed.
    void releasesExpiredHoldsChanged(bool on);

protected:
    void changeEvent(QEvent *event) override;

private:
    struct History {
        QList<QPointF> points[SeriesCount];
        QList<QPointF> refused; ///< the gate's refusal counter, the last few seconds only
        QList<QPointF> takenRate;   ///< units taken per second at each sample (its last second)
        QList<QPointF> refusedRate; ///< refusals per second at each sample; none while not counted
    };
    void redraw();
    void updateTimeAxis(double fromMs, double toMs);
    void updateFigures();
    void updateState();
    void updateExpiry();
    void showEmptyState(const QString &html, bool offerActions);
    void applyPalette();
    QLabel *addFigure(QGridLayout *grid, int column, const QString &caption);
    /// The small line under a rate figure (row 2 of the grid).
    QLabel *addFigureNote(QGridLayout *grid, int column);
    /// The peaks of `h`'s rates within the window shown, into `rates`.
    void updatePeaks(const History &h, SkuRates &rates) const;

    SkuLevelsModel *m_levels = nullptr;
    QComboBox *m_sku = nullptr;
    QSpinBox *m_window = nullptr;
    QLabel *m_figures[SeriesCount] = {};
    QLabel *m_rateFigure = nullptr;
    QLabel *m_refusedFigure = nullptr;
    QLabel *m_rateNote = nullptr;
    QLabel *m_refusedNote = nullptr;
    QCheckBox *m_follow = nullptr;
    QSplitter *m_split = nullptr;
    QLabel *m_state = nullptr;
    QLabel *m_expiry = nullptr;
    QLabel *m_expiryRun = nullptr;
    QCheckBox *m_autoRelease = nullptr;
    QPushButton *m_releaseNow = nullptr;
    QStackedWidget *m_chartStack = nullptr;
    QLabel *m_empty = nullptr;
    QPushButton *m_addSku = nullptr;
    QPushButton *m_launch = nullptr;
    QChart *m_chart = nullptr;
    QChartView *m_chartView = nullptr;
    QLineSeries *m_series[SeriesCount] = {};
    QCategoryAxis *m_axisX = nullptr;
    QValueAxis *m_axisY = nullptr;
    QTableView *m_table = nullptr;
    QHash<QString, History> m_history;
    QHash<QString, SkuRates> m_rates;
    QList<SkuSample> m_last;
    std::optional<ExpiryStatus> m_expiryStatus;
    bool m_bookUp = false;
    bool m_sampled = false;
    qint64 m_lastAtMs = 0;
    int m_pointCap = 15 * 60;
};

} // namespace flashstock
