#include "TableExport.h"

#include "models/ModelRoles.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QMessageBox>
#include <QTableView>

using namespace Qt::StringLiterals;

namespace flashstock {

namespace {

/// One field's text for export, made harmless for spreadsheets.
QString harmless(QString text)
{
    if (!text.isEmpty()) {
        const QChar c = text.front();
        bool number = false;
        text.toDouble(&number);
        if (c == u'=' || c == u'+' || c == u'@' || c == u'\t' || c == u'\r' || (c == u'-' && !number))
            text.prepend(u'\'');
    }
    return text;
}

/// The cell's fields for export: one, or several for a column the model exports as a list.
QStringList exportCell(const QModelIndex &index)
{
    QVariant v = index.data(ExportRole);
    if (!v.isValid())
        v = index.data(Qt::DisplayRole);
    QStringList fields = v.metaType().id() == QMetaType::QStringList ? v.toStringList() : QStringList{v.toString()};
    for (QString &f : fields)
        f = harmless(f);
    return fields;
}

/// The header of `column`: one name, or one per field of a column exported as several.
QStringList exportHeader(const QAbstractItemModel *model, int column)
{
    const QVariant names = model->headerData(column, Qt::Horizontal, ExportRole);
    if (names.metaType().id() == QMetaType::QStringList)
        return names.toStringList();
    return {model->headerData(column, Qt::Horizontal).toString()};
}

QString csvField(const QString &text)
{
    if (!text.contains(u',') && !text.contains(u'"') && !text.contains(u'\n') && !text.contains(u'\r'))
        return text;
    return u'"' + QString(text).replace(u"\""_s, u"\"\""_s) + u'"';
}

QString tsvField(QString text)
{
    return text.replace(u'\t', u' ').replace(u'\n', u' ').replace(u'\r', u' ');
}

/// Header and rows of the view, visible columns in visual order, through `field`.
QString table(const QTableView *view, bool selectedOnly, QString (*field)(QString), const QString &sep,
              const QString &eol)
{
    const QAbstractItemModel *model = view->model();
    const QHeaderView *header = view->horizontalHeader();
    QList<int> columns;
    for (int visual = 0; visual < header->count(); ++visual) {
        const int logical = header->logicalIndex(visual);
        if (!view->isColumnHidden(logical))
            columns << logical;
    }
    QList<int> rows;
    if (selectedOnly && view->selectionModel()) {
        for (const QModelIndex &i : view->selectionModel()->selectedRows())
            rows << i.row();
        std::sort(rows.begin(), rows.end());
    }
    if (rows.isEmpty()) {
        for (int r = 0; r < model->rowCount(); ++r)
            if (!view->isRowHidden(r))
                rows << r;
    }
    QStringList lines;
    QStringList cells;
    for (int c : std::as_const(columns))
        for (const QString &name : exportHeader(model, c))
            cells << field(name);
    lines << cells.join(sep);
    for (int r : std::as_const(rows)) {
        cells.clear();
        for (int c : std::as_const(columns))
            for (const QString &text : exportCell(model->index(r, c)))
                cells << field(text);
        lines << cells.join(sep);
    }
    return lines.join(eol) + eol;
}

QString csvFieldOf(QString text) { return csvField(text); }

} // namespace

QString TableExport::csv(const QTableView *view, bool selectedOnly)
{
    return table(view, selectedOnly, &csvFieldOf, u","_s, u"\r\n"_s);
}

QString TableExport::tsv(const QTableView *view, bool selectedOnly)
{
    return table(view, selectedOnly, &tsvField, u"\t"_s, u"\n"_s);
}

bool TableExport::writeCsv(const QTableView *view, const QString &path, QString *error)
{
    // The user's alone, like every file FlashStock creates: a new file is made 0600, and a
    // file written over is made so before anything goes into it.
    constexpr QFileDevice::Permissions kPrivate = QFileDevice::ReadOwner | QFileDevice::WriteOwner;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate, kPrivate) || !f.setPermissions(kPrivate)
        || f.write(csv(view).toUtf8()) < 0 || !f.flush()) {
        if (error)
            *error = f.errorString();
        return false;
    }
    return true;
}

void TableExport::copy(const QTableView *view)
{
    QApplication::clipboard()->setText(tsv(view, view->selectionModel() && view->selectionModel()->hasSelection()));
}

QAction *TableExport::install(QTableView *view, const QString &fileStem)
{
    auto *copyAction = new QAction(QObject::tr("&Copy rows"), view);
    copyAction->setShortcut(QKeySequence::Copy);
    copyAction->setShortcutContext(Qt::WidgetShortcut);
    copyAction->setToolTip(QObject::tr("Copy the selected rows (or all) as tab-separated text (Ctrl+C)"));
    QObject::connect(copyAction, &QAction::triggered, view, [view] { copy(view); });
    auto *exportAction = new QAction(QObject::tr("E&xport CSV…"), view);
    exportAction->setToolTip(QObject::tr("Save the rows shown as a CSV file (times in UTC)"));
    QObject::connect(exportAction, &QAction::triggered, view, [view, fileStem] {
        const QString suggested = QDir::home().filePath(
            u"%1-%2.csv"_s.arg(fileStem, QDateTime::currentDateTimeUtc().toString(u"yyyyMMdd-HHmmss"_s)));
        const QString path = QFileDialog::getSaveFileName(view, QObject::tr("Export CSV"), suggested,
                                                          QObject::tr("CSV files (*.csv)"));
        if (path.isEmpty())
            return;
        QString error;
        if (!writeCsv(view, path, &error))
            QMessageBox::warning(view, QObject::tr("Export CSV"),
                                 QObject::tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), error));
    });
    view->addAction(copyAction);
    view->addAction(exportAction);
    view->setContextMenuPolicy(Qt::ActionsContextMenu);
    return exportAction;
}

} // namespace flashstock
