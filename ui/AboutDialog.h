#pragma once

#include <QDialog>

namespace flashstock {

/// Help > About: the console's icon, version and git revision, licence, and links to the
/// README's sections (the installed copy) and the home page. GUI thread; owned by its parent.
class AboutDialog : public QDialog {
    Q_OBJECT
public:
    explicit AboutDialog(QWidget *parent = nullptr);
};

} // namespace flashstock
