/// The first elements of a list that may grow to millions, and exactly how many there were.
///
/// A report keeps the keys a session changed so that a person or a script can see which ones;
/// a million-item pull would otherwise hold a million keys (about 100 MB) only to print a count.
public struct CappedList<Element: Sendable>: Sendable {
    /// How many elements a list keeps unless told otherwise.
    public static var defaultLimit: Int { 1_000 }

    /// How many elements are kept at most.
    public let limit: Int
    /// How many elements were appended, kept or not.
    public private(set) var count = 0
    /// The first `limit` elements appended, in order.
    public private(set) var kept: [Element] = []
    /// How many of the elements were only counted (`countUnlisted`): a peer gave no identity.
    public private(set) var unlisted = 0

    public init(limit: Int = defaultLimit) {
        precondition(limit >= 0, "a list cannot keep a negative number of elements")
        self.limit = limit
    }

    public init(_ elements: some Collection<Element>, limit: Int = defaultLimit) {
        self.init(limit: limit)
        append(contentsOf: elements)
    }

    public var isEmpty: Bool { count == 0 }

    /// How many elements were counted but not kept.
    public var omitted: Int { count - kept.count }

    /// How many elements were known but not kept, the list being full.
    public var cut: Int { omitted - unlisted }

    public mutating func append(_ element: Element) {
        count += 1
        if kept.count < limit { kept.append(element) }
    }

    public mutating func append(contentsOf elements: some Collection<Element>) {
        count += elements.count
        let room = limit - kept.count
        if room > 0 { kept.append(contentsOf: elements.prefix(room)) }
    }

    /// Counts `count` elements whose identity is not known (a peer reported only a number).
    public mutating func countUnlisted(_ count: Int) {
        self.count += max(0, count)
        unlisted += max(0, count)
    }

    public static func += (list: inout CappedList, elements: some Collection<Element>) {
        list.append(contentsOf: elements)
    }
}

extension CappedList: Equatable where Element: Equatable {}
