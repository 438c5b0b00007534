#pragma once

#include <QString>

namespace flashstock {

/// The project version (CMake's PROJECT_VERSION), e.g. "0.1.0".
QString buildVersion();
/// The git revision the binary was built from (`git describe --always --dirty`), or "unknown"
/// when it was built outside a git checkout. Recorded at build time.
QString buildRevision();
/// What `--version` prints after the program name: "0.1.0 (git 9a88c01d2e3f)".
QString versionLine();

} // namespace flashstock
