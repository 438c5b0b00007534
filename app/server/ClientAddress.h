#pragma once

#include <QByteArray>
#include <QString>

#include <sys/socket.h>

namespace flashstock::server {

/// The key a client's connections are counted under for the per-address limit: an IPv4
/// address's 4 bytes; an IPv6 address's first 8, its /64 (one host is usually given a whole
/// /64, so each of its addresses is not another client); an IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.1`) as the IPv4 address. Empty for any other family or nullptr.
QByteArray clientKey(const sockaddr *address);

/// clientKey()'s key for people: `192.0.2.1`, `2001:db8::/64`; `-` for an empty key.
QString clientKeyText(const QByteArray &key);

} // namespace flashstock::server
