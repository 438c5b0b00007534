#pragma once

#include <QMainWindow>

namespace flashstock {

/// The operations console's main window. For now it shows where the book of record lives;
/// the live, sales, reconciliation and ledger views arrive with their issue.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// `bookDescription`: the book's URL or path, shown to the operator.
    explicit MainWindow(const QString &bookDescription, QWidget *parent = nullptr);
};

} // namespace flashstock
