// flashstock-cli: the headless face of FlashStock, for scripts, cron and CI.

#include "BuildInfo.h"
#include "cli/Cli.h"

#include <QCoreApplication>
#include <QTextStream>

#include <csignal>
#include <cstdio>

int main(int argc, char **argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("flashstock-cli"));
    QCoreApplication::setApplicationVersion(flashstock::versionLine());
    QTextStream out(stdout);
    QTextStream err(stderr);
    flashstock::Cli cli;
    return cli.run(app.arguments().mid(1), out, err);
}
