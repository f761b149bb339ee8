/// "Did you mean …?" for a mistyped name: the closest of a few known names by edit distance.
public enum NameSuggestion {
    /// The known name closest to `typed` (case-insensitive Levenshtein distance), if it is close
    /// enough to be a typo: at most 2 edits, or a third of the longer name.
    public static func closest(to typed: String, among names: [String]) -> String? {
        let typed = Array(typed.lowercased())
        var best: (name: String, distance: Int)?
        for name in names {
            let candidate = Array(name.lowercased())
            let distance = editDistance(typed, candidate)
            let allowed = max(2, max(typed.count, candidate.count) / 3)
            guard distance <= allowed else { continue }
            if best == nil || distance < best!.distance { best = (name, distance) }
        }
        return best?.name
    }

    /// Levenshtein distance, with a transposition ("primray") counted as one edit.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
