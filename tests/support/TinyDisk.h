#pragma once

#include <QString>
#include <QTemporaryDir>

namespace flashstock::test {

/// A tiny filesystem of its own (tmpfs of `kib` KiB, mode 0700) mounted on a temporary
/// directory, so a book on it runs out of disk for real. Mounting needs root (as CI runs);
/// without it the test fails under CI and is skipped elsewhere (test::missingServerFails).
/// fill() takes every free block with a file of its own; makeRoom() gives them back. The
/// destructor unmounts. Thread affinity: none (plain files).
class TinyDisk {
public:
    explicit TinyDisk(qint64 kib);
    ~TinyDisk();
    TinyDisk(const TinyDisk &) = delete;
    TinyDisk &operator=(const TinyDisk &) = delete;

    /// Empty when mounted; else why not.
    QString problem() const { return m_problem; }
    /// True when it cannot be mounted on a developer machine (the test should QSKIP).
    bool skip() const { return m_skip; }
    /// The mount point (put the book here).
    QString path() const { return m_dir.path(); }
    /// Writes a filler file until the filesystem refuses (ENOSPC); false if it never did.
    bool fill();
    /// Deletes the filler: the blocks are free again.
    bool makeRoom();

private:
    QTemporaryDir m_dir;
    QString m_problem;
    bool m_skip = false;
    bool m_mounted = false;
};

} // namespace flashstock::test

/// Mounts a TinyDisk named `var` of `kib` KiB, or fails/skips the test.
#define FS_TINY_DISK(var, kib)                                                                                          \
    flashstock::test::TinyDisk var(kib);                                                                                \
    if (var.skip())                                                                                                     \
        QSKIP(qPrintable(var.problem()));                                                                               \
    if (!var.problem().isEmpty())                                                                                       \
        QFAIL(qPrintable(var.problem()))
