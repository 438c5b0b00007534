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

private:
    QString usage() const;
    std::vector<std::unique_ptr<Command>> m_commands;
};

} // namespace flashstock
