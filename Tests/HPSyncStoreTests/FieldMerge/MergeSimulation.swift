import HPSyncCrypto
import HPSyncModel
import HPSyncTesting

/// Three nodes that edit, delete and revive items and sync whole item states by the field
/// merge, with skewed clocks stamping through the hybrid-logical-clock rule; beside them, an
/// oracle that remembers every edit and which edits each node knew of when it made one.
/// Optionally one node is a version-4 peer (Protocol.md 5.9 "Older peers"): it holds whole
/// records, edits whole records, and every sync with it is record-level; the other nodes keep
/// each state's joined flag and restamp their joined items before they send to it.
struct MergeSimulation {
    struct Node {
        var id: NodeID
        /// A version-4 peer: whole records only (its states are always `isWholeRecord`).
        var older = false
        /// Milliseconds this node's clock is ahead (negative: behind) of the true time.
        var skew: Int64
        var highest = VersionStamp.zero
        var states: [ItemKey: ItemMergeState] = [:]
        /// The joined flag of each state (Protocol.md 5.9 "Older peers"); absent is false.
        var joined: Set<ItemKey> = []
        /// The edits (by index in `edits`) this node knows of, per key and field: what it held
        /// or heard of through any sync, whether or not its state still holds them.
        var known: [FieldSlot: Set<Int>] = [:]
    }

    struct FieldSlot: Hashable {
        var key: ItemKey
        var field: ItemField
    }

    struct Edit {
        var slot: FieldSlot
        var version: Version
        var value: FieldContent
        /// The edits of the same slot its node knew of when it made it.
        var knewOf: Set<Int>
        /// The version of the field its node held: the candidate's base.
        var base: Version?
    }

    enum Topology: CaseIterable { case mesh, line, hub }

    var nodes: [Node]
    let keys: [ItemKey]
    let topology: Topology
    var now: Int64 = 1_700_000_000_000
    var edits: [Edit] = []
    var deletions: [ItemKey: [Version]] = [:]
    var counts = MergeCounts()
    var generator: SplitMix64

    /// With `olderPeer`, one node chosen at random (a hub's centre, a line's middle or an end)
    /// is a version-4 peer.
    init(seed: UInt64, olderPeer: Bool = false) {
        var generator = SplitMix64(seed: seed)
        let ids = (0..<3).map { NodeID(certificateDER: Array("merge node \($0)".utf8)) }
        var nodes: [Node] = []
        for id in ids { nodes.append(Node(id: id, skew: Int64.random(in: -3_000...3_000, using: &generator))) }
        if olderPeer { nodes[Int.random(in: 0..<3, using: &generator)].older = true }
        self.nodes = nodes
        keys = [ItemKey.random(using: &generator), ItemKey.random(using: &generator)]
        topology = Topology.allCases.randomElement(using: &generator)!
        self.generator = generator
    }

    var hasOlderPeer: Bool { nodes.contains(where: \.older) }

    /// The pairs that sync in this topology.
    var edges: [(Int, Int)] {
        switch topology {
        case .mesh: [(0, 1), (1, 2), (0, 2)]
        case .line: [(0, 1), (1, 2)]
        case .hub: [(0, 1), (0, 2)]
        }
    }

    /// One random step: time passes, then an edit, a deletion or a sync.
    mutating func step() throws {
        now += Int64.random(in: 0...40, using: &generator)
        let roll = Int.random(in: 0..<10, using: &generator)
        let node = Int.random(in: 0..<3, using: &generator)
        let key = keys.randomElement(using: &generator)!
        switch roll {
        case 0..<4: try edit(node: node, key: key)
        case 4: try delete(node: node, key: key)
        default:
            let (one, other) = edges.randomElement(using: &generator)!
            if Bool.random(using: &generator) { try sync(from: one, to: other) } else { try sync(from: other, to: one) }
        }
    }

    /// Syncs along every edge, both ways, until nothing changes (the topology's diameter
    /// bounds it); returns the number of rounds.
    mutating func settle() throws -> Int {
        for round in 1...6 {
            let before = nodes.map(\.states)
            let flagsBefore = nodes.map(\.joined)
            for (one, other) in edges {
                try sync(from: one, to: other)
                try sync(from: other, to: one)
            }
            if nodes.map(\.states) == before, nodes.map(\.joined) == flagsBefore { return round }
        }
        return 7
    }

    /// The next stamp of `node`: above its clock's reading and everything it has seen.
    mutating func stamp(_ node: Int) -> Version {
        let clock = VersionStamp(milliseconds: UInt64(now + nodes[node].skew))
        let next = max(clock, VersionStamp(rawValue: nodes[node].highest.rawValue + 1))
        nodes[node].highest = next
        return Version(stamp: next, origin: nodes[node].id)
    }

    mutating func edit(node: Int, key: ItemKey) throws {
        guard let state = nodes[node].states[key] else {
            // Only the first node to touch a key creates it: keys are random UUIDs.
            guard !edits.contains(where: { $0.slot.key == key }) else { return }
            let version = stamp(node)
            let item = Item(
                key: key, name: pick(Self.names), serialNumber: pick(Self.serials),
                valueInDollars: pick(Self.values), dateCreatedMilliseconds: pick(Self.dates),
                image: pick(Self.photos), version: version)
            let created = ItemMergeState(record: item)
            nodes[node].states[key] = created
            nodes[node].joined.remove(key)
            for field in ItemField.allCases { record(node: node, key: key, field: field, version: version, base: nil) }
            counts.edits += 1
            return
        }
        var change = FieldEdit()
        var fields: [ItemField] = []
        // A tombstone without fields (a version-4 peer's) is revived by a whole record, as
        // `restoreFromTrash` writes one (the store edits live items only).
        let restore =
            state.isDeleted && (nodes[node].older || state.fieldVersion == nil || Bool.random(using: &generator))
        for field in ItemField.allCases where restore || Int.random(in: 0..<5, using: &generator) == 0 {
            fields.append(field)
        }
        if fields.isEmpty { fields = [ItemField.allCases.randomElement(using: &generator)!] }
        for field in fields {
            switch field {
            case .name: change.name = pick(Self.names)
            case .serialNumber: change.serialNumber = .some(pick(Self.serials))
            case .valueInDollars: change.valueInDollars = pick(Self.values)
            case .dateCreated: change.dateCreated = pick(Self.dates)
            case .photo: change.photo = .some(pick(Self.photos))
            }
        }
        let version = stamp(node)
        var edited = state
        try edited.apply(change, at: version)
        if state.isDeleted && !edited.isDeleted { counts.revivals += 1 }
        // A local edit makes the record of its version: never joined.
        nodes[node].joined.remove(key)
        if nodes[node].older {
            // A whole record: every field set at this version, its base unknown.
            nodes[node].states[key] = ItemMergeState(record: edited.item)
            for field in ItemField.allCases { record(node: node, key: key, field: field, version: version, base: nil) }
            counts.edits += 1
            counts.olderEdits += 1
            return
        }
        nodes[node].states[key] = edited
        for field in fields {
            let before = Self.candidates(of: field, in: state)
            if before.count > 1 { counts.resolved += 1 }
            record(node: node, key: key, field: field, version: version, base: before.first?.version)
        }
        counts.edits += 1
    }

    /// Remembers the edit of `field` at `version` that `node` just made, with what it knew.
    private mutating func record(node: Int, key: ItemKey, field: ItemField, version: Version, base: Version?) {
        let slot = FieldSlot(key: key, field: field)
        let value = Self.candidates(of: field, in: nodes[node].states[key]!)[0].value
        let knewOf = nodes[node].known[slot] ?? []
        edits.append(Edit(slot: slot, version: version, value: value, knewOf: knewOf, base: base))
        nodes[node].known[slot, default: []].insert(edits.count - 1)
    }

    mutating func delete(node: Int, key: ItemKey) throws {
        guard var state = nodes[node].states[key], !state.isDeleted else { return }
        let version = stamp(node)
        try state.delete(at: version)
        // A version-4 peer's tombstone keeps no fields.
        nodes[node].states[key] = nodes[node].older ? ItemMergeState(record: state.item) : state
        nodes[node].joined.remove(key)
        deletions[key, default: []].append(version)
        counts.deletions += 1
    }

    /// `target` pulls every item state of `source` and joins it into its own.
    mutating func sync(from source: Int, to target: Int) throws {
        counts.syncs += 1
        if nodes[source].older || nodes[target].older { return try syncRecords(from: source, to: target) }
        for (key, incoming) in nodes[source].states {
            nodes[target].highest = max(nodes[target].highest, Self.greatestStamp(in: incoming))
            let incomingFlag = nodes[source].joined.contains(key)
            guard let local = nodes[target].states[key] else {
                nodes[target].states[key] = incoming
                if incomingFlag { nodes[target].joined.insert(key) }
                continue
            }
            let joined = try local.joined(with: incoming)
            let flag = joined.isJoined(from: [(local, nodes[target].joined.contains(key)), (incoming, incomingFlag)])
            if flag { nodes[target].joined.insert(key) } else { nodes[target].joined.remove(key) }
            let listed = joined.conflicts.map { ConflictID($0) }
            if Set(listed).count != listed.count {
                throw MergeViolation("a conflict is listed twice on node \(target): \(joined.conflicts)")
            }
            if local.isDeleted && !joined.isDeleted { counts.revivals += 1 }
            let before = Set(local.conflicts.map { ConflictID($0) })
            counts.clashesSeen += joined.conflicts.filter { !before.contains(ConflictID($0)) }.count
            nodes[target].states[key] = joined
        }
        for (slot, known) in nodes[source].known { nodes[target].known[slot, default: []].formUnion(known) }
        if Int.random(in: 0..<8, using: &generator) == 0 { try checkAlgebra() }
    }

    /// A version-4 session: the source sends each item as a whole record (a version-5 node its
    /// fields' winners at the item's version, or a tombstone without fields); the target takes
    /// it whole when it is newer than what it holds, and keeps its own otherwise.
    ///
    /// A version-5 source first restamps its joined live items (`restampJoined`).
    mutating func syncRecords(from source: Int, to target: Int) throws {
        counts.recordSyncs += 1
        if !nodes[source].older { try restampJoined(source) }
        for (key, state) in nodes[source].states {
            let incoming = ItemMergeState(record: state.item)
            nodes[target].highest = max(nodes[target].highest, incoming.version.stamp)
            if let local = nodes[target].states[key], !(incoming.version > local.version) { continue }
            nodes[target].states[key] = incoming
            // A whole record from a record-level peer is the record of its version.
            nodes[target].joined.remove(key)
        }
        for (slot, known) in nodes[source].known { nodes[target].known[slot, default: []].formUnion(known) }
    }

    /// Restamps every joined live item of `node` (what a version-5 node does before it sends to
    /// a version-4 peer): an edit of every field, to the value it shows, at a new stamp.
    mutating func restampJoined(_ node: Int) throws {
        for key in nodes[node].joined.sorted(by: { $0.rawValue < $1.rawValue }) {
            nodes[node].joined.remove(key)
            let state = nodes[node].states[key]!
            // A joined tombstone cannot arise (Protocol.md 5.9): the property checks it.
            guard !state.isDeleted else { throw MergeViolation("node \(node) holds a joined tombstone of \(key)") }
            let version = stamp(node)
            nodes[node].states[key] = try state.restamped(at: version)
            for field in ItemField.allCases {
                let before = Self.candidates(of: field, in: state)
                record(node: node, key: key, field: field, version: version, base: before.first?.version)
            }
            counts.restamps += 1
        }
    }

    private mutating func pick<Value>(_ values: [Value]) -> Value { values.randomElement(using: &generator)! }

    static let names = ["Guitar", "Amp", "Piano", "Drum"]
    static let serials: [String?] = [nil, "SN-1", "SN-2"]
    static let values: [Int64] = [0, 100, 250, 999]
    static let dates: [Int64] = [1_000, 2_000, 3_000]
    static let photos: [ImageRef?] = [nil] + (1...2).map { seed in Fixtures.ref(Fixtures.png(UInt8(seed))) }
}

/// What the property exercised, over every history.
struct MergeCounts {
    var histories = 0
    var edits = 0
    var deletions = 0
    var revivals = 0
    var syncs = 0
    /// Conflicts a sync added to a node (each counted on every node it reached).
    var clashesSeen = 0
    /// Conflicts open at the end of a history (counted once, not per node).
    var clashesOpen = 0
    var resolved = 0
    var algebraChecks = 0
    /// With a version-4 peer: its whole-record edits, the record-level syncs, and the fields
    /// whose final value is not their latest edit's (what Protocol.md 5.9 says such a peer loses).
    var olderEdits = 0
    var recordSyncs = 0
    var fieldsLost = 0
    /// Joined items a version-5 node restamped before sending to the version-4 peer.
    var restamps = 0
    /// Histories whose nodes held different items after the final syncs (`MergeViolation.diverged`).
    var diverged = 0

    mutating func add(_ other: MergeCounts) {
        histories += other.histories
        edits += other.edits
        deletions += other.deletions
        revivals += other.revivals
        syncs += other.syncs
        clashesSeen += other.clashesSeen
        clashesOpen += other.clashesOpen
        resolved += other.resolved
        algebraChecks += other.algebraChecks
        olderEdits += other.olderEdits
        recordSyncs += other.recordSyncs
        fieldsLost += other.fieldsLost
        restamps += other.restamps
        diverged += other.diverged
    }
}

/// A conflict's identity: its key, field and losing version.
struct ConflictID: Hashable {
    var key: ItemKey
    var field: ItemField
    var losing: Version

    init(_ conflict: FieldConflict) {
        key = conflict.key
        field = conflict.field
        losing = conflict.losingVersion
    }
}
