#include "CompletionCommand.h"

#include "Cli.h"
#include "CliDocs.h"
#include "Identifiers.h"

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

struct Completion final : Command {
    explicit Completion(const Cli &cli)
        : Command({{u"completion"_s}, u"completion bash"_s,
                   u"print a bash completion script for this command table (source it, or install it as "
                   u"/usr/share/bash-completion/completions/flashstock-cli)"_s,
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
    if (args != QStringList{u"bash"_s})
        return errorOutput({ErrorCode::InvalidArgument,
                            u"shell: expected bash, got %1 (usage: completion bash)"_s.arg(
                                args.isEmpty() ? u"nothing"_s : quoteForMessage(args.join(u' '))),
                            u"shell"_s});
    CommandOutput out;
    out.text = cliBashCompletion(m_cli);
    out.json = {{u"shell"_s, u"bash"_s}, {u"script"_s, out.text}};
    return out;
}

} // namespace

std::unique_ptr<Command> completionCommand(const Cli &cli)
{
    return std::make_unique<Completion>(cli);
}

} // namespace flashstock
