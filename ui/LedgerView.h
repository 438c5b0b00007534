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

/// The ledger view: search by order, token or SKU; an order's chain (reserve, then confirm
/// or release, refunds) summarised in one line above its rows. GUI thread.
class LedgerView : public QWidget {
    Q_OBJECT
public:
    explicit LedgerView(ConsoleSession *session, QWidget *parent = nullptr);

    LedgerModel *model() const { return m_model; }
    /// Searches now (as if the operator pressed Enter).
    void search(LedgerSearchMode mode, const QString &text);
    /// Puts the keyboard focus in the search field.
    void focusSearch();

private:
    void showResult(const LedgerSearchResult &result);

    ConsoleSession *m_session = nullptr;
    LedgerModel *m_model = nullptr;
    QComboBox *m_mode = nullptr;
    QLineEdit *m_text = nullptr;
    QLabel *m_chain = nullptr;
    QTableView *m_table = nullptr;
};

} // namespace flashstock
