/// The commit this binary was built from. `Scripts/install` writes the hash here for its
/// release build and puts this file back afterwards; other builds say "unknown".
enum BuildCommit {
    static let hash: String? = nil
}
