#pragma once

#include <QtGlobal>

namespace flashstock {

/// Marks every file descriptor of this process above stderr close-on-exec, so that no
/// program started after it inherits one (book and gate sockets, lock files, a lock a
/// parent handed down such as `flock`'s). Call it right before starting a child that
/// outlives this process: the daemonized embedded redis-server, a server the drill starts
/// again. This process keeps using its descriptors as before; FlashStock never passes one
/// on to a child on purpose (QProcess's own pipes become the child's 0-2). Qt 6.4 has no
/// setting for it (Qt 6.6's UnixProcessParameters), and its startDetached() runs no child
/// process modifier, so it is done here, in the parent: close_range(2)'s CLOSE_RANGE_CLOEXEC
/// (Linux 5.11), else each descriptor listed in /proc/self/fd. Any thread.
void closeDescriptorsOnExec();

/// True once every thread of process `pid` has exited, so that the kernel has closed its
/// descriptors (a listening socket another process may now bind, locks): no such process,
/// or a zombie its parent has not reaped yet whose only thread left is that zombie leader.
/// A leader that is a zombie while other threads still run their exit (a process killed
/// with SIGKILL, for a few milliseconds, longer on a busy machine) is not gone: its
/// descriptors are still open. Linux (/proc/PID/status).
bool processGone(qint64 pid);

} // namespace flashstock
