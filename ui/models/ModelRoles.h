#pragma once

#include <Qt>

namespace flashstock {

/// Roles the console's table models answer besides the standard ones.
enum ModelRole {
    /// The cell's raw value (number, id, ms since the epoch) for sorting, filtering and tests.
    RawRole = Qt::UserRole + 1,
    /// The cell as copied or exported (TableExport): numbers plain (no group separators),
    /// times ISO 8601 UTC, empty where there is no value; a model that does not answer it is
    /// exported as displayed. A QStringList is a column exported as several fields, named
    /// by the header's ExportRole (a QStringList of the same length).
    ExportRole,
};

} // namespace flashstock
