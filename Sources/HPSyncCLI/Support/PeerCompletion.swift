import ArgumentParser
import Foundation
import HPSyncStore
import Logging

/// Shell completion of peer names (`pull`, `push`, `sync`, `peer rm`, `peer set`,
/// `status --peer`): the shell runs hp-sync with the words typed so far, and this lists the peers
/// of the store those words name (`--store DIR` anywhere, else the default store).
enum PeerCompletion {
    static let kind = CompletionKind.custom { words, _, prefix in names(words: words, prefix: prefix) }

    static func names(words: [String], prefix: String) -> [String] {
        var path: String?
        for (index, word) in words.enumerated() {
            if word == "--store", index + 1 < words.count { path = words[index + 1] }
            if word.hasPrefix("--store=") { path = String(word.dropFirst("--store=".count)) }
        }
        let directory = StoreOptions.storeURL(path)
        let quiet = Logger(label: "hp-sync-completion") { _ in SwiftLogNoOpLogHandler() }
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("store.sqlite").path),
            let peers = try? Store.open(at: directory, logger: quiet).peers()
        else { return [] }
        return peers.map(\.name).filter { $0.hasPrefix(prefix) }
    }
}
