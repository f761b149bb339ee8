import HPSyncModel

/// The field merge's answer (Protocol.md 5.9) for a history, worked out from its edits alone.
///
/// Every local change is one edit per field it sets, at the change's version, with the base its
/// node held for that field (nil for a new key, and for `clock reset`, which restamps an item
/// whole); a deletion is a version of its own. Once every node has seen every edit, a field
/// holds the edits no other edit dominates (Protocol.md 5.9: a known base at or above the
/// version, or an unknown base and a newer version): the greatest is its value, the others its
/// open conflicts. The item is deleted when its latest deletion is above every field's value.
struct FieldMergeOracle {
    struct Edit: Hashable {
        var field: ItemField
        var content: FieldContent
        var version: Version
        var base: Version?
        /// The real time (test milliseconds) when it was made.
        var madeAt: UInt64
    }

    struct Deletion: Hashable {
        var version: Version
        var madeAt: UInt64
        /// A node's gc dropped its tombstone: a stamp from the future then stays (as that
        /// node's horizon), no `clock reset` restamps it.
        var collected = false
    }

    /// The real time now: each edit and deletion recorded is made at it.
    var now: UInt64 = 0
    /// Per key, every field edit made.
    private(set) var edits: [ItemKey: [Edit]] = [:]
    /// Per key, every deletion made.
    private(set) var deletions: [ItemKey: [Deletion]] = [:]
    /// Per key, the versions a `clock reset` restamped on the last node that held them: gone
    /// from every node, so no later sync brings them back.
    private(set) var gone: [ItemKey: Set<Version>] = [:]

    /// A reset restamped `version` of `key` on the last node holding it.
    mutating func forget(_ key: ItemKey, _ version: Version) {
        gone[key, default: []].insert(version)
    }

    /// A local change that set `fields` to `item`'s values at `item.version`, on a node whose
    /// state of the key was `before` (nil: the node had no row for it).
    mutating func change(_ item: Item, fields: [ItemField], before: ItemMergeState?) {
        for field in fields {
            edits[item.key, default: []].append(
                Edit(
                    field: field, content: Self.content(of: field, in: item), version: item.version,
                    base: before.flatMap { Self.version(of: field, in: $0) }, madeAt: now))
        }
    }

    mutating func delete(_ key: ItemKey, at version: Version) {
        deletions[key, default: []].append(Deletion(version: version, madeAt: now))
    }

    /// A node's gc dropped the tombstone of `key` at `version`.
    mutating func collect(_ key: ItemKey, at version: Version) {
        for index in deletions[key]?.indices ?? [].indices where deletions[key]![index].version == version {
            deletions[key]![index].collected = true
        }
    }

    /// Whether a deletion of `key` was made at `version`.
    func deleted(_ key: ItemKey, at version: Version) -> Bool {
        deletions[key]?.contains { $0.version == version } == true
    }

    /// A version `clock reset` wrote: a whole record (every field, its base unknown), or a
    /// tombstone, after its fields (those it held) set again at a version of their own, as a
    /// whole record sets them.
    mutating func restamp(_ state: ItemMergeState) {
        let item = state.item
        guard item.deleted else { return change(item, fields: ItemField.allCases, before: nil) }
        for field in ItemField.allCases {
            guard let version = Self.version(of: field, in: state) else { continue }
            edits[item.key, default: []].append(
                Edit(
                    field: field, content: Self.content(of: field, in: state), version: version, base: nil, madeAt: now)
            )
        }
        delete(item.key, at: item.version)
    }

    /// The items and open conflicts every node must hold, leaving out the versions a `clock
    /// reset` restamped: those stamped after `limit` milliseconds (the final reset restamps them
    /// on every node) and those an earlier reset took from the last node holding them.
    func expected(stampedUpTo limit: UInt64) -> (items: [Item], conflicts: Set<FieldConflict>) {
        var items: [Item] = []
        var conflicts = Set<FieldConflict>()
        for key in Set(edits.keys).union(deletions.keys).sorted() {
            let lost = gone[key] ?? []
            let kept = (edits[key] ?? []).filter {
                !lost.contains($0.version) && $0.version.stamp.milliseconds <= limit
            }
            let deletion = (deletions[key] ?? []).filter {
                !lost.contains($0.version) && ($0.collected || $0.version.stamp.milliseconds <= limit)
            }
            .map(\.version).max()
            var winners: [ItemField: Edit] = [:]
            var losers: [Edit] = []
            for field in ItemField.allCases {
                let candidates = kept.filter { $0.field == field }
                let maximal = candidates.filter { edit in !candidates.contains { Self.dominates($0, edit) } }
                    .sorted { $0.version > $1.version }
                guard let winner = maximal.first else { continue }
                winners[field] = winner
                losers += maximal.dropFirst()
            }
            let fieldVersion = winners.values.map(\.version).max()
            guard let version = [fieldVersion, deletion].compactMap({ $0 }).max() else { continue }
            if let deletion, fieldVersion.map({ deletion > $0 }) ?? true {
                items.append(.tombstone(key: key, version: version))
                continue
            }
            items.append(Self.item(key, winners, version: version))
            for loser in losers {
                let winner = winners[loser.field]!
                // Two concurrent edits that set one value are no clash.
                guard loser.content != winner.content else { continue }
                conflicts.insert(
                    FieldConflict(
                        key: key, field: loser.field, kept: winner.content, keptVersion: winner.version,
                        losing: loser.content, losingVersion: loser.version))
            }
        }
        return (items, conflicts)
    }

    /// Whether `other`'s editor had seen `edit` (a known base at or above its version), or, with
    /// its base unknown, `other` is simply newer.
    static func dominates(_ other: Edit, _ edit: Edit) -> Bool {
        if let base = other.base { return edit.version <= base }
        return edit.version < other.version
    }

    static func content(of field: ItemField, in item: Item) -> FieldContent {
        switch field {
        case .name: .text(item.name)
        case .serialNumber: .optionalText(item.serialNumber)
        case .valueInDollars: .integer(item.valueInDollars)
        case .dateCreated: .integer(item.dateCreatedMilliseconds)
        case .photo: .photo(item.image)
        }
    }

    /// The value `field` holds in `state` (its winner's); the state must hold one.
    static func content(of field: ItemField, in state: ItemMergeState) -> FieldContent {
        switch field {
        case .name: .text(state.name.winner!.value)
        case .serialNumber: .optionalText(state.serialNumber.winner!.value)
        case .valueInDollars: .integer(state.valueInDollars.winner!.value)
        case .dateCreated: .integer(state.dateCreated.winner!.value)
        case .photo: .photo(state.photo.winner!.value)
        }
    }

    static func version(of field: ItemField, in state: ItemMergeState) -> Version? {
        switch field {
        case .name: state.name.version
        case .serialNumber: state.serialNumber.version
        case .valueInDollars: state.valueInDollars.version
        case .dateCreated: state.dateCreated.version
        case .photo: state.photo.version
        }
    }

    static func item(_ key: ItemKey, _ winners: [ItemField: Edit], version: Version) -> Item {
        var item = Item(key: key, name: "", dateCreatedMilliseconds: 0, version: version)
        for (field, edit) in winners {
            switch (field, edit.content) {
            case (.name, .text(let name)): item.name = name
            case (.serialNumber, .optionalText(let serial)): item.serialNumber = serial
            case (.valueInDollars, .integer(let value)): item.valueInDollars = value
            case (.dateCreated, .integer(let date)): item.dateCreatedMilliseconds = date
            case (.photo, .photo(let ref)): item.image = ref
            default: preconditionFailure("\(field) holds \(edit.content)")
            }
        }
        return item
    }
}
