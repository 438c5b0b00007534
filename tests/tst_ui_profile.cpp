// The console's connection profile: the saved settings ([console] in the data dir's
// flashstock.ini) never contain a password, and applying the dialog in the window reopens
// the session. (Passwords from the environment at connect time: tst_profile, EngineOpener.)

#include "ConsoleSession.h"
#include "MainWindow.h"
#include "ProfileDialog.h"
#include "ProfileSettings.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QSettings>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace flashstock;

class TestUiProfile : public QObject {
    Q_OBJECT
private slots:
    void stripPassword_data();
    void stripPassword();
    void savedSettingsHaveNoPassword();
    void applyingReopensTheSession();
};

void TestUiProfile::stripPassword_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("stripped");
    QTest::addRow("postgres") << u"postgresql://ops:hunter2@db.example:5432/flash"_s
                              << u"postgresql://ops@db.example:5432/flash"_s;
    QTest::addRow("redis, no user") << u"redis://:s3cret@cache:6379/0"_s << u"redis://cache:6379/0"_s;
    QTest::addRow("redis, user") << u"redis://app:s3cret@cache:6379"_s << u"redis://app@cache:6379"_s;
    QTest::addRow("unix query") << u"unix:///run/redis.sock?db=2&password=s3cret"_s << u"unix:///run/redis.sock?db=2"_s;
    QTest::addRow("sqlite") << u"sqlite:///tmp/book.db"_s << u"sqlite:///tmp/book.db"_s;
    QTest::addRow("none") << u"none"_s << u"none"_s;
    QTest::addRow("embedded") << QString() << QString();
}

void TestUiProfile::stripPassword()
{
    QFETCH(QString, url);
    QFETCH(QString, stripped);
    QCOMPARE(ProfileSettings::stripPassword(url), stripped);
}

void TestUiProfile::savedSettingsHaveNoPassword()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ProfileDialog dialog(EngineProfile{dir.path(), {}, {}, u"tester"_s});
    dialog.bookField()->setText(u"postgresql://ops:hunter2@db.example:5432/flash"_s);
    dialog.gateModeField()->setCurrentIndex(dialog.gateModeField()->findData(int(ProfileDialog::GateUrl)));
    QVERIFY(dialog.gateField()->isEnabled());
    dialog.gateField()->setText(u"redis://:s3cret@cache:6379/0?password=s3cret2"_s);
    dialog.operatorField()->setText(u"night-shift"_s);
    if (qEnvironmentVariableIsSet("FLASHSTOCK_SHOT_DIR")) {
        dialog.show();
        QCoreApplication::processEvents();
        QVERIFY(dialog.grab().save(QDir(qEnvironmentVariable("FLASHSTOCK_SHOT_DIR")).absoluteFilePath(u"profile.png"_s)));
    }
    const EngineProfile p = dialog.profile();
    QVERIFY(ProfileSettings::save(p));

    QFile ini(ProfileSettings::filePath(dir.path()));
    QVERIFY(ini.open(QIODevice::ReadOnly));
    const QByteArray bytes = ini.readAll();
    for (const char *secret : {"hunter2", "s3cret", "password"})
        QVERIFY2(!bytes.contains(secret), bytes.constData());
    QVERIFY(bytes.contains("[console]"));

    QVERIFY(ProfileSettings::exists(dir.path()));
    const EngineProfile loaded = ProfileSettings::load(EngineProfile{dir.path(), {}, {}, u"someone"_s});
    QCOMPARE(loaded.dbUrl, u"postgresql://ops@db.example:5432/flash"_s);
    QCOMPARE(loaded.redisUrl, u"redis://cache:6379"_s); // database 0, the default
    QCOMPARE(loaded.operatorName, u"night-shift"_s);
}

void TestUiProfile::applyingReopensTheSession()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    MainWindow window(EngineProfile{dir.path(), {}, u"none"_s, u"tester"_s});
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->connection().bookOpen, 10000);
    QAction *action = nullptr;
    for (QAction *a : window.findChildren<QAction *>())
        if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P))
            action = a;
    QVERIFY(action);
    action->trigger();
    auto *dialog = window.findChild<ProfileDialog *>();
    QVERIFY(dialog);
    QCOMPARE(dialog->gateModeField()->currentData().toInt(), int(ProfileDialog::GateNone));
    dialog->operatorField()->setText(u"ops2"_s);
    dialog->accept();
    QCOMPARE(window.session()->profile().operatorName, u"ops2"_s);
    QTRY_VERIFY_WITH_TIMEOUT(window.session()->connection().bookOpen, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(window.bookStatusText().contains(u"up"_s), 10000);
    QCOMPARE(ProfileSettings::load(EngineProfile{dir.path(), {}, {}, u"x"_s}).operatorName, u"ops2"_s);
    QCOMPARE(ProfileSettings::load(EngineProfile{dir.path(), {}, {}, u"x"_s}).redisUrl, u"none"_s);
}

QTEST_MAIN(TestUiProfile)
#include "tst_ui_profile.moc"
