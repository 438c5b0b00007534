#pragma once

#include <QString>

class QAction;
class QTableView;

namespace flashstock {

/// Copy and CSV export of a table as the operator sees it: the rows the view shows, in its
/// order (filters and sorting applied), its visible columns, with the header. Cells are the
/// model's ExportRole (numbers plain, times ISO 8601 UTC, empty for no value; a QStringList
/// is one field each, named by the header's ExportRole), else the displayed text. A field
/// that a spreadsheet would run as a formula (starting with =, +, @, or - and not a number)
/// is written with a leading apostrophe. GUI thread.
class TableExport {
public:
    /// Gives `view` a context menu with Copy (Ctrl+C while the table has focus: the selected
    /// rows, else all, tab-separated) and Export CSV... (a file dialog; the file name starts
    /// with `fileStem`). Returns the export action, owned by the view, for a toolbar.
    static QAction *install(QTableView *view, const QString &fileStem);
    /// The table as CSV (RFC 4180, CRLF line ends); `selectedOnly`: the selected rows.
    static QString csv(const QTableView *view, bool selectedOnly = false);
    /// The table as tab-separated text, as Copy puts it on the clipboard.
    static QString tsv(const QTableView *view, bool selectedOnly = false);
    /// Writes csv(view) to `path` (UTF-8), a file the user alone may read (0600, also when it
    /// existed). False, with `error` set, if it cannot.
    static bool writeCsv(const QTableView *view, const QString &path, QString *error = nullptr);
    /// Copies the selected rows (else all) as tsv() to the clipboard.
    static void copy(const QTableView *view);
};

} // namespace flashstock
