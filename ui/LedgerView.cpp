#include "LedgerView.h"

#include "ConsoleSession.h"
#include "ConsoleText.h"
#include "EngineWorker.h"
#include "TableExport.h"
#include "models/LedgerModel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// The order as the book holds it, for people: what GET /v1/orders/{order} shows.
QString orderHtml(const OrderView &o)
{
    const auto esc = [](const QString &s) { return s.toHtmlEscaped(); };
    const auto time = [](qint64 ms) { return ms ? ConsoleText::utcTime(ms) : QObject::tr("–"); };
    QStringList lines;
    for (const OrderLine &l : o.lines)
        lines << QObject::tr("%1 × %2, token %3")
                     .arg(esc(l.sku))
                     .arg(l.qty)
                     .arg(l.token.isEmpty() ? QObject::tr("none (book-only)") : u"<tt>%1</tt>"_s.arg(esc(l.token)));
    QString html = u"<table cellspacing=0 cellpadding=2>"_s;
    const auto row = [&html](const QString &k1, const QString &v1, const QString &k2, const QString &v2) {
        html += u"<tr><td><b>%1</b></td><td>%2</td><td width=24></td><td><b>%3</b></td><td>%4</td></tr>"_s.arg(
            k1, v1, k2, v2);
    };
    row(QObject::tr("Status"), orderStatusName(o.status), QObject::tr("Buyer"),
        o.user.isEmpty() ? QObject::tr("none named") : esc(o.user));
    row(QObject::tr("Created"), time(o.createdAtMs), QObject::tr("Hold expires"), time(o.expiresAtMs));
    row(QObject::tr("Payment"), o.paymentRef.isEmpty() ? QObject::tr("none") : esc(o.paymentRef),
        QObject::tr("Closed because"), o.closeReason.isEmpty() ? QObject::tr("–") : esc(o.closeReason));
    html += u"<tr><td><b>%1</b></td><td colspan=4>%2</td></tr></table>"_s.arg(QObject::tr("Lines"),
                                                                            lines.join(u"; "_s));
    return html;
}

} // namespace

LedgerView::LedgerView(ConsoleSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_model(new LedgerModel(this))
{
    auto *layout = new QVBoxLayout(this);
    auto *row = new QHBoxLayout;
    auto *recent = new QPushButton(tr("R&ecent activity"), this);
    recent->setToolTip(tr("The newest ledger rows of every SKU, newest first"));
    row->addWidget(recent);
    row->addSpacing(12);
    m_mode = new QComboBox(this);
    m_mode->addItem(tr("Order"), int(LedgerSearchMode::Order));
    m_mode->addItem(tr("Token"), int(LedgerSearchMode::Token));
    m_mode->addItem(tr("SKU"), int(LedgerSearchMode::Sku));
    auto *label = new QLabel(tr("Search &by:"), this);
    label->setBuddy(m_mode);
    row->addWidget(label);
    row->addWidget(m_mode);
    m_text = new QLineEdit(this);
    m_text->setPlaceholderText(tr("order id, gate token or SKU id (Ctrl+L)"));
    m_text->setClearButtonEnabled(true);
    row->addWidget(m_text, 1);
    auto *go = new QPushButton(tr("&Search"), this);
    row->addWidget(go);
    auto *exportButton = new QPushButton(tr("E&xport CSV…"), this);
    row->addWidget(exportButton);
    layout->addLayout(row);

    m_chain = new QLabel(this);
    m_chain->setWordWrap(true);
    m_chain->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont f = m_chain->font();
    f.setPointSizeF(f.pointSizeF() * 1.2);
    m_chain->setFont(f);
    layout->addWidget(m_chain);
    m_order = new QLabel(this);
    m_order->setTextFormat(Qt::RichText);
    m_order->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_order->hide();
    layout->addWidget(m_order);

    m_table = new QTableView(this);
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    QAction *exportAction = TableExport::install(m_table, u"flashstock-ledger"_s);
    connect(exportButton, &QPushButton::clicked, exportAction, &QAction::trigger);
    layout->addWidget(m_table, 1);

    const auto run = [this] {
        search(LedgerSearchMode(m_mode->currentData().toInt()), m_text->text().trimmed());
    };
    connect(m_text, &QLineEdit::returnPressed, this, run);
    connect(go, &QPushButton::clicked, this, run);
    connect(recent, &QPushButton::clicked, this, &LedgerView::showRecent);
    connect(session->worker(), &EngineWorker::ledgerFound, this, &LedgerView::showResult);
    // Recent activity as soon as the book is open: the view is never blank before a search.
    connect(session->worker(), &EngineWorker::opened, this, [this](const ConnectionInfo &info) {
        m_bookOpen = info.bookOpen;
        if (info.bookOpen)
            showRecent();
    });
    clear();
}

void LedgerView::focusSearch()
{
    m_text->setFocus();
    m_text->selectAll();
}

QString LedgerView::summaryText() const
{
    return m_chain->text();
}

QString LedgerView::orderText() const
{
    return m_order->isHidden() ? QString() : m_order->text();
}

void LedgerView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_bookOpen && m_showingRecent)
        showRecent();
}

void LedgerView::clear()
{
    m_bookOpen = false;
    m_model->setRows({});
    m_order->clear();
    m_order->hide();
    m_chain->setText(tr("The ledger shows once the book of record is open."));
}

void LedgerView::showRecent()
{
    search(LedgerSearchMode::Recent, {});
}

void LedgerView::search(LedgerSearchMode mode, const QString &text)
{
    if (text.isEmpty() && mode != LedgerSearchMode::Recent)
        return;
    m_showingRecent = mode == LedgerSearchMode::Recent;
    if (mode != LedgerSearchMode::Recent) {
        m_mode->setCurrentIndex(m_mode->findData(int(mode)));
        m_text->setText(text);
    }
    m_chain->setText(tr("Searching…"));
    m_session->searchLedger(mode, text);
}

void LedgerView::showResult(const LedgerSearchResult &r)
{
    const bool newestFirst = r.mode == LedgerSearchMode::Recent || r.mode == LedgerSearchMode::Sku;
    m_model->setRows(r.rows, newestFirst ? LedgerModel::RowOrder::NewestFirst : LedgerModel::RowOrder::AsGiven);
    m_order->setText(r.order ? orderHtml(*r.order) : QString());
    m_order->setVisible(r.order.has_value());
    if (!r.error.isEmpty()) {
        m_chain->setText(tr("Search failed: %1").arg(r.error));
        return;
    }
    if (r.mode == LedgerSearchMode::Recent) {
        m_chain->setText(r.rows.isEmpty()
                             ? tr("No ledger rows yet: every stock movement (a SKU added, a reserve, a payment, a "
                                  "release, a restock) appears here.")
                             : tr("Recent activity: the newest %n row(s) of every SKU, newest first. Search by order, "
                                  "token or SKU for one trace.",
                                  nullptr, int(r.rows.size())));
        return;
    }
    if (r.rows.isEmpty()) {
        m_chain->setText(r.order ? tr("Order %1 has no ledger rows.").arg(r.text)
                                 : tr("No ledger rows for %1.").arg(r.text));
        return;
    }
    if (r.mode == LedgerSearchMode::Sku) {
        m_chain->setText(tr("%n row(s) of SKU %1, newest first.", nullptr, int(r.rows.size())).arg(r.text));
        return;
    }
    // An order's chain at a glance: its operations in order, with units and outcome.
    QStringList steps;
    QString order;
    for (const LedgerRow &row : r.rows) {
        order = row.order;
        const qint64 units = qMax(qAbs(row.deltaLocked), qAbs(row.deltaSold));
        const QString step = u"%1 %2×%3"_s.arg(row.operation, QString::number(units), row.sku);
        if (steps.isEmpty() || steps.last() != step)
            steps << step;
    }
    QString text = tr("Order %1: %2").arg(order, steps.join(u"  →  "_s));
    if (r.order)
        text += tr("   [status %1]").arg(orderStatusName(r.order->status));
    if (r.refunds > 0)
        text += tr("   + %n refund(s)", nullptr, r.refunds);
    m_chain->setText(text);
}

} // namespace flashstock
