#include "gate/GateHealth.h"

using namespace Qt::StringLiterals;

namespace flashstock {

QString gateNodeRoleName(GateNodeHealth::Role role)
{
    switch (role) {
    case GateNodeHealth::Role::Single: return u"single"_s;
    case GateNodeHealth::Role::Master: return u"master"_s;
    case GateNodeHealth::Role::Replica: return u"replica"_s;
    }
    return u"single"_s;
}

} // namespace flashstock
