#include "support/TestChecks.h"

namespace flashstock::test {

bool missingServerFails()
{
    return qEnvironmentVariableIsSet("CI");
}

} // namespace flashstock::test
