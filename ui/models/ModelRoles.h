#pragma once

#include <Qt>

namespace flashstock {

/// Roles the console's table models answer besides the standard ones.
enum ModelRole {
    /// The cell's raw value (number, id, ms since the epoch) for sorting, filtering and tests.
    RawRole = Qt::UserRole + 1,
};

} // namespace flashstock
