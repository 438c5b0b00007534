#include "CompletionCommand.h"

#include "Cli.h"
#include "CliDocs.h"
#include "Identifiers.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

struct Completion final : Command {
    explicit Completion(const Cli &cli)
        : Command({{u"completion"_s}, u"completion (bash | zsh)"_s,
                   u"print a completion script for this command table: bash (source it, or install it as "
                   u"/usr/share/bash-completion/completions/flashstock-cli) or zsh (install it as _flashstock-cli in "
                   u"a directory of $fpath, e.g. /usr/share/zsh/vendor-completions)"_s,
                   {}}),
          m_cli(cli)
    {
    }
    CommandOutput execute(CliContext &ctx, const QCommandLineParser &parser, const QStringList &args) override;

private:
    const Cli &m_cli;
};

CommandOutput Completion::execute(CliContext &, const QCommandLineParser &, const QStringList &args)
{
    if (args != QStringList{u"bash"_s} && args != QStringList{u"zsh"_s})
        return errorOutput({ErrorCode::InvalidArgument,
                            u"shell: expected bash or zsh, got %1 (usage: completion (bash | zsh))"_s.arg(
                                args.isEmpty() ? u"nothing"_s : quoteForMessage(args.join(u' '))),
                            u"shell"_s});
    CommandOutput out;
    out.text = args.first() == u"bash"_s ? cliBashCompletion(m_cli) : cliZshCompletion(m_cli);
    out.json = {{u"shell"_s, args.first()}, {u"script"_s, out.text}};
    return out;
}

} // namespace

std::unique_ptr<Command> completionCommand(const Cli &cli)
{
    return std::make_unique<Completion>(cli);
}

} // namespace flashstock
