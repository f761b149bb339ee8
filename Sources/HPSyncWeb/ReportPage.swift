import HPSyncModel
import HPSyncStore

/// The insurance report: every live item with its photo, name, serial, value and date, and the
/// totals, laid out for paper by the print stylesheet ("Print / Save as PDF").
enum ReportPage {
    static func render(items: [Item], generatedAt: Int64, nodeID: String) -> HTML {
        // Exact whatever the store holds: rows from before the value range may be near Int64's limits.
        var total = DollarTotal()
        let rows = items.map { item -> HTML in
            total.add(item.valueInDollars)
            let photo: HTML =
                item.image.map { "<img src=\"\(InventoryPage.imageURL($0))\" alt=\"Photo of \(item.name)\">" }
                ?? "<span class=\"muted\">no photo</span>"
            return """
                <tr><td>\(photo)</td><td>\(item.name)</td><td>\(item.serialNumber ?? "—")</td>
                <td class="num">\(Format.dollars(item.valueInDollars))</td>
                <td>\(String(DateText.iso8601(milliseconds: item.dateCreatedMilliseconds).prefix(10)))</td></tr>
                """
        }
        let date = String(DateText.iso8601(milliseconds: generatedAt).prefix(10))
        return Layout.page(
            title: "Inventory report",
            body: """
                <div class="report">
                <h1>Home inventory report</h1>
                <p>Prepared \(date) from hp-sync node <code>\(nodeID)</code>: \(items.count) item\(items.count == 1 ? "" : "s"), total value <strong>\(Format.dollars(total))</strong>.</p>
                <p class="noprint"><button type="button" data-print>Print / Save as PDF</button> <span class="muted">(or your browser's Print command)</span></p>
                <table><thead><tr><th>Photo</th><th>Name</th><th>Serial number</th><th class="num">Value</th><th>Date created</th></tr></thead>
                <tbody>\(rows)</tbody>
                <tfoot><tr><td colspan="3">Total: \(items.count) item\(items.count == 1 ? "" : "s")</td><td class="num">\(Format.dollars(total))</td><td></td></tr></tfoot>
                </table></div>
                """)
    }
}
