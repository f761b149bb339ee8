import HPSyncModel

/// A broken property, with what shows it.
struct MergeViolation: Error, CustomStringConvertible {
    var description: String
    /// The nodes hold different items after the final syncs, each of them right by every other
    /// check (`checkWithOlderPeer`).
    var diverged = false
    init(_ description: String, diverged: Bool = false) {
        self.description = description
        self.diverged = diverged
    }
}

/// A candidate of any field, its value wrapped.
struct AnyCandidate: Hashable {
    var value: FieldContent
    var version: Version
    var base: Version?
}

extension MergeSimulation {
    static func candidates(of field: ItemField, in state: ItemMergeState) -> [AnyCandidate] {
        func wrap<Value>(_ field: FieldState<Value>, _ content: (Value) -> FieldContent) -> [AnyCandidate] {
            field.candidates.map { AnyCandidate(value: content($0.value), version: $0.version, base: $0.base) }
        }
        switch field {
        case .name: return wrap(state.name) { .text($0) }
        case .serialNumber: return wrap(state.serialNumber) { .optionalText($0) }
        case .valueInDollars: return wrap(state.valueInDollars) { .integer($0) }
        case .dateCreated: return wrap(state.dateCreated) { .integer($0) }
        case .photo: return wrap(state.photo) { .photo($0) }
        }
    }

    static func greatestStamp(in state: ItemMergeState) -> VersionStamp {
        var stamps = ItemField.allCases.flatMap { candidates(of: $0, in: state).map(\.version.stamp) }
        if let deletion = state.deletion { stamps.append(deletion.stamp) }
        return stamps.max() ?? .zero
    }

    /// Join is commutative, associative and idempotent on the states the nodes hold now.
    mutating func checkAlgebra() throws {
        let key = keys.randomElement(using: &generator)!
        let states = nodes.compactMap { $0.states[key] }
        guard states.count == 3 else { return }
        let (a, b, c) = (states[0], states[1], states[2])
        counts.algebraChecks += 1
        guard try a.joined(with: b) == b.joined(with: a) else { throw MergeViolation("join is not commutative") }
        guard try a.joined(with: b).joined(with: c) == a.joined(with: b.joined(with: c)) else {
            throw MergeViolation("join is not associative:\n  \(a)\n  \(b)\n  \(c)")
        }
        guard try a.joined(with: a) == a else { throw MergeViolation("join is not idempotent") }
    }

    /// The properties, after `settle()`: identical states everywhere, each field at its latest
    /// edit, the item deleted exactly when a deletion came last, and the open conflicts exactly
    /// the concurrent edits nobody saw before editing the field again.
    mutating func check() throws {
        for node in nodes.dropFirst() where node.states != nodes[0].states {
            throw MergeViolation("nodes differ after the final syncs:\n  \(nodes[0].states)\n  \(node.states)")
        }
        for key in keys {
            let keyEdits = edits.indices.filter { edits[$0].slot.key == key }
            guard !keyEdits.isEmpty else { continue }
            guard let state = nodes[0].states[key] else { throw MergeViolation("item \(key) is missing") }
            let latestEdit = keyEdits.map { edits[$0].version }.max()!
            let shouldBeDeleted = (deletions[key]?.max()).map { $0 > latestEdit } ?? false
            guard state.isDeleted == shouldBeDeleted else {
                throw MergeViolation("item \(key): deleted is \(state.isDeleted), its history says \(shouldBeDeleted)")
            }
            guard !shouldBeDeleted else {
                if !state.conflicts.isEmpty { throw MergeViolation("a deleted item lists conflicts") }
                continue
            }
            let listed = state.conflicts
            counts.clashesOpen += listed.count
            for field in ItemField.allCases {
                try checkField(
                    FieldSlot(key: key, field: field), in: state, listed: listed.filter { $0.field == field })
            }
        }
    }

    private func checkField(_ slot: FieldSlot, in state: ItemMergeState, listed: [FieldConflict]) throws {
        let slotEdits = edits.indices.filter { edits[$0].slot == slot }
        let latest = slotEdits.max { edits[$0].version < edits[$1].version }!
        let winner = Self.candidates(of: slot.field, in: state).first
        guard winner?.version == edits[latest].version, winner?.value == edits[latest].value else {
            throw MergeViolation(
                "\(slot.field) holds \(String(describing: winner)), its latest edit is \(edits[latest])")
        }
        // Superseded: some later edit of the field was made by a node that knew of it.
        let superseded = Set(slotEdits.flatMap { edits[$0].knewOf })
        let listedVersions = Set(listed.map(\.losingVersion))
        guard listedVersions.count == listed.count else { throw MergeViolation("a conflict is listed twice") }
        for conflict in listed {
            guard let index = slotEdits.first(where: { edits[$0].version == conflict.losingVersion }) else {
                throw MergeViolation("\(slot.field) lists a conflict no edit made: \(conflict)")
            }
            guard !superseded.contains(index), conflict.losing == edits[index].value else {
                throw MergeViolation("\(slot.field) lists \(conflict), which a later edit resolved")
            }
            guard conflict.losing != conflict.kept else {
                throw MergeViolation("\(slot.field) lists \(conflict), whose values are equal: no clash")
            }
        }
        // An edit nobody saw, above every base of the field, must be listed: no other value of
        // the field was made knowing it, so only the merge rule put it second. Unless it set the
        // latest edit's value: two concurrent edits that agree are no clash.
        let highestBase = slotEdits.compactMap { edits[$0].base }.max()
        for index in slotEdits
        where index != latest && !superseded.contains(index) && edits[index].value != edits[latest].value {
            if let highestBase, edits[index].version <= highestBase { continue }
            guard listedVersions.contains(edits[index].version) else {
                throw MergeViolation("\(slot.field): the concurrent edit \(edits[index]) is not listed")
            }
        }
    }
}

extension MergeSimulation {
    /// The properties with a version-4 peer, after `settle()` (Protocol.md 5.9 "Older peers"):
    /// on every node, each item is at its latest change, deleted exactly when that change is a
    /// deletion, and otherwise holds what that change set, every field a value some edit of it
    /// set; then, every node holds the same items (else a violation marked `diverged`). What the
    /// record-level syncs lose is counted, not refused: the fields of node 0 whose final value
    /// is not their latest edit's (`fieldsLost`).
    mutating func checkWithOlderPeer() throws {
        func name(_ node: Int) -> String { "node \(node)\(nodes[node].older ? " (version 4)" : "")" }
        for key in keys {
            let held = nodes.map { $0.states[key]?.item }
            let keyEdits = edits.filter { $0.slot.key == key }
            guard let latestEdit = keyEdits.map(\.version).max() else { continue }
            let latest = max(latestEdit, deletions[key]?.max() ?? latestEdit)
            for node in nodes.indices {
                guard let item = held[node] else { throw MergeViolation("item \(key) is missing on \(name(node))") }
                guard item.version == latest, item.deleted == (latest != latestEdit) else {
                    throw MergeViolation("\(name(node)) holds \(item), its latest change is at \(latest)")
                }
                if item.deleted { continue }
                let record = ItemMergeState(record: item)
                for field in ItemField.allCases {
                    let fieldEdits = keyEdits.filter { $0.slot.field == field }
                    guard let newest = fieldEdits.max(by: { $0.version < $1.version }) else { continue }
                    let value = Self.candidates(of: field, in: record)[0].value
                    if newest.version == latest, newest.value != value {
                        throw MergeViolation(
                            "\(name(node)), item \(key): \(field) holds \(value), the latest change set \(newest.value)"
                        )
                    }
                    guard fieldEdits.contains(where: { $0.value == value }) else {
                        throw MergeViolation("\(name(node)), item \(key): \(field) holds \(value), which no edit set")
                    }
                    if node == 0, newest.value != value { counts.fieldsLost += 1 }
                }
            }
            for node in 1..<nodes.count where held[node] != held[0] {
                throw MergeViolation(
                    "item \(key) differs after the final syncs: \(name(node)) holds \(String(describing: held[node])), "
                        + "\(name(0)) \(String(describing: held[0]))", diverged: true)
            }
        }
    }
}
