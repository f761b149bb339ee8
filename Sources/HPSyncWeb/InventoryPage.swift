import HPSyncModel
import HPSyncStore

/// What the inventory page was asked for: the store query plus grid or table.
struct InventoryRequest: Sendable, Equatable {
    static let pageSize = 60

    var query: BrowseQuery
    var table: Bool

    /// Reads `q`, `sort` (name, value, date), `dir` (asc, desc), `page` (1-based) and `view`.
    /// Unknown values fall back to the defaults: a hand-edited URL still shows the inventory.
    init(parameters: [String: String]) throws(WebError) {
        let order = parameters["sort"].flatMap(BrowseOrder.init(rawValue:)) ?? .date
        let descending = parameters["dir"].map { $0 != "asc" } ?? (order != .name)
        var page = 1
        if let text = parameters["page"], !text.isEmpty {
            guard let number = Int(text), number >= 1, number <= 10_000_000 else {
                throw .badRequest("The page number '\(text)' is not a page; pages count from 1.")
            }
            page = number
        }
        let search = parameters["q"] ?? ""
        guard search.utf8.count <= 1024 else { throw .badRequest("The search is too long (1,024 bytes at most).") }
        query = BrowseQuery(
            search: search, order: order, descending: descending, page: page - 1, pageSize: Self.pageSize)
        table = parameters["view"] == "table"
    }

    /// The URL of this listing with some parameters changed.
    func url(page: Int? = nil, table: Bool? = nil) -> String {
        var parts: [String] = []
        if !query.search.isEmpty { parts.append("q=" + Format.query(query.search)) }
        parts.append("sort=\(query.order.rawValue)")
        parts.append("dir=\(query.descending ? "desc" : "asc")")
        if table ?? self.table { parts.append("view=table") }
        let number = page ?? (query.page + 1)
        if number > 1 { parts.append("page=\(number)") }
        return "/?" + parts.joined(separator: "&")
    }
}

/// The inventory: Homepwner's list as a grid of photo cards or a table, with search, sort,
/// pages, the count and total value, and ColorCollection's select-and-remove.
enum InventoryPage {
    /// `missingPhotos`: the shown items whose record names a photo with no intact file; their card
    /// says "Photo missing" instead of showing a broken image.
    static func render(
        _ request: InventoryRequest, _ page: BrowsePage, missingPhotos: Set<ItemKey> = [], csrf: String,
        notice: HTML? = nil
    ) -> HTML {
        let query = request.query
        let searching = !query.search.trimmingCharacters(in: .whitespaces).isEmpty
        let totals: HTML =
            searching
            ? "<strong>\(page.matching)</strong> of \(page.total) items match · \(Format.dollars(page.matchingValue)) of \(Format.dollars(page.totalValue))"
            : "<strong>\(page.total)</strong> item\(page.total == 1 ? "" : "s") · total value <strong>\(Format.dollars(page.totalValue))</strong>"
        let pages = max(1, (page.matching + query.pageSize - 1) / query.pageSize)
        let body: HTML
        if page.items.isEmpty {
            body =
                searching
                ? "<p class=\"panel\">Nothing matches “\(query.search)”.</p>"
                : "<p class=\"panel\">No items yet. <a href=\"/new\">Add the first one</a>.</p>"
        } else {
            body = request.table ? table(page.items, missing: missingPhotos) : grid(page.items, missing: missingPhotos)
        }
        return Layout.page(
            title: "Inventory", notice: notice,
            body: """
                <h1>Inventory</h1>
                <p class="totals" id="totals">\(totals)</p>
                \(toolbar(request))
                <form id="selection" method="post" action="/remove">\(Layout.csrfField(csrf))
                <div class="toolbar">
                <button type="button" id="select-mode" hidden>Select</button>
                <button type="submit" class="danger" id="remove-selected">Remove selected</button>
                <a class="button" href="\(request.url(page: 1, table: !request.table))">\(request.table ? "Photo grid" : "Table")</a>
                </div></form>
                \(body)
                \(pager(request, pages: pages))
                """)
    }

    private static func toolbar(_ request: InventoryRequest) -> HTML {
        let query = request.query
        func option(_ value: String, _ label: String, _ selected: Bool) -> HTML {
            "<option value=\"\(value)\"\(selected ? HTML(trusted: " selected") : .empty)>\(label)</option>"
        }
        let view: HTML = request.table ? "<input type=\"hidden\" name=\"view\" value=\"table\">" : .empty
        return """
            <form class="toolbar" method="get" action="/" role="search">
            <input type="search" name="q" value="\(query.search)" placeholder="Search name or serial" aria-label="Search">
            <select name="sort" aria-label="Sort by">\(option("date", "Date added", query.order == .date))\(option("name", "Name", query.order == .name))\(option("value", "Value", query.order == .value))</select>
            <select name="dir" aria-label="Order">\(option("desc", "Descending", query.descending))\(option("asc", "Ascending", !query.descending))</select>
            \(view)<button type="submit">Search</button>
            </form>
            """
    }

    static func grid(_ items: [Item], missing: Set<ItemKey> = []) -> HTML {
        let cards = items.map { item -> HTML in
            let photo: HTML =
                missing.contains(item.key)
                ? "<span class=\"nophoto missing\" title=\"Repair with \(Store.repairCommand)\">Photo missing</span>"
                : item.image.map { "<img src=\"\(imageURL($0))\" alt=\"\" loading=\"lazy\" decoding=\"async\">" }
                    ?? "<span class=\"nophoto\">No photo</span>"
            let serial: HTML = item.serialNumber.map { "<span class=\"serial\">\($0)</span>" } ?? .empty
            return """
                <div class="card" data-key="\(item.key.rawValue)">
                <label class="pick" title="Select"><input type="checkbox" name="key" value="\(item.key.rawValue)" form="selection" aria-label="Select \(item.name)"></label>
                <a href="/items/\(item.key.rawValue)">\(photo)<span class="meta"><span class="name">\(item.name)</span><span class="value">\(Format.dollars(item.valueInDollars))</span>\(serial)</span></a>
                </div>
                """
        }
        return "<div class=\"grid\" id=\"items\">\(cards)</div>"
    }

    static func table(_ items: [Item], missing: Set<ItemKey> = []) -> HTML {
        let rows = items.map { item -> HTML in
            let photo: HTML =
                missing.contains(item.key)
                ? "<span class=\"missing\" title=\"Repair with \(Store.repairCommand)\">missing</span>"
                : item.image.map { "<img class=\"thumb\" src=\"\(imageURL($0))\" alt=\"\" loading=\"lazy\">" } ?? .empty
            return """
                <tr><td><input type="checkbox" name="key" value="\(item.key.rawValue)" form="selection" aria-label="Select \(item.name)"></td>
                <td>\(photo)</td><td><a href="/items/\(item.key.rawValue)">\(item.name)</a></td>
                <td>\(item.serialNumber ?? "")</td><td class="num">\(Format.dollars(item.valueInDollars))</td>
                <td>\(String(DateText.iso8601(milliseconds: item.dateCreatedMilliseconds).prefix(10)))</td></tr>
                """
        }
        return """
            <table id="items"><thead><tr><th></th><th>Photo</th><th>Name</th><th>Serial</th><th class="num">Value</th><th>Created</th></tr></thead>
            <tbody>\(rows)</tbody></table>
            """
    }

    private static func pager(_ request: InventoryRequest, pages: Int) -> HTML {
        let current = request.query.page + 1
        guard pages > 1 || current > 1 else { return .empty }
        let previous: HTML =
            current > 1 ? "<a href=\"\(request.url(page: current - 1))\" rel=\"prev\">← Previous</a>" : .empty
        let next: HTML =
            current < pages ? "<a href=\"\(request.url(page: current + 1))\" rel=\"next\">Next →</a>" : .empty
        return "<nav class=\"pages\">\(previous)<span>Page \(current) of \(pages)</span>\(next)</nav>"
    }

    /// Images are addressed by digest: a new photo is a new URL, so each may be cached for good.
    static func imageURL(_ image: ImageRef) -> String { "/image/\(image.digest.hex)" }
}
