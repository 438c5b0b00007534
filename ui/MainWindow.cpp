#include "MainWindow.h"

#include <QLabel>
#include <QStatusBar>

namespace flashstock {

MainWindow::MainWindow(const QString &bookDescription, QWidget *parent)
    : QMainWindow(parent)
{
    setWindowTitle(tr("FlashStock console"));
    auto *label = new QLabel(tr("Book of record: %1\n\nThe console's views are not built yet; use flashstock-cli.")
                                 .arg(bookDescription),
                             this);
    label->setAlignment(Qt::AlignCenter);
    label->setMargin(24);
    setCentralWidget(label);
    statusBar()->showMessage(tr("Book: %1").arg(bookDescription));
    resize(900, 600);
}

} // namespace flashstock
