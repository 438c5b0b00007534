#pragma once

#include "Command.h"

#include <QStringList>
#include <QTextStream>

#include <memory>
#include <vector>

namespace flashstock {

/// The `flashstock-cli` runner: parses global options (before or after the command words),
/// finds the command, runs it, and prints its output as text or as one JSON object.
/// Writes to the given streams, so tests run commands in-process.
class Cli {
public:
    Cli();
    ~Cli();

    /// Runs one command line (`arguments` without the program name). Returns the exit code.
    int run(const QStringList &arguments, QTextStream &out, QTextStream &err);

    /// The command table, in the order `--help` lists it (for the man page and completion).
    const std::vector<std::unique_ptr<Command>> &commands() const { return m_commands; }
    /// The options every command takes, before or after the command words.
    static QList<QCommandLineOption> globalOptions();
    /// What each exit code means, in `--help` and the man page.
    static QList<std::pair<int, QString>> exitCodes();

private:
    QString usage() const;
    std::vector<std::unique_ptr<Command>> m_commands;
};

} // namespace flashstock
