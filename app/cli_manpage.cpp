// cli-manpage: a build tool that prints flashstock-cli(1) in roff, from the command table
// that `flashstock-cli --help` prints (so the page cannot drift from the binary).

#include "cli/Cli.h"
#include "cli/CliDocs.h"

#include <cstdio>

int main()
{
    const flashstock::Cli cli;
    std::fputs(flashstock::cliManPage(cli).toUtf8().constData(), stdout);
    return 0;
}
