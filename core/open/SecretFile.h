#pragma once

#include "Result.h"

#include <QString>

namespace flashstock {

/// The secret in file `path` (a password or key): its first line, without the line break.
/// `field` names the option it came from (e.g. `db-password-file`) in errors. InvalidArgument,
/// reading nothing, if `path` is not a regular file (after symlinks), is readable or writable
/// by group or others (it must be 0600 or 0400; systemd's LoadCredential= files are), or
/// holds no secret; Unavailable if it cannot be read. Any thread.
[[nodiscard]] Result<QString> readSecretFile(const QString &path, const QString &field);

/// The secret for `field`: from file `file` (readSecretFile) if given, else environment
/// variable `envVar` (empty string if unset). The one rule every binary's secrets follow.
[[nodiscard]] Result<QString> secretFromFileOrEnvironment(const QString &file, const QString &field,
                                                          const char *envVar);

} // namespace flashstock
