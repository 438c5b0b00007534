#pragma once

#include "ConsoleTypes.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;

namespace flashstock {

class ConsoleSession;
class LedgerModel;

/// The ledger view: recent activity (the newest rows of every SKU, newest first) as soon as
/// the book is open and whenever the view is shown again, and a search by order, token or SKU; an order's chain (reserve, then
/// confirm or release, refunds) summarised in one line above its rows, oldest first, with
/// the order as the book holds it (what GET /v1/orders/{order} shows: status, buyer, lines
/// and their gate tokens, created, hold expiry, payment, close reason); a SKU's rows newest
/// first. Copy and CSV export of the rows shown. GUI thread.
class LedgerView : public QWidget {
    Q_OBJECT
public:
    explicit LedgerView(ConsoleSession *session, QWidget *parent = nullptr);

    LedgerModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    /// Searches now (as if the operator pressed Enter); Recent needs no text.
    void search(LedgerSearchMode mode, const QString &text);
    /// Shows recent activity again (the Recent button).
    void showRecent();
    /// Puts the keyboard focus in the search field.
    void focusSearch();
    /// The line above the rows (for tests).
    QString summaryText() const;
    /// The order found by an order search, as shown (rich text; empty otherwise; for tests).
    QString orderText() const;
    /// Forgets the rows shown (a new connection).
    void clear();

protected:
    /// Recent activity is read again each time the view is shown.
    void showEvent(QShowEvent *event) override;

private:
    void showResult(const LedgerSearchResult &result);

    ConsoleSession *m_session = nullptr;
    LedgerModel *m_model = nullptr;
    QComboBox *m_mode = nullptr;
    QLineEdit *m_text = nullptr;
    QLabel *m_chain = nullptr;
    QLabel *m_order = nullptr;
    QTableView *m_table = nullptr;
    bool m_showingRecent = false;
    bool m_bookOpen = false;
};

} // namespace flashstock
