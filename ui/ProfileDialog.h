#pragma once

#include "ConsoleTypes.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QLineEdit;

namespace flashstock {

/// File > Connection...: book URL, gate (embedded, none, or a URL) and operator name.
/// Passwords are not kept: profile() strips them, and the dialog says where they come from
/// (PGPASSWORD, FLASHSTOCK_REDIS_PASSWORD). GUI thread.
class ProfileDialog : public QDialog {
    Q_OBJECT
public:
    enum GateMode { GateEmbedded, GateNone, GateUrl };

    explicit ProfileDialog(const EngineProfile &profile, QWidget *parent = nullptr);

    /// The edited profile (same data dir), passwords stripped.
    EngineProfile profile() const;

    QLineEdit *bookField() const { return m_book; }
    QComboBox *gateModeField() const { return m_gateMode; }
    QLineEdit *gateField() const { return m_gate; }
    QLineEdit *operatorField() const { return m_operator; }

private:
    void updateGateField();

    EngineProfile m_base;
    QLineEdit *m_book = nullptr;
    QComboBox *m_gateMode = nullptr;
    QLineEdit *m_gate = nullptr;
    QLineEdit *m_operator = nullptr;
};

} // namespace flashstock
