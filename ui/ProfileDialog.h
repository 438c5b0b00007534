#pragma once

#include "ConsoleTypes.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QLineEdit;

namespace flashstock {

/// File > Connection...: book URL, gate (embedded, none, or a URL) and operator name, and a
/// masked password for each, used for this session only and never saved (ProfileSettings
/// strips it); empty, the password comes from PGPASSWORD or FLASHSTOCK_REDIS_PASSWORD. A
/// password typed into a URL moves into its masked field at once. GUI thread.
class ProfileDialog : public QDialog {
    Q_OBJECT
public:
    enum GateMode { GateEmbedded, GateNone, GateUrl };

    explicit ProfileDialog(const EngineProfile &profile, QWidget *parent = nullptr);

    /// The edited profile (same data dir), with the typed passwords in its URLs (in memory
    /// only: ProfileSettings::save strips them).
    EngineProfile profile() const;

    QLineEdit *bookField() const { return m_book; }
    QComboBox *gateModeField() const { return m_gateMode; }
    QLineEdit *gateField() const { return m_gate; }
    QLineEdit *operatorField() const { return m_operator; }
    QLineEdit *bookPasswordField() const { return m_bookPassword; }
    QLineEdit *gatePasswordField() const { return m_gatePassword; }

private:
    void updateGateField();

    EngineProfile m_base;
    QLineEdit *m_book = nullptr;
    QComboBox *m_gateMode = nullptr;
    QLineEdit *m_gate = nullptr;
    QLineEdit *m_operator = nullptr;
    QLineEdit *m_bookPassword = nullptr;
    QLineEdit *m_gatePassword = nullptr;
};

} // namespace flashstock
