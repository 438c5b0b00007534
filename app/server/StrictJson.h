#pragma once

#include "Result.h"

#include <QByteArrayView>

namespace flashstock::server {

/// What a request body must also be, beyond well-formed JSON, so that it has one meaning
/// whoever reads it (a gateway in front, QJsonDocument here): no object gives a key twice
/// (QJsonDocument keeps the last, a gateway may check the first; `"us\u0065r"` is `"user"`),
/// and every number is written as an integer, digits with an optional minus (QJsonDocument
/// reads `0.99999999999999999` as 1; no field of API v1 takes a fraction). Checks the raw
/// text of a body that QJsonDocument parsed already (so it is well-formed JSON, nested at
/// most 1024 deep). InvalidArgument naming the field (`lines[0].qty`,
/// `reservations[3].user`) and the value. Any thread; allocates nothing for an object of up
/// to 16 keys without escapes, except for an error.
[[nodiscard]] Result<void> checkOneMeaning(QByteArrayView json);

} // namespace flashstock::server
