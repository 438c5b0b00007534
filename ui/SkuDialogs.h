#pragma once

#include "ConsoleTypes.h"

#include <QDialog>

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace flashstock {

/// A dialog that changes one SKU's stock or buckets (SKUs view, launch wizard): its form,
/// then "What will change" (the figures before and after, ledgered in whose name), and a
/// confirm button that says what it does and is enabled only for valid input. Return
/// confirms. The dialog is always as high as its wrapped summary needs at its width, so no
/// field is squashed. Touches no engine: the caller sends change() on accept. GUI thread.
class SkuChangeDialog : public QDialog {
    Q_OBJECT
public:
    /// The change as entered.
    virtual SkuChange change() const = 0;
    QPushButton *confirmButton() const { return m_confirm; }
    /// The "what will change" text as shown.
    QString summary() const;

protected:
    SkuChangeDialog(const QString &title, const QString &operatorName, QWidget *parent);
    QFormLayout *form() const { return m_form; }
    /// Adds the summary and the buttons below the form; call once the form is filled.
    void finish(const QString &confirmText);
    /// Shows `summary`; `ok` enables the confirm button, with `confirmText` on it.
    void setSummary(const QString &summary, bool ok, const QString &confirmText = {});
    const QString &operatorName() const { return m_operator; }
    void showEvent(QShowEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    /// At least the height the layout needs at the dialog's width: a window's minimum size
    /// is its layout's, which leaves a word-wrapped label out.
    void fitHeight();

    QString m_operator;
    QFormLayout *m_form = nullptr;
    QLabel *m_summary = nullptr;
    QPushButton *m_confirm = nullptr;
};

/// Add a SKU: id, initial stock, buckets.
class AddSkuDialog : public SkuChangeDialog {
    Q_OBJECT
public:
    /// `existing`: SKU ids already in the book (refused as duplicates).
    AddSkuDialog(const QStringList &existing, const QString &operatorName, QWidget *parent = nullptr);
    SkuChange change() const override;
    QLineEdit *skuField() const { return m_sku; }
    QSpinBox *stockField() const { return m_stock; }
    QSpinBox *bucketsField() const { return m_buckets; }

private:
    void refresh();
    QStringList m_existing;
    QLineEdit *m_sku = nullptr;
    QSpinBox *m_stock = nullptr;
    QSpinBox *m_buckets = nullptr;
};

/// Restock a SKU: units to add and the reason (required), for the ledger.
class RestockDialog : public SkuChangeDialog {
    Q_OBJECT
public:
    RestockDialog(const SkuSample &sku, const QString &operatorName, QWidget *parent = nullptr);
    SkuChange change() const override;
    QSpinBox *qtyField() const { return m_qty; }
    QLineEdit *reasonField() const { return m_reason; }

private:
    void refresh();
    SkuSample m_sku;
    QSpinBox *m_qty = nullptr;
    QLineEdit *m_reason = nullptr;
};

/// Change a SKU's number of buckets (available units spread evenly again).
class BucketsDialog : public SkuChangeDialog {
    Q_OBJECT
public:
    BucketsDialog(const SkuSample &sku, const QString &operatorName, QWidget *parent = nullptr);
    SkuChange change() const override;
    QSpinBox *countField() const { return m_count; }

private:
    void refresh();
    SkuSample m_sku;
    QSpinBox *m_count = nullptr;
};

/// Move available units of a SKU from one bucket to another.
class RebalanceDialog : public SkuChangeDialog {
    Q_OBJECT
public:
    RebalanceDialog(const SkuSample &sku, const QString &operatorName, QWidget *parent = nullptr);
    SkuChange change() const override;
    QComboBox *fromField() const { return m_from; }
    QComboBox *toField() const { return m_to; }
    QSpinBox *qtyField() const { return m_qty; }

private:
    void refresh();
    SkuSample m_sku;
    QComboBox *m_from = nullptr;
    QComboBox *m_to = nullptr;
    QSpinBox *m_qty = nullptr;
};

} // namespace flashstock
